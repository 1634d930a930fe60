/// A place in a JSON document, written as a reader would name it: `payload.items[2].n`
/// (keys of letters, digits, `_` and `-` after a dot, others quoted in brackets).
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) { self.components = components }

    public func appending(_ component: Component) -> JSONPath { JSONPath(components + [component]) }

    /// The top-level key the path starts with, if it starts with one.
    public var topKey: String? {
        if case .key(let k)? = components.first { return k }
        return nil
    }

    public var description: String {
        var out = ""
        for component in components {
            switch component {
            case .index(let n): out += "[\(n)]"
            case .key(let k):
                let plain = !k.isEmpty && k.utf8.allSatisfy { c in
                    (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 0x5f || c == 0x2d
                }
                if plain { out += (out.isEmpty ? "" : ".") + k } else { out += "[\(CoreError.quote(k))]" }
            }
        }
        return out
    }

    /// The path of the value being read at byte `offset` of `bytes`, a document that is
    /// well-formed up to there (the parser stopped at `offset`). Only called for errors.
    public static func locate(offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> JSONPath {
        struct Level {
            var isObject: Bool
            var key: String?
            var index = 0
            var expectingKey: Bool
        }
        var stack: [Level] = []
        var i = 0
        let end = min(offset, bytes.count)
        while i < end {
            let c = bytes[i]
            switch c {
            case UInt8(ascii: "\""):
                let start = i + 1
                i += 1
                while i < end && bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                if let top = stack.last, top.isObject, top.expectingKey, i <= end {
                    let stop = min(i, end)
                    stack[stack.count - 1].key = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<max(start, stop)]), as: UTF8.self)
                }
            case UInt8(ascii: ":"):
                if !stack.isEmpty { stack[stack.count - 1].expectingKey = false }
            case UInt8(ascii: ","):
                if let top = stack.last {
                    if top.isObject { stack[stack.count - 1].expectingKey = true; stack[stack.count - 1].key = nil }
                    else { stack[stack.count - 1].index += 1 }
                }
            case UInt8(ascii: "{"): stack.append(Level(isObject: true, key: nil, expectingKey: true))
            case UInt8(ascii: "["): stack.append(Level(isObject: false, key: nil, expectingKey: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !stack.isEmpty { stack.removeLast() }
            default: break
            }
            i += 1
        }
        var components: [Component] = []
        for level in stack {
            if level.isObject {
                guard let key = level.key else { break }
                components.append(.key(key))
            } else {
                components.append(.index(level.index))
            }
        }
        return JSONPath(components)
    }
}
