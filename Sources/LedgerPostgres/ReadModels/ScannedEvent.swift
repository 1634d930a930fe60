import LedgerCore

/// An event of a scan of the log with its canonical form, mapped on the thread that
/// read it (from the row in place, `EventCopyRow`), so that the thread folding it only
/// folds. A class: the folding thread gathers each stream's events without copying them.
package final class ScannedEvent: Sendable {
    package let position: Int64
    package let stream: String
    /// The canonical event, or why the stored row cannot be read back as one.
    package let recorded: Result<RecordedEvent, UnreadableEvent>

    /// `metadata`: the row's metadata column, parsed already (or why it cannot be).
    package init(_ row: EventCopyRow, metadata: Result<JSONValue, any Error>) {
        position = row.position
        stream = row.stream
        do {
            // The metadata's error first, as `EventMapping.recorded` reports it.
            recorded = .success(try row.recorded(metadata: try metadata.get()))
        } catch {
            recorded = .failure(UnreadableEvent(reason: String(describing: error)))
        }
    }
}

/// A stored event that does not read back as a canonical event, and why.
package struct UnreadableEvent: Error, Sendable {
    package var reason: String
}
