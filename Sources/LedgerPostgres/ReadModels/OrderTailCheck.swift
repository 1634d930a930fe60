import LedgerCore

/// The last event an order's read model names (`ledger.orders.last_position`, written in
/// the same commit as the event), against the order's stream as a read found it. An order's
/// newest event deleted with the triggers off, its neighbours in the log other orders'
/// events, leaves every link around the order's remaining events intact and no version
/// skipped: the read model's position, gone from the log, is what tells. A position that
/// still holds an event (another stream's, a read model edited by hand) is no break in the
/// chain; `ledger verify` names such a read model.
package struct OrderTailCheck {
    package init() {}

    /// Throws `ChainBreak` naming the missing events when the read model names a last event
    /// beyond `stream` that the log no longer holds. Run it in the snapshot `stream` was read in.
    package func require(_ no: MerchantOrderNo, stream: [StoredEvent], on c: PostgresConnection) throws {
        let row = try c.query("SELECT last_position FROM ledger.orders WHERE merchant_order_no = $1", [.text(no.value)])
        guard row.count == 1, let named = try row.value(0, "last_position").flatMap({ Int64($0) }),
              named > (stream.last?.position ?? 0) else { return }
        guard try c.query("SELECT 1 FROM ledger.events WHERE position = $1", [.int(named)]).count == 0 else { return }
        let first = (try EventStore().highestPosition(below: named, on: c) ?? 0) + 1
        let which = first == named ? "event \(named) is missing" : "events \(first) to \(named) are missing"
        throw ChainBreak(position: first, reason: "\(which): the read model names event \(named) as order \(no.value)'s last, and the log no longer holds it")
    }
}
