/// Checks on a request head as received, decided before routing: its size and field count
/// (431), and bytes that libmicrohttpd's C strings would hide (400).
///
/// libmicrohttpd 0.9.75 keeps the request target and every field as NUL-terminated strings
/// inside its read buffer, so a NUL byte sent inside one silently ends it there:
/// `GET /v1/orders/NO<NUL>x` reads order NO, and `Transfer-Encoding: chunked<NUL>, gzip` reads
/// as plain chunked. What it replaced on its own is known: the separators (the spaces of the
/// request line, `?`, `&` and `=` of the query, each field's colon and every line end) become
/// NUL, and the blanks it skipped stay as they were. So in the raw head every byte that no
/// parsed string covers must be NUL, a space or a tab; any other byte there was cut off by a
/// NUL the client sent (or by a folded header line, which RFC 9112 also lets a server refuse).
enum HeadInspection {
    enum Verdict: Equatable {
        case fine
        /// 414: the request line alone is over the head limit.
        case targetTooLong(detail: String)
        /// 431: the head is over its limit of bytes or fields.
        case tooLarge(detail: String)
        case hiddenBytes
    }

    /// - Parameters:
    ///   - raw: the request line and headers exactly as libmicrohttpd holds them.
    ///   - visible: the byte ranges of `raw` that its parsed strings cover (method, target, query
    ///     names and values, version, field names and values).
    ///   - requestLineBytes: how much of `raw` the request line takes.
    static func check(raw: UnsafeRawBufferPointer, visible: [Range<Int>], fieldCount: Int, requestLineBytes: Int = 0,
                      maxHeadBytes: Int, maxFields: Int) -> Verdict {
        if requestLineBytes > maxHeadBytes {
            return .targetTooLong(detail: "The request line takes \(requestLineBytes) bytes; the limit for the whole head is \(maxHeadBytes).")
        }
        if raw.count > maxHeadBytes {
            return .tooLarge(detail: "The request line and headers take \(raw.count) bytes; the limit is \(maxHeadBytes).")
        }
        if fieldCount > maxFields {
            return .tooLarge(detail: "The request has \(fieldCount) header fields; the limit is \(maxFields).")
        }
        return hidesBytes(raw: raw, visible: visible) ? .hiddenBytes : .fine
    }

    /// True when a byte outside every visible range is anything but NUL, space or tab.
    static func hidesBytes(raw: UnsafeRawBufferPointer, visible: [Range<Int>]) -> Bool {
        var covered = visible
        // The ranges arrive nearly in order (line, fields, then the query): sorting is cheap.
        covered.sort { $0.lowerBound < $1.lowerBound }
        var position = 0
        var next = 0
        while position < raw.count {
            if next < covered.count, covered[next].lowerBound <= position {
                position = max(position, covered[next].upperBound)
                next += 1
                continue
            }
            let end = next < covered.count ? min(covered[next].lowerBound, raw.count) : raw.count
            while position < end {
                let byte = raw[position]
                if byte != 0 && byte != 32 && byte != 9 { return true }
                position += 1
            }
        }
        return false
    }
}
