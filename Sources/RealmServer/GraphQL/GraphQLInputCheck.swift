import GraphQL
import RealmAdapter

/// A request's inputs checked strictly against their GraphQL types, before anything runs.
///
/// GraphQLSwift 4.3 refuses a literal of the wrong type naming neither the field nor the
/// argument (`Boolean cannot represent a non-boolean value: 1`), and coerces variables leniently:
/// `1` given for a Boolean was taken for true, and stored. Here a literal's error names the field
/// and the argument's path (`createTask(input.done): expected Boolean, found an integer`), and a
/// variable's the variable and its path (`$t.done: …`). A Boolean takes only true or false, an
/// Int only an integral number of 32 bits, a String only a string. What is not checked here
/// (unknown arguments, variables used where their type does not fit) GraphQL's validation is.
enum GraphQLInputCheck {
    /// Errors for the literal arguments of the top-level fields of `document`'s operations.
    static func literals(_ document: Document, _ schema: GraphQLSchema) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        for case let operation as OperationDefinition in document.definitions {
            let root: GraphQLObjectType? =
                switch operation.operation {
                case .query: schema.queryType
                case .mutation: schema.mutationType
                case .subscription: schema.subscriptionType
                }
            guard let fields = try? root?.fields() else { continue }
            for case let field as Field in operation.selectionSet.selections {
                guard let definition = fields[field.name.value] else { continue }
                for argument in field.arguments {
                    guard let type = definition.args[argument.name.value]?.type else { continue }
                    let given = Given(argument.value)
                    if let problem = Expected(type).problem(with: given, at: argument.name.value) {
                        errors.append(
                            GraphQLError(
                                message: "\(field.name.value)(\(problem.path)): \(problem.text)", nodes: [argument]))
                    }
                }
            }
        }
        return errors
    }

    /// Errors for `variables` against the definitions of the operation that runs (`name`, or
    /// the document's only one).
    static func variables(
        _ document: Document,
        operation name: String?,
        _ variables: [String: JSONValue],
        _ schema: GraphQLSchema
    ) -> [GraphQLError] {
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        let chosen = name.map { n in operations.first { $0.name?.value == n } } ?? operations.first
        guard let operation = chosen, name != nil || operations.count == 1 else { return [] }
        var errors: [GraphQLError] = []
        for definition in operation.variableDefinitions {
            let variable = definition.variable.name.value
            guard let value = variables[variable] else { continue }
            let expected = Expected(definition.type, schema)
            if let problem = expected.problem(with: Given(value), at: variable) {
                errors.append(GraphQLError(message: "$\(problem.path): \(problem.text)", nodes: [definition]))
            }
        }
        return errors
    }
}
