import CLibPQ
import Foundation
import Logging
import RealmAdapter
import Synchronization

/// Streams committed transactions from a logical replication slot (pgoutput, protocol 1).
///
/// The reader runs on a thread of its own (libpq's copy protocol is read with `poll`), decodes
/// each transaction completely, and hands it over through ``transactions``; a large one in parts
/// of ``partSize`` row changes. Flow control: at most `maxInFlight` transactions, and about two
/// parts' worth of row changes, wait to be processed, so neither a large backlog nor a large
/// transaction fills memory.
/// The slot only moves past a transaction once the caller reports it ``processed(_:)``: that is
/// the flush LSN sent to the server, so a crash replays everything not yet in the Realm.
public final class PostgresReplicationStream: @unchecked Sendable {
    /// The prefix of realm-adapter's logical decoding messages (``PostgresTransaction/messages``).
    public static let messagePrefix = "realm_adapter"
    // @unchecked: the connection is used only by the reader thread (after `start`); shared state
    // is in `state` (a Mutex) and `wakeUp` (a semaphore).
    private let connection: PostgresConnection
    private let slot: String
    private let publication: String
    private let customTypes: [String: ScalarType]
    private let schema: String
    private let logger: Logger
    /// Signalled when a transaction is processed or the stream stops (the reader waits on it).
    private let wakeUp = DispatchSemaphore(value: 0)
    private let maxInFlight: Int
    private let state = Mutex(State())
    /// The database's own types, read before streaming starts (only the reader thread uses it).
    private var catalog = PostgresTypeCatalog()
    /// By relation OID, the mapped columns its changes do not carry (``adjustRelation``; only
    /// the reader thread uses it).
    private var unreliable: [UInt32: [String]] = [:]
    private let continuation: AsyncThrowingStream<PostgresTransaction, Error>.Continuation
    /// Transactions in commit order. Iterate once.
    public let transactions: AsyncThrowingStream<PostgresTransaction, Error>

    private struct State {
        var acknowledged = LSN.zero
        var stopped = false
        var lastReceived = LSN.zero
        var ackPending = false
        /// The row changes of each transaction handed over and not yet processed, oldest first.
        var inFlight: [Int] = []
        var inFlightChanges = 0
    }

    /// Opens the replication connection. Call ``start(from:)`` to begin streaming.
    public init(
        settings: PostgresSettings, slot: String, publication: String, schema: String = "public",
        customTypes: [String: ScalarType] = [:], maxInFlight: Int = 64,
        logger: Logger = Logger(label: "realm-adapter.postgres.replication")
    ) async throws {
        connection = try await PostgresConnection.connect(settings, replication: true, logger: logger)
        self.slot = slot
        self.publication = publication
        self.schema = schema
        self.customTypes = customTypes
        self.logger = logger
        self.maxInFlight = maxInFlight
        (transactions, continuation) = AsyncThrowingStream.makeStream(of: PostgresTransaction.self)
    }

    /// Row changes per part of a large transaction (see ``PostgresTransaction/part``).
    public var partSize = 20_000

    /// What the reader makes of a relation the stream describes (a table of the schema, before
    /// its changes come; again after it changed): the name its changes go under, and columns
    /// the changes must not be trusted to carry (`missing`: their values are read back from
    /// the database, ``PostgresTransaction/readBack``). A table renamed, or a column renamed or
    /// dropped, while the stream runs: its changes still reach the tables they belong to.
    public var adjustRelation: (@Sendable (PgOutputMessage.Relation) -> (name: String, missing: [String]))?

    /// Starts `START_REPLICATION` at `lsn` (the server resumes from the slot's confirmed
    /// position when that is later) and the reader thread.
    public func start(from lsn: LSN = .zero) throws {
        let (slot, publication) = (self.slot, self.publication)
        try connection.sessionSync { s in
            // Logical decoding messages (Postgres 14 and later) name the rows an own write missed.
            let messages = s.serverVersion >= 140000 ? ", messages 'true'" : ""
            catalog = try PostgresTypeCatalog.load(s)
            // A replication command takes no parameters: names are quoted into its text.
            let sql = PostgresDialect(schema: "").statement(
                """
                START_REPLICATION SLOT \(id: slot) LOGICAL \(raw: lsn.description) \
                (proto_version '1', publication_names \(literal: publication)\(raw: messages))
                """
            ).text
            do {
                try s.query(sql)
            } catch var e as PostgresError {
                if e.sqlState == .undefinedObject {
                    e = PostgresError.slotMissing(slot, e)
                } else if e.sqlState == .objectInUse {
                    e = PostgresError.slotInUse(slot, e)
                }
                throw e
            }
        }
        state.withLock { $0.acknowledged = lsn }
        let thread = Thread { [self] in
            do {
                try connection.sessionSync { s in try readLoop(s.raw) }
                connection.close()
                if state.withLock({ $0.stopped }) {
                    continuation.finish()
                } else {
                    // The server ended the stream (it is shutting down, say): worth reconnecting.
                    continuation.finish(
                        throwing: PostgresError.streamEnded())
                }
            } catch {
                connection.close()
                continuation.finish(throwing: error)
            }
        }
        thread.name = "realm-adapter.replication"
        thread.start()
    }

