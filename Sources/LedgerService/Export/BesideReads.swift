import LedgerCore
import LedgerPostgres

/// What an export reads beside its rows while their COPY holds its connection: an
/// order's earlier events, to fold its status or its state at the period's end. They are
/// read on a second connection, opened on first use, in the export's own snapshot
/// (`SharedSnapshot`), so they are exactly what the export's transaction sees; every
/// event read is checked with the chain around it (`ChainLinks`) before it is folded.
final class BesideReads: @unchecked Sendable {
    // @unchecked: used by one of the export's threads only (the events' reading thread, or
    // the orders' reading thread).
    private let snapshot: SharedSnapshot
    private let connectionString: String
    private var connection: PostgresConnection?

    init(snapshot: SharedSnapshot, connectionString: String) {
        self.snapshot = snapshot
        self.connectionString = connectionString
    }

    /// The events of `streams` below `position`, by stream, in ledger order. Those at or
    /// after `checkedFrom` lie in the run whose links the export's own scan checked in this
    /// snapshot (`ChainRunCheck`: each one's hash from its content and the hash stored
    /// before it, and the next one's from its), so only the events before it are checked
    /// here (`ChainLinks`, which reads their neighbours).
    func earlierEvents(of streams: [String], below position: Int64, checkedFrom: Int64 = .max) throws -> [String: [StoredEvent]] {
        try read { c in
            let earlier = try EventStore().readForReplay(streams: streams, below: position, on: c)
            try ChainLinks().require(earlier.values.flatMap { $0 }.filter { $0.position < checkedFrom }, on: c)
            return earlier
        }
    }

    /// The events of `stream` recorded before `time`, in stream order.
    func events(of stream: String, recordedBefore time: Timestamp) throws -> [StoredEvent] {
        try read { c in
            let known = try EventStore().readForReplay(stream: stream, recordedBefore: time, on: c)
            try ChainLinks().require(known, on: c)
            return known
        }
    }

    func close() {
        connection?.close()
        connection = nil
    }

    private func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let c = try connection ?? {
            let opened = try PostgresConnection(connectionString: connectionString)
            try opened.query("SET application_name = 'ledger export (beside)'")
            connection = opened
            return opened
        }()
        return try snapshot.join(on: c, body)
    }
}
