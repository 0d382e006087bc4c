import RealmAdapter

/// The loader's snapshots.
extension SQLServerConnector {
    public func loadSnapshot(_ mapping: Mapping, partial: Bool) async throws -> LoadSnapshot {
        state.withLock { $0.fullLoad = !partial }
        try await prepare(mapping)
        let (types, triggers) = state.withLock { ($0.columnTypes, $0.capture == .triggers) }
        let (snapshot, version) = try SQLServerLoadSnapshot.open(
            settings, dialect: dialect, columnTypes: types, handOff: !partial, triggers: triggers,
            realmIdWriter: { [self] in try self.writeRealmIds($0) })
        // The stream starts where the snapshot was read (a partial load keeps the stream's place).
        if !partial { try await save(version) }
        return snapshot
    }

    public func dryRunSnapshot(_ mapping: Mapping) async throws -> LoadSnapshot {
        try Self.check(mapping)
        let c = try await SQLServerConnection.connect(settings, logger: logger)
        let schema = configuration.schema
        let types = try await c.session { s in try SQLServerSchema.columnTypes(s, schema: schema) }
        c.close()
        let problems = SQLServerSchema.mismatches(mapping, types: types)
        guard problems.isEmpty else { throw SQLServerError.mismatch(problems) }
        return try SQLServerLoadSnapshot.open(
            settings, dialect: dialect, columnTypes: types, handOff: false, dryRun: true,
            realmIdWriter: { _ in throw SQLServerError.dryRun() }
        ).0
    }
}
