/// A merchant's order number: 1-64 characters of `A-Z a-z 0-9 . _ : -`, and neither
/// `.` nor `..` (http-api.md). The narrow alphabet keeps it safe in URLs, stream names,
/// logs and CSV cells; the two dot segments are refused because clients that normalise
/// paths (curl, browsers) turn `/v1/orders/./events` into `/v1/orders/events`, so such an
/// order could never be read or written by its path.
public struct MerchantOrderNo: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let value: String

    /// An order number the ledger's own API is given (a request's path or body).
    public init(_ text: String) throws(CoreError) {
        guard Self.isValid(text) else { throw .invalidMerchantOrderNo(text) }
        value = text
    }

    /// An order number read back from the ledger's own storage (events, read model rows,
    /// the poll schedule, a cursor, an operator naming an order), or named by a provider's
    /// verified delivery: the alphabet and length only, so an order registered as `.` or
    /// `..` before they were refused still replays, rebuilds, verifies, exports and takes
    /// its provider's webhooks.
    public init(stored text: String) throws(CoreError) {
        guard Self.isStoredForm(text) else { throw .invalidMerchantOrderNo(text) }
        value = text
    }

    public var description: String { value }

    /// The event stream that holds this order's events.
    public var stream: String { Self.streamPrefix + value }

    /// How every order's stream name begins.
    public static let streamPrefix = "order-"

    /// The order whose stream this is, or nil for another stream (an enrollment's).
    public init?(stream: String) {
        guard stream.hasPrefix(Self.streamPrefix),
              let no = try? MerchantOrderNo(stored: String(stream.dropFirst(Self.streamPrefix.count))) else {
            return nil
        }
        self = no
    }

    public static func < (a: MerchantOrderNo, b: MerchantOrderNo) -> Bool { a.value < b.value }

    /// True for 1-64 characters of `A-Z a-z 0-9 . _ : -` other than `.` and `..` (also
    /// used for enrollment references, which travel in paths the same way).
    public static func isValid(_ text: String) -> Bool {
        isStoredForm(text) && !isDotSegment(text)
    }

    /// `.` or `..`: a path segment that URL normalisation (RFC 3986, 5.2.4) removes.
    public static func isDotSegment(_ text: String) -> Bool { text == "." || text == ".." }

    /// True for 1-64 characters of `A-Z a-z 0-9 . _ : -`, dot segments included: what
    /// storage may hold from before they were refused (see `init(stored:)`).
    public static func isStoredForm(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 64 else { return false }
        return utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy(isAlphabet) }
            ?? utf8.allSatisfy(isAlphabet)
    }

    /// The alphabet `A-Z a-z 0-9 . _ : -` as two 64-bit masks over ASCII (bit c of the
    /// pair is set for each byte c of it).
    private static let alphabetLow: UInt64 = 0x07FF_6000_0000_0000    // - . 0-9 :
    private static let alphabetHigh: UInt64 = 0x07FF_FFFE_87FF_FFFE   // A-Z _ a-z

    private static func isAlphabet(_ c: UInt8) -> Bool {
        c < 64 ? (alphabetLow >> UInt64(c)) & 1 == 1 : c < 128 && (alphabetHigh >> UInt64(c - 64)) & 1 == 1
    }
}
