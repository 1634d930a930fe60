import Testing
import LedgerCore

/// `ledger verify-export` counts an export's file again (`ExportFileCount`): whatever an
/// export writes, in either format, counts to its manifest's rows, highest position and
/// totals, and a manifest whose totals were edited does not.
@Suite("An export's file counted again (verify-export)")
struct ExportFileCountTests {
    /// An orders export of `count` random orders: the file's bytes and its manifest.
    static func export(_ count: Int, format: ExportFormat, _ rng: inout SplitMix64) -> ([UInt8], JSONValue) {
        var manifest = ExportManifest(kind: .orders, from: Timestamp(seconds: 0), to: Timestamp(seconds: 100), format: format)
        var bytes = format.header(ExportKind.orders.columns)
        manifest.wrote(bytes)
        let assets: [String?] = [nil, "USDT", "=SUM(A1)", "'=SUM(A1)", "a,\"b\"\r\nc", "é", "e\u{301}", "-1", ""]
        let amounts: [String?] = [nil, "40", "0.000001", "-3.5", "12345678901234567890123456789012345678901.5", "not a number", "1e3"]
        for _ in 0..<count {
            let order = ExportedOrder(
                merchantOrderNo: ExportEncodingTests.randomText(&rng) + "x", provider: "web3", providerOrderId: nil,
                status: 3, statusName: "paid", asset: assets.randomElement(using: &rng)!, expectedAmount: "40",
                paidAmount: amounts.randomElement(using: &rng)!, fiatCurrency: nil, fiatAmount: nil,
                txHash: ExportEncodingTests.randomText(&rng), createdAt: Timestamp(seconds: 1), paidAt: Timestamp(seconds: 2),
                latePayment: false, attention: false, refunded: false,
                lastPosition: Int.random(in: 0..<10, using: &rng) == 0 ? nil : Int64.random(in: 1...1_000_000, using: &rng))
            var writer = ExportRowWriter(format: format, columns: ExportKind.orders.columns)
            order.write(to: &writer)
            let row = writer.take()
            manifest.wrote(row)
            bytes += row
            order.count(in: &manifest)
        }
        return (bytes, manifest.json(ledgerHead: (9, [UInt8](repeating: 1, count: 32)), generatedAt: Timestamp(seconds: 5)))
    }

    /// The file fed in random pieces, as a read of it might cut it.
    static func count(_ bytes: [UInt8], format: ExportFormat, _ rng: inout SplitMix64) -> ExportFileCount {
        var count = ExportFileCount(kind: .orders, format: format)
        var at = 0
        while at < bytes.count {
            let next = min(bytes.count, at + Int.random(in: 1...64, using: &rng))
            count.feed(Array(bytes[at..<next]))
            at = next
        }
        count.finish()
        return count
    }

    @Test("every export counts to its own manifest, in both formats, however the file is cut into pieces", arguments: ExportFormat.allCases)
    func countsAgree(format: ExportFormat) {
        var rng = SplitMix64(seed: 0xC0_FFEE)
        for round in 0..<300 {
            let (bytes, manifest) = Self.export(Int.random(in: 0...40, using: &rng), format: format, &rng)
            let differences = Self.count(bytes, format: format, &rng).differences(from: manifest)
            #expect(differences.isEmpty, "round \(round): \(differences)")
            if !differences.isEmpty { return }
        }
    }

    @Test("an edited total, a total taken out, or another row count is named", arguments: ExportFormat.allCases)
    func editsNamed(format: ExportFormat) throws {
        var rng = SplitMix64(seed: 0x7074)
        let (bytes, manifest) = Self.export(200, format: format, &rng)
        guard case .object(let fields) = manifest, case .array(let totals)? = manifest["totals"], totals.count > 1 else {
            Issue.record("no totals to edit"); return
        }
        func with(_ name: String, _ value: JSONValue) -> JSONValue { .object(fields.map { $0.0 == name ? ($0.0, value) : $0 }) }
        let first = try #require(totals.first?["asset"]?.stringValue)
        guard case .object(let entry) = totals[0] else { Issue.record("not an object"); return }
        let raised = JSONValue.object(entry.map { $0.0 == "amount" ? ("amount", .string("1" + ($0.1.stringValue ?? ""))) : $0 })
        let count = Self.count(bytes, format: format, &rng)

        let edited = count.differences(from: with("totals", .array([raised] + totals.dropFirst())))
        #expect(edited.count == 1 && edited[0].contains("the file's total for \(JSONSerializer.quoted(first))"), "\(edited)")
        // USDT: an asset no other is written like (`=SUM(A1)` and `'=SUM(A1)` are one cell text in CSV).
        let dropped = count.differences(from: with("totals", .array(totals.filter { $0["asset"]?.stringValue != "USDT" })))
        #expect(dropped == [#"the file has a total for "USDT" ("# + "\(count.totals[Array("USDT".utf8)]!.rows) row(s), "
                            + "\(count.totals[Array("USDT".utf8)]!.amount)) that its manifest does not list"], "\(dropped)")
        let rows = count.differences(from: with("rows", .integer(199)))
        #expect(rows == ["the file has 200 row(s), its manifest says 199"])
    }

    @Test("a file cut short, or whose header is another export's, is not counted but named", arguments: ExportFormat.allCases)
    func unreadableFiles(format: ExportFormat) {
        var rng = SplitMix64(seed: 0x5407)
        let (bytes, manifest) = Self.export(5, format: format, &rng)
        let cut = Self.count(Array(bytes.dropLast()), format: format, &rng).differences(from: manifest)
        #expect(cut.count == 1 && cut[0].contains("ends in the middle of a"), "\(cut)")
        var events = ExportFileCount(kind: .events, format: format)
        events.feed(bytes)
        events.finish()
        #expect(events.unreadable != nil, "an orders file read as an events export")
    }
}
