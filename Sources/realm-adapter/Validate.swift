import ArgumentParser
import Foundation
import RealmAdapter

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a configuration file and show what would sync.",
        discussion: """
            Reads the JSON configuration, checks every section (schema, mapping, database, loader) \
            and prints a summary: where the Realms live, which Realms sync, which tables map to which \
            types, and how links and lists map. Nothing is connected to or written.

            Errors name the JSON path at fault, for example:
              error: database.retry.attempts: expected an integer, found a string.

            A minimal configuration:
              {
                "realm":    { "path": "/SQLDemo" },
                "database": { "type": "postgres", "host": "127.0.0.1", "database": "demo", "passwordEnv": "PGPASSWORD" },
                "schema":   [ { "name": "Bus", "primaryKey": "vehicle", "properties": { "vehicle": "int", "fleet_id": "string?" } } ]
              }
            """
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        try await reportingErrors {
            let (c, _) = try options.load()
            // What load and run build first: its errors (a type without a primary key, say) show here.
            if c.database != nil { _ = try Mapping(c) }
            print(Self.summary(c, file: options.config))
        }
    }

    static func summary(_ c: Configuration, file: String) -> String {
        var out: [String] = ["\(file): OK", ""]
        out.append("Realm store:     \(c.realm.store)")
        out.append(
            "Realm path:      \(c.realm.path)"
                + (c.realm.path.isLiteral ? "" : "  (one Realm per \(c.realm.path.fields.joined(separator: ", ")))"))
        out.append(
            "Realms synced:   \(c.realm.effectivePathRegex)"
                + (c.realm.pathRegex == nil ? "  (derived from the path)" : ""))
        out.append("Adapter name:    \(c.realm.adapterName)")
        if let d = c.database {
            let password =
                d.passwordEnv.map { "password from $\($0)" } ?? (d.password == nil ? "no password" : "password set")
            out.append("Database:        \(d.type) at \(d.displayTarget), schema \(d.schema), \(password)")
            var flags: [String] = []
            if d.createDatabase { flags.append("createDatabase") }
            if d.createSchema { flags.append("createSchema") }
            if d.applyRealmSchemaChanges { flags.append("applyRealmSchemaChanges") }
            flags += d.settings.summary
            if !flags.isEmpty { out.append("                 \(flags.joined(separator: ", "))") }
            out.append(
                "Retry:           \(d.retry.attempts == 0 ? "forever" : "\(d.retry.attempts) attempts"), "
                    + "\(d.retry.delayMs) ms doubling by \(d.retry.backoff) up to \(d.retry.maxDelayMs) ms"
            )
        } else {
            out.append("Database:        none (embedded store only)")
        }
        out.append(
            "Loader:          batches of \(c.loader.batchSize) rows; dangling foreign keys: "
                + "\(c.loader.danglingForeignKeys.rawValue)"
        )
        out.append(
            "On SQL errors:   \(c.ignoreSQLErrors ? "log, keep in the dead-letter record, go on" : "stop, keeping the change for retry")"
        )
        out.append("")
        out.append("Types (\(c.schema.types.count)):")
        for t in c.schema.types {
            let table = c.mapping.tableName(forType: t.name)
            var head = "  \(t.name)  ⇄  table \(table)"
            if let pk = t.primaryKey { head += ", primary key \(pk)" } else { head += ", no primary key (row keys)" }
            if let dpk = t.databasePrimaryKey { head += ", database key \(dpk)" }
            if let parts = c.mapping.compoundPrimaryKeys[t.name] {
                head += ", compound key (\(parts.map(\.dbColumn).joined(separator: ", ")))"
            }
            out.append(head)
            let ignored = c.mapping.ignoreProperties[t.name] ?? []
            for p in t.properties {
                let column = c.mapping.columnName(forProperty: p.name, ofType: t.name)
                var line = "    \(p.name): \(p.typeString)"
                switch p.type {
                case .scalar: line += column == p.name ? "" : "  ⇄ column \(column)"
                case .link(let target): line += "  ⇄ foreign key \(column) → \(c.mapping.tableName(forType: target))"
                case .list(.link): line += "  ⇄ link table (oid, idx, target)"
                case .list(.scalar): line += "  ⇄ array column \(column)"
                case .linkingObjects(let o, let prop):
                    line = "    \(p.name): backlinks from \(o).\(prop) (computed, not synced)"
                }
                if let conv = c.mapping.convert[t.name]?[p.name] { line += "  [convert: \(conv.rawValue)]" }
                if ignored.contains(p.name) { line += "  [ignored: Realm only]" }
                out.append(line)
            }
        }
        if !c.mapping.customTypes.isEmpty {
            out.append("")
            out.append(
                "Custom database types: "
                    + c.mapping.customTypes.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value.rawValue)" }
                    .joined(separator: ", "))
        }
        return out.joined(separator: "\n")
    }
}
