import LedgerCore

/// The columns of an event an export shows of it as stored (not its payload, metadata or
/// raw body, which it shows through the canonical event), taken from a row read in place.
package struct EventHead: Sendable {
    package let position: Int64
    package let eventID: String
    package let stream: String
    package let streamVersion: Int
    package let type: String
    package let source: String
    package let recordedAt: Timestamp
    package let observedAt: Timestamp
    package let hash: [UInt8]

    package init(_ row: EventCopyRow) {
        position = row.position
        eventID = row.row.string(1) ?? ""
        stream = row.stream
        streamVersion = Int(row.streamVersion)
        type = row.type
        source = row.row.string(5) ?? ""
        recordedAt = row.recordedAt
        observedAt = row.observedAt
        hash = row.row.bytes(12) ?? []
    }
}
