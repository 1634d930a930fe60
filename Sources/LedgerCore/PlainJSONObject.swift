import Glibc

/// A JSON object's top-level members as `PlainJSONReader` reads them, each plain string
/// member's text left where it lies until it is asked for: what turning a stored payload
/// into an event needs (a few of its strings), without a tree of every member made and
/// then freed. Valid only while the bytes it was read from are.
public struct PlainJSONObject {
    /// A member's value: a plain string's bytes (between the quotes, nothing to decode),
    /// or any other value, read.
    public enum Member {
        case text(Range<Int>)
        case value(JSONValue)
    }

    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var keys: [Range<Int>] = []
    private(set) var members: [Member] = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        keys.reserveCapacity(16)
        members.reserveCapacity(16)
    }

    mutating func append(key: Range<Int>, _ member: Member) {
        keys.append(key)
        members.append(member)
    }

    /// The member named `key`: keys in jsonb's order (all the reader accepts) never repeat.
    public func member(_ key: String) -> Member? {
        var key = key
        return key.withUTF8 { k -> Member? in
            for (index, found) in keys.enumerated() where found.count == k.count {
                if k.count == 0 || memcmp(bytes.baseAddress! + found.lowerBound, k.baseAddress!, k.count) == 0 {
                    return members[index]
                }
            }
            return nil
        }
    }

    /// The member named `key` as a value, as the whole object's tree holds it.
    public func value(_ key: String) -> JSONValue? {
        member(key).map(value)
    }

    public func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The whole object, as `PlainJSONReader.parse` reads it.
    public var value: JSONValue {
        .object(zip(keys, members).map { (text($0.0), value($0.1)) })
    }

    private func value(_ member: Member) -> JSONValue {
        switch member {
        case .text(let range): return .string(text(range))
        case .value(let value): return value
        }
    }
}
