/// A merchant's order number: 1-64 characters of `A-Z a-z 0-9 . _ : -`.
/// The narrow alphabet keeps it safe in URLs, stream names, logs and CSV cells.
public struct MerchantOrderNo: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let value: String

    public init(_ text: String) throws(CoreError) {
        guard Self.isValid(text) else { throw .invalidMerchantOrderNo(text) }
        value = text
    }

    public var description: String { value }

    /// The event stream that holds this order's events.
    public var stream: String { Self.streamPrefix + value }

    /// How every order's stream name begins.
    public static let streamPrefix = "order-"

    /// The order whose stream this is, or nil for another stream (an enrollment's).
    public init?(stream: String) {
        guard stream.hasPrefix(Self.streamPrefix), let no = try? MerchantOrderNo(String(stream.dropFirst(Self.streamPrefix.count))) else {
            return nil
        }
        self = no
    }

    public static func < (a: MerchantOrderNo, b: MerchantOrderNo) -> Bool { a.value < b.value }

    /// True for 1-64 characters of `A-Z a-z 0-9 . _ : -` (also used for enrollment references).
    public static func isValid(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 64 else { return false }
        for c in utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: ":"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }
}
