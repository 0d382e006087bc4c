import PostgresConnector
import RealmAdapter
import SQLServerConnector
import SQLiteConnector

/// The database types this program syncs with, by `database.type`. The only place the CLI names
/// a concrete connector: adding one means its module and one line here.
let connectors = ConnectorRegistry([
    PostgresConnectorFactory(),
    SQLiteConnectorFactory(),
    SQLServerConnectorFactory(),
])
