import ArgumentParser
import Logging
import RealmAdapter
import RealmServer

/// `--config FILE` and the global options, for commands that work from a configuration.
struct ConfigOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    @OptionGroup var global: GlobalOptions

    /// Reads the configuration and sets up logging from it (and the flags). Commands that sync
    /// (`load`, `run`) need its schema; those that only serve or manage the store do not.
    func load(needsSchema: Bool = true) throws -> (Configuration, Logger) {
        LoggingBootstrap.early(global.logFormat.flatMap(LogFormat.init))
        let c = try Configuration.load(file: config, connectors: connectors, needsSchema: needsSchema)
        return (c, global.bootstrap(config: c))
    }
}

extension ConfigOptions {
    /// The server's users and grants, in the store of the configuration (`user`, `permission`).
    func userDirectory() throws -> UserDirectory {
        try StoreLocation(try load(needsSchema: false).0.realm).userDirectory()
    }
}

extension ConfigOptions {
    /// The store of the configuration, which must hold a Realm at `path`.
    func store(holding path: String) throws -> RealmStore {
        let (c, logger) = try load(needsSchema: false)
        guard try StoreLocation(c.realm).exists(logger: logger) else { throw RealmAdapterError.noStore(c.realm.store) }
        let store = try StoreLocation(c.realm).open(logger: logger)
        guard try store.contains(path) else { throw RealmAdapterError.realmNotFound(path) }
        return store
    }
}
