import Foundation
import TestSupport
import Testing

/// `serve` needs a store, not a schema: the Realms it serves carry their own.
@Suite(.serialized) struct ServeWithoutSchemaTests {
    /// A configuration with neither `database` nor `schema` serves the store, and manages its
    /// users; before, every command stopped with `schema: is required`. `load` and `run`, which
    /// sync a schema, still require it, with the same error.
    @Test func serveNeedsNoSchema() async throws {
        let s = try await ServeTests.Server()
        try """
        {"realm": {"store": "\(s.dir)/store", "path": "/shop"}, "server": {"port": \(s.port)}}
        """.write(toFile: s.config, atomically: true, encoding: .utf8)
        let list = try await s.cli(["user", "list", "--config", s.config])
        #expect(list.status == 0 && list.stdout.contains("alice"), "\(list.stderr)")
        try await s.start()
        let alice = try await s.login("alice")
        #expect(
            try await s.graphQL("/shop", alice, "{ stop(id: 1) { name } }") == #"{"data": {"stop": {"name": "Depot"}}}"#
        )
        for command in ["load", "run"] {
            let r = try await s.cli([command, "--config", s.config])
            #expect(r.status != 0 && r.stderr.contains("schema: is required"), "\(command): \(r.stderr)")
        }
    }
}
