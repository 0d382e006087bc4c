import Foundation
import Testing

@testable import RealmAdapter

/// Failpoints are read from `REALM_ADAPTER_FAILPOINTS` in debug builds (the tests' build).
@Suite struct FailpointTests {
    @Test func actionsAreTakenOnePerHitInTurnAndTheLastStays() throws {
        let registry = FailpointRegistry("load.after-batch=2*off->error;realm-to-db.after-commit=sleep(1)->off")
        let batch = try (1...4).map { _ in try #require(registry.next("load.after-batch")).kind }
        #expect(batch == [.off, .off, .error, .error])
        let commit = try (1...3).map { _ in try #require(registry.next("realm-to-db.after-commit")).kind }
        #expect(commit == [.sleep, .off, .off])
        #expect(registry.next("load.before-hand-off") == nil)
    }

    @Test func anActionReadsItsCountAndMilliseconds() throws {
        let action = try #require(FailpointAction("3*kill(250)"))
        #expect(action.kind == .kill && action.count == 3 && action.milliseconds == 250)
        for bad in ["", "explode", "0*off", "x*off", "sleep(-1)", "sleep(ms)"] {
            #expect(FailpointAction(bad) == nil, "\(bad)")
        }
    }

    @Test func anErrorActionFailsTheOperationWithTheFailpointNamed() throws {
        let action = try #require(FailpointAction("error"))
        #expect {
            try action.perform(at: "load.after-batch")
        } throws: {
            ($0 as? RealmAdapterError)?.code == .failpoint
                && ($0 as? RealmAdapterError)?.context["failpoint"] == "load.after-batch"
        }
    }

    @Test func everyFailpointHasADistinctName() {
        #expect(Set(Failpoint.all.map(\.name)).count == Failpoint.all.count)
        #expect(Failpoint.isCompiled)
    }
}
