/// Masks e-mail addresses for roles that may not see them (support, ingest):
/// `jane.doe@example.com` becomes `j***@example.com`. Pure, so the HTTP layer
/// can apply it to any read model, timeline payload or export row.
public enum EmailMasking {
    /// Masks every e-mail address found in any string of `value`, object keys included.
    public static func mask(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s): return .string(mask(s))
        case .array(let items): return .array(items.map { mask($0) })
        case .object(let fields): return .object(fields.map { (mask($0.0), mask($0.1)) })
        case .null, .bool, .number: return value
        }
    }

    /// Whether `text` has an "@" or a "%40" at all: one pass over its bytes, no
    /// copy (most strings of a read model have neither).
    public static func mayHoldAddress(_ text: String) -> Bool {
        var percentSeen = 0   // how much of "%40" the bytes just seen spell
        for c in text.utf8 {
            if c == UInt8(ascii: "@") { return true }
            switch (percentSeen, c) {
            case (_, UInt8(ascii: "%")): percentSeen = 1
            case (1, UInt8(ascii: "4")): percentSeen = 2
            case (2, UInt8(ascii: "0")): return true
            default: percentSeen = 0
            }
        }
        return false
    }

    /// Masks every e-mail address inside `text`, keeping the first character of
    /// the local part and the whole domain (support staff can still tell providers apart).
    public static func mask(_ text: String) -> String {
        guard mayHoldAddress(text) else { return text }
        let b = Array(text.utf8)
        var out = [UInt8]()
        out.reserveCapacity(b.count)
        var i = 0
        var copiedTo = 0
        while i < b.count {
            // "@", or "%40" as in a URL-encoded query string (Banxa's rawQuery).
            let separator: Int
            if b[i] == UInt8(ascii: "@") {
                separator = 1
            } else if b[i] == UInt8(ascii: "%"), i + 2 < b.count, b[i + 1] == UInt8(ascii: "4"), b[i + 2] == UInt8(ascii: "0") {
                separator = 3
            } else {
                i += 1
                continue
            }
            var start = i
            while start > copiedTo, isLocal(b[start - 1]) { start -= 1 }
            var end = i + separator
            var sawDot = false
            while end < b.count, isDomain(b[end]) { if b[end] == UInt8(ascii: ".") { sawDot = true }; end += 1 }
            if start < i, sawDot, end > i + separator {
                out.append(contentsOf: b[copiedTo..<start])
                out.append(b[start])
                out.append(contentsOf: "***".utf8)
                out.append(contentsOf: b[i..<end])
                copiedTo = end
            }
            i = end
        }
        out.append(contentsOf: b[copiedTo...])
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 5322 local-part characters, except `=` and `&`, so a query string
    /// around an address stays readable.
    private static func isLocal(_ c: UInt8) -> Bool {
        isDomain(c) || "+_%!#$'*/?^`{|}~".utf8.contains(c)
    }

    private static func isDomain(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
    }
}
