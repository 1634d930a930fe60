import LedgerCore

extension ChainAppend {
    /// A new event's link in the chain: sha256 of the previous hash and the event's
    /// content, encoded as ledger.event_content encodes it (Migrations/012), the same
    /// hash `ChainHash.hash` recomputes from the stored columns. `scratch` is reused
    /// across a batch, so hashing one event allocates only its hash.
    static func linkHash(previous: [UInt8], position: Int64, version: Int, parts: PreparedEvent.ChainParts,
                         recordedMicros: Int64, scratch: inout [UInt8]) -> [UInt8] {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: previous)
        BinaryField.appendInt64(&scratch, position)
        scratch.append(contentsOf: parts.contentHead)
        BinaryField.appendInt32(&scratch, Int32(truncatingIfNeeded: version))
        scratch.append(contentsOf: parts.contentBody)
        BinaryField.appendInt64(&scratch, recordedMicros)
        BinaryField.appendInt64(&scratch, parts.observedMicros)
        return Crypto.sha256(scratch)
    }
}
