import Foundation
import RealmAdapter
import Testing

@testable import SQLServerConnector

/// What the first contact with a real TDS server (Babelfish 4.2.0, issue 42) showed, each as
/// the catalog answer or the statement text that went wrong, so no server is needed.
@Suite struct SQLServerFirstContactTests {
    /// Babelfish's answers for the legacy SQLSyncDemo tables and a Passport keyed by an IDENTITY:
    /// `INFORMATION_SCHEMA.COLUMNS` keeps the names' case, `KEY_COLUMN_USAGE` and
    /// `sys.foreign_key_columns` (through OBJECT_NAME and COL_NAME) answer them lower-cased.
    static let demo = SQLServerIntrospection.describe(
        columns: [
            ["Address", "AddressId", "int", 0, 0, 0], ["Address", "Street", "nvarchar", 1, 0, 0],
            ["Customer", "CustomerId", "int", 0, 0, 0], ["Customer", "Name", "nvarchar", 0, 0, 0],
            ["Customer", "AddressId", "int", 1, 0, 0], ["Customer", "Balance", "money", 1, 0, 0],
            ["Estimate", "EstimateId", "int", 0, 0, 0], ["Estimate", "CustomerId", "int", 0, 0, 0],
            ["Passport", "PassportId", "int", 0, 1, 0], ["Passport", "Number", "nvarchar", 0, 0, 0],
        ],
        keys: [
            ["address", "address_pkey", "PRIMARY KEY", "addressid"],
            ["customer", "customer_pkey", "PRIMARY KEY", "customerid"],
            ["customer", "customer_addressid_fkey", "FOREIGN KEY", "addressid"],
            ["estimate", "estimate_pkey", "PRIMARY KEY", "estimateid"],
            ["passport", "passport_pkey", "PRIMARY KEY", "passportid"],
        ],
        foreignKeys: [
            ["estimate", "customerid", "customer", "customerid"], ["customer", "addressid", "address", "addressid"],
        ],
        schema: "dbo", databaseName: "sqlsyncdemo")

    static func starting(_ d: DatabaseDescription) -> StartingConfiguration {
        StartingConfiguration(
            d, factory: SQLServerConnectorFactory(), url: "sqlserver://sa@db:1433/sqlsyncdemo",
            passwordEnv: SQLServerConnectorFactory().passwordVariable)
    }

