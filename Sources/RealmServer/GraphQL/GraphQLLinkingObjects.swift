import GraphQL
import RealmAdapter

/// The objects that link to an object, in the legacy GraphQL service's shape:
/// - every object type has `_linkingObjects(objectType:, property:, query:, sortBy:, descending:,
///   skip:, take:)`, the objects of `objectType` whose link (or list of links) `property` points
///   at it, answered as the union `_LinkingObjects` of the `<Type>Collection` types
///   (`{ count items }`: how many there are in all, and the page asked for);
/// - a `linkingObjects` property of the Realm's schema is a field listing those objects.
///
/// Both are filtered, sorted and paged by SQLite, like the plural queries.
enum GraphQLLinkingObjects {
    /// One page of linking objects, and how many there are in all.
    struct Collection: Sendable {
        let objectType: String
        let count: Int
        let items: [RealmObject]
    }

    /// The union's name: a type of the Realm cannot take it (names starting with `_` are left
    /// to the generated schema).
    static let union = "_LinkingObjects"

    /// `<Type>Collection` for each type (unless the Realm has a type of that name), and their union.
    static func make(_ types: [ObjectSchema], taken: Set<String>, _ box: ObjectTypes) throws {
        var members: [GraphQLObjectType] = []
        for t in types where !taken.contains(t.name + "Collection") {
            let object = box.objects[t.name]!
            let collection = try GraphQLObjectType(
                name: t.name + "Collection",
                description: "Some \(t.name) objects: how many in all, and one page of them.",
                fields: [
                    "count": GraphQLField(
                        type: GraphQLNonNull(GraphQLInt),
                        resolve: { source, _, _, _ in (source as! Collection).count }),
                    "items": GraphQLField(
                        type: GraphQLNonNull(GraphQLList(GraphQLNonNull(object))),
                        resolve: { source, _, _, _ in (source as! Collection).items }),
                ])
            members.append(collection)
        }
        guard !members.isEmpty else { return }
        box.collections = try GraphQLUnionType(
            name: union, description: "The objects linking to an object: a <Type>Collection.",
            resolveType: { value, _ in (value as! Collection).objectType + "Collection" }, types: members)
        box.collectionTypes = Set(members.map(\.name))
    }

    /// `_linkingObjects`'s arguments: which links, then a plural query's.
    static let arguments: GraphQLArgumentConfigMap = {
        var args: GraphQLArgumentConfigMap = [
            "objectType": GraphQLArgument(type: GraphQLNonNull(GraphQLString)),
            "property": GraphQLArgument(type: GraphQLNonNull(GraphQLString)),
        ]
        args.merge(RealmGraphQLSchema.pageArguments) { $1 }
        return args
    }()

    /// The `_linkingObjects` field of `t`, when any collection type exists.
    static func field(of t: ObjectSchema, _ box: ObjectTypes) -> GraphQLField? {
        guard let union = box.collections else { return nil }
        return GraphQLField(
            type: union,
            description: "The objects of objectType whose link (or list) property points at this \(t.name).",
            args: arguments,
            resolve: { source, args, context, _ in
                let c = context as! GraphQLContext
                let origin = args["objectType"].string ?? ""
                let property = args["property"].string ?? ""
                guard box.collectionTypes.contains(origin + "Collection"), let o = c.schema[type: origin],
                    let p = o.properties.first(where: { $0.name == property }), p.type.linkTarget == t.name
                else {
                    throw GraphQLError(
                        message: "\(origin).\(property) is not a link or list of links to \(t.name) in this Realm.")
                }
                let q = try RealmGraphQLSchema.page(args, linkingTo: property, source)
                let (items, count) = try c.page(origin, q)
                try c.budget.spend(items.count)
                return Collection(objectType: origin, count: count, items: items)
            })
    }

    /// The field of a `linkingObjects` property: the objects of `origin` linking here through `property`.
    static func field(origin: String, property: String, _ box: ObjectTypes) -> GraphQLField? {
        guard let object = box.objects[origin] else { return nil }
        return GraphQLField(
            type: GraphQLNonNull(GraphQLList(GraphQLNonNull(object))),
            resolve: { source, _, context, _ in
                let c = context as! GraphQLContext
                let q = ObjectQuery(linkingTo: .init(property: property, identity: (source as! RealmObject).identity))
                let objects = try c.objects(origin, q)
                try c.budget.spend(objects.count)
                return objects
            })
    }
}
