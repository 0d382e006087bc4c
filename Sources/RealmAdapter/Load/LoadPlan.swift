/// The order in which ``Loader`` loads tables: the targets of links before the tables that
/// link to them, so that every link finds its target. Links that cannot be ordered that way
/// (a table linking to itself, or tables linking to each other) are set in a second pass over
/// the table, once every object exists.
public struct LoadPlan: Sendable {
    public enum Step: Sendable {
        /// Load the objects of a table, leaving out the named link properties.
        case objects(TableMapping, deferring: [String])
        /// Set the deferred link properties of a table's objects.
        case links(TableMapping, properties: [String])
        /// Fill a list of links from its link table.
        case list(TableMapping, LinkListMapping)
    }

    public let steps: [Step]
    /// The tables loaded, in load order.
    public let tables: [TableMapping]

    /// - Parameter only: table or type names to load (nil: all mapped tables).
    /// - Throws: `invalidConfiguration` naming a name that is neither a mapped table nor a type.
    public init(_ mapping: Mapping, only: [String]? = nil) throws {
        var selected = mapping.tables
        if let only {
            let unknown = only.filter { n in mapping.table(named: n) == nil && mapping.table(forType: n) == nil }
            guard unknown.isEmpty else {
                throw RealmAdapterError.unknownTables(unknown, mapped: mapping.tables.map(\.table))
            }
            let names = Set(only)
            selected = mapping.tables.filter { names.contains($0.table) || names.contains($0.type.name) }
        }
        let selectedTypes = Set(selected.map(\.type.name))
        func targets(_ t: TableMapping) -> [String] {
            t.columns.compactMap { c in
                if case .link(let target, _) = c.kind, target != t.type.name, selectedTypes.contains(target) {
                    target
                } else {
                    nil
                }
            }
        }
        // Targets first; when only cycles remain, the first remaining table in schema order goes next.
        var order: [TableMapping] = []
        var loaded = Set<String>()
        var remaining = selected
        while !remaining.isEmpty {
            let i = remaining.firstIndex { targets($0).allSatisfy(loaded.contains) } ?? 0
            let t = remaining.remove(at: i)
            order.append(t)
            loaded.insert(t.type.name)
        }
        var steps: [Step] = []
        var deferred: [(TableMapping, [String])] = []
        var before = Set<String>()
        for t in order {
            let keyParts = Set(t.compoundKey?.map(\.property) ?? [])
            let later = t.columns.compactMap { c -> String? in
                guard case .link(let target, _) = c.kind, !keyParts.contains(c.property.name),
                    target == t.type.name || (selectedTypes.contains(target) && !before.contains(target))
                else { return nil }
                return c.property.name
            }
            steps.append(.objects(t, deferring: later))
            if !later.isEmpty { deferred.append((t, later)) }
            before.insert(t.type.name)
        }
        steps += deferred.map { .links($0.0, properties: $0.1) }
        steps += order.flatMap { t in t.linkLists.map { Step.list(t, $0) } }
        self.steps = steps
        tables = order
    }
}