    @Test func catalogNamesMatchWhateverTheirCase() {
        let d = Self.demo
        #expect(d.table("Customer")?.primaryKey == ["CustomerId"], "named as INFORMATION_SCHEMA.COLUMNS names it")
        #expect(
            d.table("Estimate")?.foreignKeys == [
                .init(column: "CustomerId", table: "Customer", referencedColumn: "CustomerId")
            ])
        #expect(
            d.table("Customer")?.foreignKeys == [
                .init(column: "AddressId", table: "Address", referencedColumn: "AddressId")
            ])
        let s = Self.starting(d)
        #expect(!s.notes.contains { $0.contains("no primary key") }, "\(s.notes)")
        let names = s.json["schema"].flatMap { v -> [String]? in
            guard case .array(let types) = v else { return nil }
            return types.compactMap { if case .string(let n)? = $0["name"] { n } else { nil } }
        }
        #expect(names == ["Address", "Customer", "Estimate", "Passport"])
        let estimate = Self.type("Estimate", in: s)
        #expect(estimate?["properties"]?["CustomerId"] == .string("Customer?"), "a link")
    }

    static func type(_ name: String, in s: StartingConfiguration) -> JSONValue? {
        guard case .array(let types)? = s.json["schema"] else { return nil }
        return types.first { $0["name"] == .string(name) }
    }

    /// A Realm cannot choose an IDENTITY's value (Msg 544): the legacy layout keys it by a RealmId.
    @Test func anIdentityKeyBecomesTheDatabasePrimaryKeyBehindARealmId() {
        let s = Self.starting(Self.demo)
        let passport = Self.type("Passport", in: s)
        #expect(passport?["primaryKey"] == .string("RealmId"))
        #expect(passport?["databasePrimaryKey"] == .string("PassportId"))
        #expect(passport?["properties"]?["RealmId"] == .string("string"))
        #expect(passport?["properties"]?["PassportId"] == .string("int?"))
        #expect(s.notes.contains { $0.hasPrefix("Passport: its key PassportId is an IDENTITY") }, "\(s.notes)")
        let customer = Self.type("Customer", in: s)
        #expect(customer?["primaryKey"] == .string("CustomerId"), "a key without IDENTITY stays as it is")
        #expect(customer?["databasePrimaryKey"] == nil)
    }

    @Test func initNamesSQLServersPasswordVariableNotPostgres() {
        #expect(SQLServerConnectorFactory().passwordVariable == "SQLSERVER_PASSWORD")
        let database = Self.starting(Self.demo).json["database"]
        #expect(database?["passwordEnv"] == .string("SQLSERVER_PASSWORD"))
    }

    @Test func schemaChecksMatchNamesCaseInsensitively() throws {
        let mapping = try Mapping(
            Configuration(
                json: try JSONValue(
                    parsing: """
                        {"schema": [{"name": "Customer", "primaryKey": "CustomerId",
                          "properties": {"CustomerId": "int", "Name": "string", "Balance": "decimal?"}}],
                         "realm": {"path": "/d"}}
                        """)))
        let types = SQLServerSchema.columnTypes([
            ["customer", "customerid", "int"], ["customer", "name", "nvarchar"], ["customer", "balance", "money"],
        ])
        #expect(SQLServerSchema.mismatches(mapping, types: types) == [])
        #expect(SQLServerSchema.type(types, "Customer", "Balance") == "money")
        let state = SQLServerSetup.State(
            databaseTracked: true, snapshotIsolation: true, trackedTables: ["dbo.customer"])
        #expect(SQLServerSetup.problems(state, database: "d", schema: "dbo", tables: ["Customer"]) == [])
    }

    /// money's own text has two decimals (and a leading space on Babelfish); datetimeoffset's has
    /// a space before the offset on Babelfish.
    @Test func readsAreExactAndParse() {
        #expect(
            SQLServerType.selectExpression("[m]", type: "money") == "CONVERT(nvarchar(60), CAST([m] AS decimal(19, 4)))"
        )
        #expect(
            SQLServerType.selectExpression("[m]", type: "smallmoney")
                == "CONVERT(nvarchar(60), CAST([m] AS decimal(19, 4)))")
        #expect(
            SQLServerType.selectExpression("[o]", type: "datetimeoffset")
                == "REPLACE(REPLACE(CONVERT(nvarchar(40), [o], 127), N' +', N'+'), N' -', N'-')")
        // What each server's text becomes after that expression, and that it parses to one instant.
        let sqlServer = Timestamp(iso8601: "2024-05-01T10:20:30.1234567+02:00")
        let babelfish = Timestamp(iso8601: "2024-05-01 10:20:30.1234567+02:00")
        #expect(sqlServer != nil && sqlServer == babelfish)
        #expect(Timestamp(iso8601: "2024-05-01 10:20:30.123457 +02:00") == nil, "why the space is taken out")
        #expect(Timestamp(iso8601: "2024-05-01 10:20:30.123457") != nil, "datetime2 style 126 on Babelfish")
        #expect(DecimalNumber(exactly: "1234.5678") != nil && DecimalNumber(exactly: " 1234.57") == nil)
    }

    /// `status`, `load --dry-run` and `dead-letter` read a database no `run` prepared.
    @Test func ownTablesAreReadOnlyWhereTheyExist() {
        let d = SQLServerDialect(schema: "dbo")
        #expect(
            SQLServerSQL.ownTablesExisting(d).text
                == "SELECT CASE WHEN OBJECT_ID(N'[dbo].[realm_adapter_state]', N'U') IS NULL THEN 0 ELSE 1 END, "
                + "CASE WHEN OBJECT_ID(N'[dbo].[realm_adapter_dead_letter]', N'U') IS NULL THEN 0 ELSE 1 END, "
                + "CASE WHEN OBJECT_ID(N'[dbo].[realm_adapter_dead_row]', N'U') IS NULL THEN 0 ELSE 1 END, "
                + "CASE WHEN OBJECT_ID(N'[dbo].[realm_adapter_poller]', N'U') IS NULL THEN 0 ELSE 1 END;")
        let applied = SQLServerSQL.appliedVersions(adapter: "a", d)
        #expect(
            applied.text
                == "IF OBJECT_ID(@p1, N'U') IS NOT NULL SELECT path, version FROM [dbo].[realm_adapter_state] "
                + "WHERE adapter = @p2;")
        #expect(applied.values == ["[dbo].[realm_adapter_state]", "a"])
    }

    /// The poller tells own transactions by the state table's markers, read through change tracking.
    @Test func prepareTracksTheStateTableToo() {
        let tracking = SQLServerConnector.tracking(SQLServerSchemaTests.mapping, SQLServerDialect(schema: "dbo"))
        #expect(
            tracking.last?.text
                == "IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = OBJECT_ID(@p1)) "
                + "ALTER TABLE [dbo].[realm_adapter_state] ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = OFF);")
        #expect(tracking.count == SQLServerConnector.followed(SQLServerSchemaTests.mapping).count + 1)
    }

    @Test func createDatabaseCreatesOnlyAMissingOne() {
        let s = SQLServerSQL.createDatabase("shop]x")
        #expect(s.text == "IF DB_ID(@p1) IS NULL CREATE DATABASE [shop]]x];")
        #expect(s.values == ["shop]x"])
    }

    /// `init --database 'sqlserver://…?trustServerCertificate=true'` reaches a server with a
    /// self-signed certificate (Babelfish's) and writes that URL: the configuration reads it too.
    @Test func theURLsTLSParametersStandWhereTheMembersAreAbsent() throws {
        let options = SQLServerOptions.parsed
        let url = try options(
            #"{"type": "sqlserver", "#
                + #""url": "sqlserver://sa@db:1433/app?trustServerCertificate=true&encryption=require"}"#)
        #expect(url.trustServerCertificate && url.encryption == .require)
        let members = try options(
            #"{"type": "sqlserver", "url": "sqlserver://sa@db:1433/app?trustServerCertificate=true", "#
                + #""trustServerCertificate": false}"#)
        #expect(!members.trustServerCertificate, "a member wins over the URL")
        let plain = try options(#"{"type": "sqlserver", "url": "sqlserver://sa@db:1433/app"}"#)
        #expect(!plain.trustServerCertificate && plain.encryption == .request)
    }
}

extension SQLServerOptions {
    /// The options of a `database` section given as JSON text, read through a whole configuration.
    static func parsed(_ database: String) throws -> SQLServerOptions {
        let c = try Configuration(
            json: try JSONValue(
                parsing: #"{"schema": [{"name": "A", "primaryKey": "id", "properties": {"id": "int"}}], "#
                    + #""realm": {"path": "/d"}, "database": "# + database + "}"),
            connectors: .sqlServer)
        return try #require(c.database).sqlServer
    }
}
