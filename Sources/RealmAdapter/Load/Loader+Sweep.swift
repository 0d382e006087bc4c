/// Re-runs: what the snapshot no longer has leaves the Realms that had it before.
extension Loader {
    /// Deletes, from Realms that had objects of the type before, those the load did not write.
    func sweepObjects(_ t: TableMapping, _ run: LoadRun) throws -> Int {
        let type = t.type.name
        let deleted = try sweep(type, run) { tx, after, limit in
            tx.schema[type: type] == nil ? (0, nil) : try tx.deleteNotLoaded(type, after: after, limit: limit)
        }
        if deleted > 0 {
            logger.info(
                "Deleted objects the database no longer has", metadata: ["type": "\(type)", "count": "\(deleted)"])
        }
        return deleted
    }

    /// Empties, in Realms that had objects of the owner type before, the lists the load did not write.
    func sweepLists(_ t: TableMapping, _ list: LinkListMapping, _ run: LoadRun) throws -> Int {
        let type = t.type.name
        let property = list.property.name
        return try sweep(type, run) { tx, after, limit in
            tx.schema[type: type]?[property: property] == nil
                ? (0, nil) : try tx.clearListsNotLoaded(type, property, after: after, limit: limit)
        }
    }

    /// In each Realm that had objects of `type` before the load, runs `step` (remove up to
    /// `limit` things after a key; say how many and the last key) in transactions of
    /// `loader.batchSize` until nothing is left. Returns how many it removed.
    func sweep(
        _ type: String, _ run: LoadRun,
        _ step: (inout WriteTransaction, _ after: Value?, _ limit: Int) throws -> (Int, Value?)
    ) throws -> Int {
        let limit = configuration.batchSize
        var removed = 0
        for path in try mappedPaths() where !run.fresh(type, path) {
            var after: Value?
            while true {
                let (n, last) = try store.write(to: path, origin: adapter.origin) { tx in try step(&tx, after, limit) }
                    .result
                removed += n
                guard let last, n == limit else { break }
                after = last
            }
        }
        return removed
    }
}