    /// Reports that `transaction` is safely in the Realm: the slot may move past it.
    public func processed(_ transaction: PostgresTransaction) { processed(through: transaction.endLSN) }

    /// Reports that the transaction ending at `lsn` is safely in the Realm.
    public func processed(through lsn: LSN) {
        state.withLock { s in
            s.acknowledged = max(s.acknowledged, lsn)
            if !s.inFlight.isEmpty { s.inFlightChanges -= s.inFlight.removeFirst() }
            s.ackPending = true
        }
        wakeUp.signal()
    }

    /// The highest position reported processed.
    public var acknowledged: LSN { state.withLock { $0.acknowledged } }

    /// Stops reading (the reader sends a last status update) and closes the connection.
    public func stop() {
        state.withLock { $0.stopped = true }
        wakeUp.signal()
    }

    // MARK: Reader thread

    private func readLoop(_ conn: OpaquePointer) throws {
        var relations: [UInt32: PgOutputMessage.Relation] = [:]
        var typeNames: [UInt32: String] = [:]
        var current: PostgresTransaction?
        var lastStatus = ContinuousClock.now

        while !state.withLock({ $0.stopped }) {
            var buffer: UnsafeMutablePointer<CChar>?
            let n = PQgetCopyData(conn, &buffer, 1)
            if n > 0, let buffer {
                let frame = UnsafeRawBufferPointer(start: buffer, count: Int(n))
                defer { PQfreemem(buffer) }
                switch frame[0] {
                case UInt8(ascii: "w"):
                    var header = ByteReader(Array(frame[1..<25]))
                    _ = try header.uint64()
                    let walEnd = LSN(try header.uint64())
                    state.withLock { $0.lastReceived = max($0.lastReceived, walEnd) }
                    let message = try PgOutputMessage(frame[25...])
                    try handle(message, &current, &relations, &typeNames)
                case UInt8(ascii: "k"):
                    var r = ByteReader(Array(frame[1...]))
                    let walEnd = LSN(try r.uint64())
                    _ = try r.uint64()
                    let replyRequested = try r.uint8() == 1
                    state.withLock { s in
                        s.lastReceived = max(s.lastReceived, walEnd)
                        // Idle, nothing of ours in flight: WAL up to here holds nothing we need.
                        if current == nil && s.inFlight.isEmpty { s.acknowledged = max(s.acknowledged, walEnd) }
                    }
                    if replyRequested {
                        try sendStatus(conn)
                        lastStatus = .now
                    }
                default:
                    break
                }
                continue
            }
            if n == -1 {  // the server ended the copy
                let result = PQgetResult(conn)
                _ = try PostgresResult(result, connection: conn, sql: "START_REPLICATION")
                return
            }
            if n < -1 {
                throw PostgresError.replicationLost("The replication connection failed", conn)
            }
            // Nothing buffered: send progress when due, then wait for data.
            let ackPending = state.withLock { s in
                defer { s.ackPending = false }
                return s.ackPending
            }
            if ackPending || ContinuousClock.now - lastStatus > .seconds(10) {
                try sendStatus(conn)
                lastStatus = .now
            }
            var pfd = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, 20)
            guard PQconsumeInput(conn) == 1 else {
                throw PostgresError.replicationLost("The replication connection was lost", conn)
            }
        }
        try? sendStatus(conn)
    }

    private func handle(
        _ message: PgOutputMessage, _ current: inout PostgresTransaction?,
        _ relations: inout [UInt32: PgOutputMessage.Relation], _ typeNames: inout [UInt32: String]
    ) throws {
        switch message {
        case .begin(let final, let commitTime, let xid):
            current = PostgresTransaction(endLSN: final, commitLSN: final, origin: nil, changes: [])
            current?.commitTime = commitTime
            current?.xid = xid
        case .origin(_, let name):
            current?.origin = name
        case .relation(var r):
            if r.namespace == schema, let adjust = adjustRelation {
                let (name, missing) = adjust(r)
                r.name = name
                if missing.isEmpty { unreliable[r.oid] = nil } else { unreliable[r.oid] = missing }
            }
            relations[r.oid] = r
        case .type(let oid, _, let name):
            typeNames[oid] = name
        case .insert(let rel, let new):
            guard let r = relations[rel], r.namespace == schema else { return }
            yieldPartIfFull(&current)
            let row = try row(new, r, typeNames, readingBack: rel, &current)
            current?.changes.append(.insert(table: r.name, row: row))
        case .update(let rel, let old, _, let new):
            guard let r = relations[rel], r.namespace == schema else { return }
            yieldPartIfFull(&current)
            let row = try row(new, r, typeNames, readingBack: rel, &current)
            let oldKey = try old.map { try self.row($0, r, typeNames) }
            current?.changes.append(.update(table: r.name, row: row, oldKey: oldKey))
        case .delete(let rel, let old, _):
            guard let r = relations[rel], r.namespace == schema else { return }
            yieldPartIfFull(&current)
            current?.changes.append(.delete(table: r.name, key: try row(old, r, typeNames)))
        case .truncate(let rels, _, _):
            let names = rels.compactMap { relations[$0] }.filter { $0.namespace == schema }.map(\.name)
            if !names.isEmpty { current?.changes.append(.truncate(tables: names)) }
        case .commit(let commitLSN, let endLSN, _):
            guard var tx = current else { return }
            current = nil
            tx.commitLSN = commitLSN
            tx.endLSN = endLSN
            tx.isComplete = true
            deliver(tx)
        case .message(true, _, Self.messagePrefix, let content):
            current?.messages.append(content)
        case .message, .other:
            break
        }
    }

    /// Hands a transaction (or a part) to the consumer; flow control: waits while too many are unprocessed.
    private func deliver(_ tx: PostgresTransaction) {
        let n = tx.changes.count
        let maxChanges = 2 * partSize
        while true {
            let (admitted, stopped) = state.withLock { s -> (Bool, Bool) in
                guard !s.stopped else { return (false, true) }
                guard s.inFlight.isEmpty || (s.inFlight.count < maxInFlight && s.inFlightChanges + n <= maxChanges)
                else { return (false, false) }
                s.inFlight.append(n)
                s.inFlightChanges += n
                return (true, false)
            }
            if stopped { return }
            if admitted { break }
            _ = wakeUp.wait(timeout: .now() + .milliseconds(200))
        }
        continuation.yield(tx)
    }

    /// A large transaction goes to the consumer in parts, so that it is never held whole.
    private func yieldPartIfFull(_ current: inout PostgresTransaction?) {
        guard var tx = current, tx.changes.count >= partSize else { return }
        tx.isComplete = false
        deliver(tx)
        current?.changes = []
        current?.messages = []
        current?.part += 1
    }

    /// ``row(_:_:_:)``, with the columns the relation's changes do not carry (``adjustRelation``)
    /// listed as missing and to be read back in `tx`.
    private func row(
        _ tuple: [PgOutputMessage.TupleValue], _ r: PgOutputMessage.Relation, _ typeNames: [UInt32: String],
        readingBack oid: UInt32, _ tx: inout PostgresTransaction?
    ) throws -> DatabaseRow {
        var out = try row(tuple, r, typeNames)
        if !unreliable.isEmpty, let missing = unreliable[oid] {
            out.missing.formUnion(missing)
            let known = tx?.readBack[r.name] ?? []
            tx?.readBack[r.name] = known + missing.filter { !known.contains($0) }
        }
        return out
    }

    /// Typed values of a tuple. Unchanged TOASTed values are listed as missing, never null.
    private func row(
        _ tuple: [PgOutputMessage.TupleValue], _ r: PgOutputMessage.Relation, _ typeNames: [UInt32: String]
    ) throws -> DatabaseRow {
        var out = DatabaseRow()
        for (column, value) in zip(r.columns, tuple) {
            switch value {
            case .null: out[column.name] = .null
            case .unchangedToast: out.missing.insert(column.name)
            case .text(let text):
                guard
                    let type = catalog.resolve(
                        oid: column.typeOID, name: typeNames[column.typeOID] ?? "", customTypes: customTypes)
                else {
                    // Not a type we map: kept as text; the start-up check rejects mapped columns of such types.
                    out[column.name] = .string(text)
                    continue
                }
                // A value no Realm can hold makes a bad row, which the mapping names (if it maps
                // the column): it is set aside or stops the daemon, as the configuration says.
                do { out[column.name] = try type.decode(text) } catch let e as RealmAdapterError {
                    out.unreadable[column.name] = e.message
                }
            }
        }
        return out
    }

    private func sendStatus(_ conn: OpaquePointer) throws {
        let (received, acked) = state.withLock { ($0.lastReceived, $0.acknowledged) }
        var bytes: [UInt8] = [UInt8(ascii: "r")]
        func put(_ v: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
            }
        }
        put(max(received, acked).value)
        put(acked.value)
        put(acked.value)
        put(UInt64(bitPattern: Int64((Date().timeIntervalSince1970 - 946_684_800) * 1_000_000)))
        bytes.append(0)
        let ok = bytes.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { PQputCopyData(conn, $0.baseAddress, Int32($0.count)) }
        }
        guard ok == 1, PQflush(conn) == 0 else {
            throw PostgresError.replicationLost("Could not send progress to the server", conn)
        }
        logger.trace("Sent standby status", metadata: ["pg.lsn": "\(acked)"])
    }
}
