import LedgerCore

/// An event of a scan of the log with its canonical form, mapped on the thread that
/// read it (`EventMapping.recorded`), so that the thread folding it only folds.
package struct ScannedEvent: Sendable {
    package var stored: StoredEvent
    /// The canonical event, or why the stored row cannot be read back as one.
    package var recorded: Result<RecordedEvent, UnreadableEvent>

    package init(_ stored: StoredEvent) {
        self.init(stored, metadata: Result { try JSONValue.parse(stored: stored.metadataJSON) })
    }

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
