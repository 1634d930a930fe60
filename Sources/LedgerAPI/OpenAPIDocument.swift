import Foundation
import LedgerCore

/// The OpenAPI 3.1 description of the HTTP API, served at GET /openapi.json as the bytes of
/// API/openapi.json. A file rather than Swift source, so that it is read, diffed and checked
/// (`OpenAPIDocumentTests`, Ops/check-api) as the document it is. It is found as
/// Migrations/ is: `$LEDGER_OPENAPI` (the file), else ./API/openapi.json, else in the
/// package the executable was built in; `ledger serve` loads it once and refuses to start
/// without it, so a missing document is a clear line at start, not a 500 on every request.
public struct OpenAPIDocument: Sendable {
    /// The file's bytes, served as they are.
    public let bytes: [UInt8]
    /// Where they were read from.
    public let path: String

    public static let relativePath = "API/openapi.json"

    /// `explicit` ($LEDGER_OPENAPI) when given, else ./API/openapi.json, else beside the
    /// package the executable was built in.
    public static func locate(explicit: String?, executablePath: String) -> String? {
        if let file = explicit { return file }
        var candidates = [FileManager.default.currentDirectoryPath + "/" + relativePath]
        var url = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(url.path + "/" + relativePath)
            url = url.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Finds and reads the document; it must be a JSON object.
    public static func load(explicit: String?, executablePath: String) throws(OpenAPIDocumentError) -> OpenAPIDocument {
        guard let path = locate(explicit: explicit, executablePath: executablePath) else { throw .notFound }
        return try load(path: path)
    }

    public static func load(path: String) throws(OpenAPIDocumentError) -> OpenAPIDocument {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        let bytes = [UInt8](data)
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch { throw .notJSON(path, String(describing: error)) }
        guard case .object = value else { throw .notJSON(path, "not a JSON object") }
        return OpenAPIDocument(bytes: bytes, path: path)
    }
}

/// Why the OpenAPI document could not be loaded, in words that say what to do.
public enum OpenAPIDocumentError: Error, CustomStringConvertible {
    case notFound
    case unreadable(String)
    case notJSON(String, String)

    public var description: String {
        switch self {
        case .notFound:
            "cannot find \(OpenAPIDocument.relativePath): run from the project folder or set LEDGER_OPENAPI to the file"
        case .unreadable(let path):
            "cannot read the OpenAPI document \(path) (LEDGER_OPENAPI, or \(OpenAPIDocument.relativePath) in the project folder)"
        case .notJSON(let path, let why):
            "the OpenAPI document \(path) is not a JSON object: \(why)"
        }
    }
}
