import LedgerCore

/// An event of a scan of the log with its canonical form, mapped on the thread that
/// read it (`EventMapping.recorded`), so that the thread folding it only folds. A class:
/// the folding thread gathers each stream's events without copying their many fields.
package final class ScannedEvent: Sendable {
    package let stored: StoredEvent
    /// The canonical event, or why the stored row cannot be read back as one.
    package let recorded: Result<RecordedEvent, UnreadableEvent>

    /// `metadata`: the stored metadata column, parsed already (or why it cannot be).
    package init(_ stored: StoredEvent, metadata: Result<JSONValue, any Error>) {
        self.stored = stored
        do {
            recorded = .success(try EventMapping.recorded(stored, metadata: try metadata.get()))
        } catch {
            recorded = .failure(UnreadableEvent(reason: String(describing: error)))
        }
    }
}

/// A stored event that does not read back as a canonical event, and why.
package struct UnreadableEvent: Error, Sendable {
    package var reason: String
}
