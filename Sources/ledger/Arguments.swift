

/// Parsed `--name value` options, `--flag` switches and positional words.
public struct Arguments: Sendable {
    public var positional: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// `valued` names the options that take a value; anything else starting with `--` is a flag.
    public init(_ words: [String], valued: Set<String>) throws {
        var i = 0
        while i < words.count {
            let w = words[i]
            if w.hasPrefix("--") {
                var name = String(w.dropFirst(2))
                var inline: String?
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if valued.contains(name) {
                    // Given twice, one value would silently win (a second `--checkpoints` would
                    // drop the first's notes from the check).
                    guard options[name] == nil else { throw CLIError.usage("--\(name) is given more than once: give it once") }
                    if let inline {
                        options[name] = inline
                    } else {
                        guard i + 1 < words.count else { throw CLIError.usage("--\(name) needs a value") }
                        options[name] = words[i + 1]
                        i += 1
                    }
                } else {
                    guard inline == nil else { throw CLIError.usage("--\(name) takes no value") }
                    flags.insert(name)
                }
            } else {
                positional.append(w)
            }
            i += 1
        }
    }

    public func value(_ name: String) -> String? { options[name] }
    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    public func required(_ name: String) throws -> String {
        guard let v = options[name], !v.isEmpty else { throw CLIError.usage("--\(name) is required") }
        return v
    }

    /// Refuses flags the command does not know, so a typo is not silently ignored.
    public func allowOnly(flags allowed: Set<String>) throws {
        if let unknown = flags.subtracting(allowed).sorted().first { throw CLIError.usage("unknown option --\(unknown)") }
    }

    /// For a command that takes options only: a stray word is a usage error, not ignored.
    public func refuseWords(_ command: String) throws {
        guard positional.isEmpty else {
            throw CLIError.usage("ledger \(command) takes no words besides its options: unexpected \(positional.joined(separator: " "))")
        }
    }
}

/// A CLI failure: one line on stderr and this exit code.
public enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    case failed(String, exitCode: Int32)

    public var description: String {
        switch self {
        case .usage(let m): return m + " (see --help)"
        case .failed(let m, _): return m
        }
    }

    public var exitCode: Int32 {
        switch self {
        case .usage: return 64
        case .failed(_, let code): return code
        }
    }
}
