// The connector's API speaks of connections, sessions, results, errors and types, which live in
// PostgresWire (shared with the store's Postgres backend): importing the connector imports them.
@_exported import PostgresWire
