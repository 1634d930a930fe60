import LedgerCore

/// The orders half of `ledger verify`'s read-model check, fed by a scan of the log in
/// stream order (`EventLogScan`): each order stream's events, once complete, are folded
/// and compared with its row of ledger.orders (`ReadModelCheck.compareOrder`). The rows
/// are read a page at a time in the same order (both are sorted by bytes: the stream and
/// the order number are in the "C" collation), so the two are merged as they come, and
/// memory holds one stream and one page.
package final class OrderStreamCheck {
    private let pages: () throws -> QueryResult?
    private let check = ReadModelCheck()
    private let sink: ReadModelCheck.Sink
    private var stream = ""
    /// The streams the scan gave, orders' and others' (each once: the scan is in stream order).
    package private(set) var streams: Int64 = 0
    private var events: [ScannedEvent] = []
    private var page: QueryResult?
    private var columns: ReadModelCheck.PageColumns?
    private var row = 0
    private var pageEnded = false

    /// `pages`: the rows of ledger.orders in order-number order, a page at a time
    /// (`OrderRowScan`; nil once every page was given). Each difference goes to `each`.
    package init(pages: @escaping () throws -> QueryResult?, each: @escaping (ReadModelDifference) throws -> Void) {
        self.pages = pages
        sink = ReadModelCheck.Sink(each: each)
    }

    /// The next event of the scan (events of other streams than orders' are passed over).
    package func add(_ event: ScannedEvent) throws {
        if event.stream != stream {
            try streamEnded()
            stream = event.stream
            streams += 1
        }
        if stream.hasPrefix(MerchantOrderNo.streamPrefix) { events.append(event) }
    }

    /// The scan has ended: the last stream, then the rows that no stream reached.
    package func finish() throws {
        try streamEnded()
        while let (text, _, _) = try currentRow() {
            try sink.add("order \(text)", ["(no events)"], "order \(text): in ledger.orders but has no events")
            row += 1
        }
    }

    private func streamEnded() throws {
        defer { events.removeAll(keepingCapacity: true) }
        guard !events.isEmpty else { return }
        let no = String(stream.dropFirst(MerchantOrderNo.streamPrefix.count))
        // Rows before this stream's order have no events.
        while let (text, page, r) = try currentRow() {
            if text == no {
                try check.compareOrder(text, page, r, columns!, events, sink)
                row += 1
                return
            }
            guard text.utf8.lexicographicallyPrecedes(no.utf8) else { break }
            try sink.add("order \(text)", ["(no events)"], "order \(text): in ledger.orders but has no events")
            row += 1
        }
        try sink.add("order \(no)", ["(no row)"], "order \(no): has events but no row in ledger.orders")
    }

    /// The row at the merge's place, taking the next page when this one is used up.
    private func currentRow() throws -> (String, QueryResult, Int)? {
        while true {
            if let page, row < page.count { return (try page.string(row, "merchant_order_no"), page, row) }
            if pageEnded { return nil }
            guard let next = try pages() else {
                pageEnded = true
                page = nil
                return nil
            }
            page = next
            columns = try ReadModelCheck.PageColumns(next)
            row = 0
        }
    }
}
