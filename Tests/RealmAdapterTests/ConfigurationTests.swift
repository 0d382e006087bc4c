import Foundation
import PostgresConnector
import Testing

@testable import RealmAdapter

@Suite struct ConfigurationTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples/config").standardizedFileURL.path

    func decode(_ text: String, env: [String: String] = ["PGPASSWORD": "hunter2"]) throws -> Configuration {
        try Configuration(json: try JSONValue(parsing: text), environment: env, connectors: .postgres)
    }

    func minimal(_ extra: String = "", database: String = #""database": {"type": "postgres", "host": "db"}"#) -> String
    {
        #"{"realm": {"path": "/SQLDemo"}, "schema": [{"name": "Bus", "primaryKey": "id", "properties": {"id": "int", "plate": "string?"}}], "#
            + database + extra + "}"
    }

    @Test func loadsTheExamples() throws {
        let bus = try Configuration.load(
            file: Self.examples + "/bus-postgres.json", environment: ["PGPASSWORD": "hunter2"], connectors: .postgres)
        #expect(bus.schema.types.map(\.name) == ["Bus", "Driver", "Schedule", "Route"])
        #expect(bus.database?.password?.value == "hunter2")
        #expect(bus.database?.type == "postgres")
        #expect(bus.realm.store.hasSuffix("/demo-store") && bus.realm.store.hasPrefix("/"))
        #expect(bus.realm.effectivePathRegex == "^/SQLDemo$")
        #expect(bus.mapping.typeName(forTable: "driver") == "Driver")
        #expect(bus.mapping.tableName(forType: "Driver") == "driver")
        let passports = try Configuration.load(
            file: Self.examples + "/realm-id-passports.json", environment: ["PGPASSWORD": "x"], connectors: .postgres)
        let person = try Mapping(passports).table(forType: "Person")
        #expect(
            person?.keyColumn == "RealmId" && person?.databaseKey?.column == "PersonId"
                && person?.linkLists.first?.ownerKeyType == .int)
        let tasks = try Configuration.load(
            file: Self.examples + "/per-user-tasks.json", environment: ["PGPASSWORD": "x"], connectors: .postgres)
        #expect(tasks.realm.path.fields == ["userID"])
        #expect(tasks.mapping.propertyName(forColumn: "task_title", ofType: "Task") == "title")
        #expect(tasks.mapping.columnName(forProperty: "title", ofType: "Task") == "task_title")
        #expect(tasks.mapping.ignoreProperties["Task"] == ["localNote"])
    }

    @Test func defaultsAreDocumentedValues() throws {
        let c = try decode(minimal())
        #expect(c.realm.store == "./realms")
        #expect(c.realm.adapterName == "realm-adapter")
        #expect(c.loader.batchSize == 1000)
        #expect(c.database?.schema == "public")
        #expect(c.database?.retry == DatabaseConfiguration.Retry())
        #expect(c.database?.retry.delay(beforeAttempt: 1) == .zero)
        #expect(c.database?.retry.delay(beforeAttempt: 3) == .milliseconds(1000))
        #expect(c.logLevel == .info)
        #expect(c.ignoreSQLErrors == false)
    }

    @Test(arguments: [
        (#", "loader": {"batchSize": "big"}"#, "loader.batchSize: expected an integer, found a string"),
        (#", "loader": {"batchsize": 10}"#, "loader.batchsize: unknown key"),
        (#", "logLevel": "loud""#, "logLevel: unknown level 'loud'"),
        (#", "colour": true"#, "colour: unknown key"),
        (#", "mapping": {"tables": {"buses": "Vehicle"}}"#, "'Vehicle', which is not a type in schema"),
        (
            #", "mapping": {"columns": {"Bus": {"plate_no": "plateNumber"}}}"#,
            "mapping.columns.Bus.plate_no: type 'Bus' has no property 'plateNumber'"
        ),
        (#", "mapping": {"convert": {"Bus": {"plate": "rot13"}}}"#, "unknown converter 'rot13'"),
        (
            #", "mapping": {"customTypes": {"mpaa_rating": "enum"}}"#,
            "mapping.customTypes.mpaa_rating: unknown Realm type 'enum'"
        ),
        (#", "mapping": {"ignoreProperties": {"Bus": ["id"]}}"#, "primary key 'id' cannot be ignored"),
        (#", "mapping": {"compoundPrimaryKeys": {"Bus": [{"property": "id"}]}}"#, "at least two key parts"),
    ])
    func errorsNameTheJSONPath(extra: String, message: String) {
        #expect {
            try decode(minimal(extra))
        } throws: { error in
            (error as? RealmAdapterError)?.code == .invalidConfiguration && "\(error)".contains(message)
        }
    }

    @Test(arguments: [
        (#""database": {"type": "oracle", "host": "db"}"#, "database.type: unknown database type 'oracle'"),
        (
            #""database": {"type": "postgres", "host": "db", "port": 99999}"#,
            "database.port: must be between 1 and 65535"
        ),
        (#""database": {"type": "postgres"}"#, "give url or host"),
        (
            #""database": {"type": "postgres", "host": "db", "retry": {"attempts": 3, "backof": 2}}"#,
            "database.retry.backof: unknown key"
        ),
        (
            #""database": {"type": "postgres", "host": "db", "sslmode": "maybe"}"#,
            "database.sslmode: unknown mode 'maybe'"
        ),
        (
            #""database": {"type": "postgres", "host": "db", "passwordEnv": "NOT_SET_ANYWHERE"}"#,
            "environment variable NOT_SET_ANYWHERE is not set"
        ),
        (
            #""database": {"type": "postgres", "host": "db", "password": "x", "passwordEnv": "PGPASSWORD"}"#,
            "either password or passwordEnv"
        ),
    ])
    func databaseErrors(database: String, message: String) {
        #expect {
            try decode(minimal(database: database))
        } throws: { "\($0)".contains(message) }
    }

    @Test func schemaAndRealmErrorsNameTheirPlace() {
        #expect {
            try decode(#"{"realm": {"path": "/a"}, "schema": [{"name": "A", "properties": {"b": "Nope"}}]}"#)
        } throws: { "\($0)".contains("A.b: links to unknown type 'Nope'") && "\($0)".contains("schema[0]") }
        #expect {
            try decode(#"{"realm": {"path": "no-slash"}, "schema": []}"#)
        } throws: { "\($0)".contains("realm.path") }
        #expect {
            try decode(#"{"realm": {"path": "/{user/x"}, "schema": []}"#)
        } throws: { "\($0)".contains("not closed") }
        #expect {
            try decode(#"{"realm": {"path": "/a", "pathRegex": "^/b$"}, "schema": []}"#)
        } throws: { "\($0)".contains("does not match realm.path") }
        #expect {
            try decode(#"{"schema": []}"#)
        } throws: { "\($0)".contains("realm: is required") }
    }

    @Test func thePasswordIsNeverPrinted() throws {
        let c = try decode(
            minimal(database: #""database": {"type": "postgres", "url": "postgresql://u:topsecret@db:5433/app"}"#))
        let d = try decode(minimal(database: #""database": {"type": "postgres", "host": "db", "password": "hunter2"}"#))
        let everything = "\(c) \(String(reflecting: c)) \(c.database!.displayTarget) \(d) \(String(reflecting: d))"
        #expect(!everything.contains("hunter2"))
        #expect(!everything.contains("topsecret"))
        #expect(c.database?.displayTarget == "db:5433/app")
    }

    @Test func pathTemplatesRenderAndExtract() throws {
        let t = try RealmPathTemplate("/{userID}/myRealm")
        #expect(t.render { $0 == "userID" ? "u42" : nil } == "/u42/myRealm")
        #expect(t.render { _ in "a/b" } == nil)
        #expect(t.extract("/u42/myRealm") == ["userID": "u42"])
        #expect(t.extract("/u42/other") == nil)
        #expect(t.extract("/a/b/myRealm") == nil)
        #expect(try PathFilter(t.defaultRegex).matches("/u42/myRealm"))
        let two = try RealmPathTemplate("/org-{org}/{team}.tasks")
        #expect(two.extract("/org-7/red.tasks") == ["org": "7", "team": "red"])
        let twice = two.extract("/org-7/red.tasks.tasks")
        #expect(twice == ["org": "7", "team": "red"] || twice == nil)
        #expect(two.extract("/org-é😀/r.ed.tasks") == ["org": "é😀", "team": "r.ed"])
        #expect(two.extract("/org-é😀/red.tasks") == ["org": "é😀", "team": "red"])
        for misfit in ["/org-/red.tasks", "/org-7/.tasks", "/org-7/red.task"] { #expect(two.extract(misfit) == nil) }
        #expect(try RealmPathTemplate("/{a}-{b}/x").extract("/p-q-r/x") == ["a": "p", "b": "q-r"])
        #expect(try RealmPathTemplate("/SQLDemo").isLiteral)
    }
}

extension ConfigurationTests {
    /// A template's regex is matched byte by byte (a hand-off filters every Realm of the store);
    /// the answers are the regex engine's, which is the witness here.
    @Test func pathFiltersMatchAsTheRegexEngineDoes() throws {
        let templates = ["/{userID}/myRealm", "/org-{org}/{team}.tasks", "/{a}-{b}/x", "/SQLDemo", "/a+b/{c}(d)"]
        let patterns =
            templates.map { try! RealmPathTemplate($0).defaultRegex } + ["^/[^/]+/x", "/x$", ".*", "^/(.*?)/x$"]
        let paths = [
            "/u42/myRealm", "/u42/myRealm/", "/a/b/myRealm", "/myRealm", "//myRealm", "/u42/myRealmX",
            "/org-7/red.tasks",
            "/org-7/red.tasks.tasks", "/org-/red.tasks", "/org-7/.tasks", "/p-q-r/x", "/p-/x", "/-q/x", "/SQLDemo",
            "/SQLDemo\n", "/u42/myRealm\n", "/a+b/c(d)", "/a+b/(d)", "/aab/c(d)", "/é😀/myRealm", "", "/", "/x",
        ]
        for pattern in patterns {
            let filter = try PathFilter(pattern)
            let regex = try NSRegularExpression(pattern: pattern)
            for path in paths {
                let expected = regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil
                #expect(filter.matches(path) == expected, "\(pattern) on \(path)")
            }
        }
        for t in templates { #expect(PathFilter.pieces(of: try RealmPathTemplate(t).defaultRegex) != nil, "\(t)") }
        #expect(PathFilter.pieces(of: "^/(.*?)/x$") == nil)
    }
}

extension ConfigurationTests {
    @Test func aPasswordInTheURLMovesToTheSecret() throws {
        let c = try decode(
            minimal(database: #""database": {"type": "postgres", "url": "postgresql://u:top%40secret@db/app"}"#))
        #expect(c.database?.password?.value == "top@secret")
        #expect(c.database?.url == "postgresql://u@db/app")
    }
}

extension ConfigurationTests {
    /// libpq also reads a URL's query (`?host=…&port=…&password=…`): a password there moves to the
    /// secret as well, and messages name the host and port it gives (a probe's error named
    /// localhost:5432 for `postgresql:///db?host=127.0.0.1&port=1`).
    @Test func aURLsQueryCountsLikeItsOtherParts() throws {
        let c = try decode(
            minimal(
                database: #""database": {"type": "postgres", "url": "postgresql:///app?host=10.0.0.7&port=6432"#
                    + #"&password=s3cr%26t&sslmode=require"}"#))
        #expect(c.database?.password?.value == "s3cr&t")
        let everything = "\(c) \(String(reflecting: c)) \(c.database!.displayTarget) \(c.database?.url ?? "")"
        #expect(!everything.contains("s3cr"), "\(everything)")
        #expect(c.database?.displayTarget == "10.0.0.7:6432/app")
        #expect(c.database?.url == "postgresql:///app?host=10.0.0.7&port=6432&sslmode=require")
    }
}

extension ConfigurationTests {
    /// libpq's key=value form: the password moves to the secret, out of everything printed.
    @Test func aPasswordInKeywordFormMovesToTheSecret() throws {
        let url = #"host=db.example port=5433 user=app dbname=shop password='s3 cr\'et' sslmode=require"#
        let c = try decode(
            minimal(
                database: #""database": {"type": "postgres", "url": ""#
                    + url.replacingOccurrences(of: "\\", with: "\\\\") + #""}"#))
        #expect(c.database?.password?.value == "s3 cr'et")
        let everything = "\(c) \(String(reflecting: c)) \(c.database!.displayTarget) \(c.database?.url ?? "")"
        #expect(!everything.contains("cr'et") && !everything.contains("s3 cr"))
        #expect(c.database?.displayTarget == "db.example:5433/shop")
        #expect(c.database?.url == "host=db.example port=5433 user=app dbname=shop sslmode=require")
    }

    @Test(arguments: [
        ("not a url", "url"), ("mysql://u@db/app", "url"), ("host=db password='open", "url"), ("host=db port=x", "url"),
    ])
    func connectionStringsThatCannotWorkAreErrors(url: String, path: String) throws {
        #expect {
            try decode(minimal(database: #""database": {"type": "postgres", "url": "\#(url)"}"#))
        } throws: { error in
            let e = error as? RealmAdapterError
            return e?.context["json.path"] == "database.\(path)" && e.map { !"\($0)".contains("open") } == true
        }
    }

    /// The fields would send the URL's password to another server or user.
    @Test func aURLAndServerFieldsTogetherAreAnError() throws {
        for field in [#""host": "other""#, #""port": 5434"#, #""user": "someone""#] {
            #expect {
                try decode(
                    minimal(
                        database: #""database": {"type": "postgres", "url": "postgresql://u:pw@db/app", "# + field + "}"
                    ))
            } throws: { ($0 as? RealmAdapterError)?.message.contains("not both") == true }
        }
        // The database may still be named apart from the URL.
        let c = try decode(
            minimal(database: #""database": {"type": "postgres", "url": "postgresql://u@db/app", "database": "other"}"#)
        )
        #expect(c.database?.displayTarget == "db:5432/other")
    }
}

extension ConfigurationTests {
    /// `validate` passed connection keywords libpq refuses at the first connection: libpq's own
    /// parser checks them now, naming the keyword (the password never appears).
    @Test(arguments: [
        ("host=db dbname=app bogus=1", "bogus"),
        ("postgresql://u@db/app?sslmod=require", "sslmod"),
        ("host=db password='s3cr3t' nonsense=1", "nonsense"),
    ])
    func connectionKeywordsLibpqRefusesAreErrors(url: String, keyword: String) throws {
        let text = minimal(database: #""database": {"type": "postgres", "url": "\#(url)"}"#)
        let error = try #require(throws: RealmAdapterError.self) { try decode(text) }
        #expect(error.message.contains("database.url") && error.message.contains(keyword), "\(error.message)")
        #expect(!error.message.contains("s3cr3t"))
    }

    @Test func connectionStringsLibpqTakesPass() throws {
        for url in ["host=db port=5433 dbname=app sslmode=require", "postgresql://u@db:5433/app?sslmode=require"] {
            _ = try decode(minimal(database: #""database": {"type": "postgres", "url": "\#(url)"}"#))
        }
    }
}

extension ConfigurationTests {
    func withStore(_ realm: String) -> String {
        minimal().replacingOccurrences(
            of: #"{"realm": {"path": "/SQLDemo"}"#, with: #"{"realm": {"path": "/SQLDemo", "# + realm + "}")
    }

    /// `realm.store` may be a Postgres database: its password moves to a secret (from the URL or
    /// `storePasswordEnv`), and a file's directory is not put in front of it.
    @Test func aStoreURLKeepsItsPasswordSecret() throws {
        let c = try decode(withStore(#""store": "postgresql://u:top%40secret@db/realms""#))
        #expect(c.realm.store == "postgresql://u@db/realms")
        #expect(c.realm.storeIsDatabase)
        #expect(c.realm.storePassword?.value == "top@secret")
        #expect(!"\(c.realm)".contains("top"))
        let fromEnv = try decode(
            withStore(#""store": "postgres://u@db/realms", "storePasswordEnv": "PGPASSWORD""#))
        #expect(fromEnv.realm.storePassword?.value == "hunter2")
        let directory = try decode(withStore(#""store": "realms""#))
        #expect(!directory.realm.storeIsDatabase && directory.realm.storePassword == nil)

        let dir = NSTemporaryDirectory() + "realm-adapter-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try withStore(#""store": "postgresql://u@db/realms""#).write(
            toFile: dir + "/a.json", atomically: true, encoding: .utf8)
        #expect(
            try Configuration.load(file: dir + "/a.json", connectors: .postgres).realm.store
                == "postgresql://u@db/realms")
    }

    @Test(arguments: [
        (
            #""store": "postgresql://u@db/r", "storePasswordEnv": "NOT_SET_ANYWHERE""#,
            "realm.storePasswordEnv: the environment variable NOT_SET_ANYWHERE is not set"
        ),
        (
            #""store": "postgresql://u:x@db/r", "storePasswordEnv": "PGPASSWORD""#,
            "realm.storePasswordEnv: the store's URL has a password too"
        ),
        (#""store": "./realms", "storePasswordEnv": "PGPASSWORD""#, "realm.storePasswordEnv: the store is a directory"),
    ])
    func storeErrors(realm: String, message: String) {
        #expect {
            try decode(withStore(realm))
        } throws: { "\($0)".contains(message) }
    }
}
