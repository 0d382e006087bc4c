import RealmAdapter

extension PostgresSettings {
    /// The settings of the configuration's `database` section.
    public init(_ c: DatabaseConfiguration) {
        self.init(
            url: c.url, host: c.host, port: c.port, user: c.user, password: c.password, database: c.database,
            sslmode: c.postgres.sslmode?.rawValue, connectTimeout: c.connectTimeout)
    }
}
