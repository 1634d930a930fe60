/// `--name value` options of one subcommand, read once and checked.
struct Options {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>, allowed: Set<String>) throws {
        var rest = arguments
        while let name = rest.popFirst() {
            guard name.hasPrefix("--"), allowed.contains(String(name.dropFirst(2))) else {
                throw UsageError("unknown option \(name)")
            }
            guard let value = rest.popFirst() else { throw UsageError("\(name) needs a value") }
            values[String(name.dropFirst(2))] = value
        }
    }

    func string(_ name: String) -> String? { values[name] }

    func required(_ name: String) throws -> String {
        guard let value = values[name], !value.isEmpty else { throw UsageError("--\(name) is required") }
        return value
    }

    func int(_ name: String, default value: Int, range: ClosedRange<Int> = 1...1_000_000) throws -> Int {
        guard let text = values[name] else { return value }
        guard let n = Int(text), range.contains(n) else { throw UsageError("--\(name) must be a whole number in \(range)") }
        return n
    }

    func optionalInt(_ name: String) throws -> Int? {
        guard values[name] != nil else { return nil }
        return try int(name, default: 0, range: 1...Int.max)
    }

    func seconds(_ name: String, default value: Double) throws -> Double {
        guard let text = values[name] else { return value }
        guard let n = Double(text), n > 0, n <= 600 else { throw UsageError("--\(name) must be seconds in (0, 600]") }
        return n
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
