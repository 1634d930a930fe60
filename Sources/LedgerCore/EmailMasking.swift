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
    ///
    /// Generous on purpose (a false mask costs a support agent a glance, a miss leaks an
    /// address): local parts may hold any RFC 5322 character and any non-ASCII one
    /// (RFC 6531), or be quoted; domains need no dot (`jane@localhost`). In a URL-encoded address (`%40`), `=` and `&` end the local part, so
    /// the query string around it stays readable.
    public static func mask(_ text: String) -> String {
        guard mayHoldAddress(text) else { return text }
        let b = Array(text.utf8)
        var out = [UInt8]()
        out.reserveCapacity(b.count)
        var i = 0
        var copiedTo = 0
        // Where the last separator ended: a local part never reaches back past it, which
        // keeps a run of separators ("%40%40%40…", whose bytes are local characters) linear.
        var floor = 0
        while i < b.count {
            // "@", or "%40" as in a URL-encoded query string (Banxa's rawQuery).
            let separator: Int
            let encoded: Bool
            if b[i] == UInt8(ascii: "@") {
                (separator, encoded) = (1, false)
            } else if b[i] == UInt8(ascii: "%"), i + 2 < b.count, b[i + 1] == UInt8(ascii: "4"), b[i + 2] == UInt8(ascii: "0") {
                (separator, encoded) = (3, true)
            } else {
                i += 1
                continue
            }
            let lowest = max(copiedTo, floor)
            floor = i + separator
            var start = i
            if !encoded, start - 1 > lowest, b[start - 1] == UInt8(ascii: "\""),
               let open = b[lowest..<(start - 1)].lastIndex(of: UInt8(ascii: "\"")) {
                start = open   // a quoted local part, masked from its opening quote
            } else {
                while start > lowest, isLocal(b[start - 1], encoded: encoded) { start -= 1 }
            }
            var end = i + separator
            while end < b.count, isDomain(b[end]) { end += 1 }
            // A domain that begins beyond ASCII (`иван@почта.рф`, or percent-encoded in a
            // URL-encoded address) or is an address literal (`jane@[192.0.2.1]`) is left as
            // it is, and its local part masked all the same.
            let domainBegins = end > i + separator
                || (end < b.count && (b[end] >= 0x80 || b[end] == UInt8(ascii: "[") || (encoded && b[end] == UInt8(ascii: "%"))))
            if start < i, domainBegins {
                out.append(contentsOf: b[copiedTo..<start])
                out.append(contentsOf: b[start..<min(start + characterLength(b[start]), i)])
                out.append(contentsOf: "***".utf8)
                out.append(contentsOf: b[i..<end])
                copiedTo = end
            }
            i = end
        }
        out.append(contentsOf: b[copiedTo...])
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 5322 (and RFC 6531: non-ASCII) local-part characters; in a URL-encoded
    /// address, `=` and `&` belong to the query string, not the address.
    private static func isLocal(_ c: UInt8, encoded: Bool) -> Bool {
        isDomain(c) || c >= 0x80 || "+_%!#$'*/?^`{|}~".utf8.contains(c)
            || (!encoded && (c == UInt8(ascii: "=") || c == UInt8(ascii: "&")))
    }

    /// ASCII only: a domain that went on through non-ASCII bytes would swallow a
    /// separator (a no-break space, "、") and the next address's local part with it.
    /// A non-ASCII domain is cut short (or not begun), and its address still masked.
    private static func isDomain(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
    }

    /// The bytes of the UTF-8 character `lead` starts (1 for ASCII).
    private static func characterLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...: return 4
        case 0xE0...: return 3
        case 0xC0...: return 2
        default: return 1
        }
    }
}
