/// A configuration mistake, named so the operator can fix it.
public enum ConfigurationError: Error, CustomStringConvertible {
    case missing(String, hint: String)
    case invalid(String, value: String, hint: String)

    public var description: String {
        switch self {
        case .missing(let name, let hint): return "\(name) is not set: \(hint)"
        case .invalid(let name, let value, let hint): return "\(name)=\(value) is not valid: \(hint)"
        }
    }
}
