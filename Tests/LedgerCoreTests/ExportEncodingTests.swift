import Testing
import LedgerCore

/// exports.md, *Format*: RFC 4180 CSV with a formula guard, JSON Lines with the same
/// keys, and a manifest whose totals add exact decimals per asset.
@Suite("Export encoding (exports.md)")
struct ExportEncodingTests {
    /// A strict RFC 4180 reader for one record ending in CRLF.
    static func parseCSV(_ bytes: [UInt8]) -> [String]? {
        var cells: [String] = [], cell: [UInt8] = [], i = 0, quoted = false, wasQuoted = false
        while i < bytes.count {
            let b = bytes[i]
            if quoted {
                if b == UInt8(ascii: "\"") {
                    if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "\"") { cell.append(b); i += 2; continue }
                    quoted = false; i += 1; continue
                }
                cell.append(b); i += 1; continue
            }
            switch b {
            case UInt8(ascii: "\""):
                guard cell.isEmpty, !wasQuoted else { return nil }   // a quote inside an unquoted cell
                quoted = true; wasQuoted = true
            case UInt8(ascii: ","):
                cells.append(String(decoding: cell, as: UTF8.self)); cell = []; wasQuoted = false
            case 13:
                guard i + 2 == bytes.count, bytes[i + 1] == 10 else { return nil }
                cells.append(String(decoding: cell, as: UTF8.self))
                return cells
            case 10: return nil   // a bare LF outside quotes
            default:
                guard !wasQuoted else { return nil }
                cell.append(b)
            }
            i += 1
        }
        return nil
    }

    static func randomText(_ rng: inout SplitMix64) -> String {
        let pieces = ["a", "Z", "0", ",", "\"", "\r", "\n", "\r\n", "=", "+", "-", "@", "\t", " ", "é", "€", "'", "💸", ";", "x"]
        return (0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    @Test("cells written from UTF-8 where it lies (an orders export's COPY columns) are the cells written from the same strings, in both formats")
    func cellsFromBytes() {
        var rng = SplitMix64(seed: 0xB17E5)
        for format in [ExportFormat.csv, .jsonl] {
            for _ in 0..<5_000 {
                let values: [String?] = (0..<6).map { _ in Int.random(in: 0..<5, using: &rng) == 0 ? nil : Self.randomText(&rng) }
                var fromStrings = ExportRowWriter(format: format, columns: Array(repeating: "c", count: values.count))
                var fromBytes = ExportRowWriter(format: format, columns: Array(repeating: "c", count: values.count))
                for (i, value) in values.enumerated() {
                    if i % 2 == 0 { fromStrings.text(value) } else { fromStrings.amount(value) }
                    var copy = value
                    let write: (UnsafeRawBufferPointer?) -> Void = { utf8 in
                        if i % 2 == 0 { fromBytes.text(utf8: utf8) } else { fromBytes.amount(utf8: utf8) }
                    }
                    if copy != nil { copy!.withUTF8 { write(UnsafeRawBufferPointer($0)) } } else { write(nil) }
                }
                fromStrings.endRow()
                fromBytes.endRow()
                #expect(fromBytes.take() == fromStrings.take(), "\(values)")
            }
        }
    }

    @Test("a CSV row reads back cell for cell; text that could start a formula gets a leading quote; amounts never change")
    func csvRoundTrip() {
        var rng = SplitMix64(seed: 0xC5_F0_01)
        for _ in 0..<5_000 {
            let texts = (0..<4).map { _ in Self.randomText(&rng) }
            let amount = ["40", "-3.50", "0.015", "+7", "1000000.000001"].randomElement(using: &rng)!
            var writer = ExportRowWriter(format: .csv, columns: Array(repeating: "c", count: texts.count + 4))
            for text in texts { writer.text(text) }
            writer.amount(amount); writer.integer(-42); writer.bool(true); writer.text(nil)
            writer.endRow()
            let out = writer.take()
            guard let read = Self.parseCSV(out) else {
                Issue.record("not RFC 4180: \(String(decoding: out, as: UTF8.self).debugDescription)")
                return
            }
            let guarded = texts.map { t -> String in
                guard let first = t.utf8.first, [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 9, 13].contains(first) else { return t }
                return "'" + t
            }
            #expect(read == guarded + [amount, "-42", "true", ""], "\(texts.map(\.debugDescription))")
        }
    }

    @Test("the headers are the spec's columns, in order, with CRLF")
    func headers() {
        #expect(String(decoding: ExportFormat.csv.header(ExportKind.orders.columns), as: UTF8.self) ==
                "merchant_order_no,provider,provider_order_id,status,status_name,asset,expected_amount,paid_amount,fiat_currency,fiat_amount,tx_hash,created_at,paid_at,late_payment,attention,refunded,last_position\r\n")
        #expect(String(decoding: ExportFormat.csv.header(ExportKind.events.columns), as: UTF8.self) ==
                "position,recorded_at,observed_at,stream,merchant_order_no,type,source,provider,provider_status,status_after,amount,asset,tx_hash,event_id,hash\r\n")
        #expect(ExportFormat.jsonl.header(ExportKind.orders.columns).isEmpty)
    }

    @Test("a JSON Lines row is one object on one line with the columns as keys, amounts as strings, times in RFC 3339")
    func jsonl() throws {
        var rng = SplitMix64(seed: 0x15_0E)
        for _ in 0..<2_000 {
            let text = Self.randomText(&rng)
            let t = Timestamp(microseconds: Int64.random(in: 0...4_000_000_000_000_000, using: &rng))
            var writer = ExportRowWriter(format: .jsonl, columns: ["a", "b", "c", "d", "e", "f"])
            writer.text(text); writer.amount("-0.50"); writer.integer(7); writer.time(t); writer.bool(false); writer.amount(nil)
            writer.endRow()
            let out = writer.take()
            #expect(out.last == 10 && out.dropLast().allSatisfy { $0 != 10 }, "one line")
            let value = try JSONValue.parse(Array(out.dropLast()))
            #expect(value.objectFields?.map(\.0) == ["a", "b", "c", "d", "e", "f"])
            #expect(value["a"]?.stringValue == text && value["b"]?.stringValue == "-0.50" && value["c"]?.int64Value == 7)
            #expect(value["d"]?.stringValue == t.rfc3339 && value["e"] == .bool(false) && value["f"]?.isNull == true)
        }
    }

    @Test("the manifest's totals add exact decimals per asset, its sha256 is the bytes written, and highestPosition the largest")
    func manifestTotals() throws {
        var rng = SplitMix64(seed: 0x70_7A)
        let assets = ["USDT", "BTC", "USD"]
        var manifest = ExportManifest(kind: .events, from: Timestamp(seconds: 0), to: Timestamp(seconds: 100), format: .csv)
        var cents: [String: Int64] = [:], rows: [String: Int64] = [:], written = [UInt8](), highest: Int64 = 0
        for i in 0..<3_000 {
            let asset = assets.randomElement(using: &rng)!
            let c = Int64.random(in: -100_000...10_000_000, using: &rng)
            let text = Self.centsText(c)
            let position = Int64.random(in: 1...1_000_000, using: &rng)
            highest = max(highest, position)
            cents[asset, default: 0] += c
            rows[asset, default: 0] += 1
            let bytes = Array("row \(i)\r\n".utf8)
            manifest.wrote(bytes)
            written += bytes
            manifest.counted(asset: asset, amount: text, position: position)
        }
        manifest.counted(asset: nil, amount: "5", position: nil)
        let json = manifest.json(ledgerHead: (9, [UInt8](repeating: 1, count: 32)), generatedAt: Timestamp(seconds: 5))
        #expect(json["rows"]?.int64Value == 3_001)
        #expect(json["sha256"]?.stringValue == Hex.encode(Crypto.sha256(written)))
        #expect(json["highestPosition"]?.int64Value == highest)
        let totals = json["totals"]?.arrayValue ?? []
        #expect(totals.compactMap { $0["asset"]?.stringValue } == assets.sorted())
        for t in totals {
            let asset = t["asset"]?.stringValue ?? ""
            #expect(t["rows"]?.int64Value == rows[asset])
            #expect(ExactDecimal(t["amount"]?.stringValue ?? "") == ExactDecimal(Self.centsText(cents[asset] ?? 0)), "\(asset): \(t)")
        }
    }

    static func centsText(_ c: Int64) -> String {
        (c < 0 ? "-" : "") + String(abs(c) / 100) + "." + String(format: "%02d", abs(c) % 100)
    }
}
