import Foundation

/// The support console's files (console.md): the `Console/` folder of the repository, read
/// once at start and served from memory. Only the files found then can be served, so no
/// request path ever reaches the file system. It is found as API/openapi.json is:
/// `$LEDGER_CONSOLE` (the folder), else ./Console, else in the package the executable was
/// built in.
public struct ConsoleFiles: Sendable {
    /// One file: its bytes and the Content-Type it is served with.
    public struct File: Sendable {
        public let bytes: [UInt8]
        public let contentType: String
    }

    /// By path relative to the folder, as "app.js" or "views/order.js".
    public let files: [String: File]
    /// Where they were read from.
    public let folder: String

    public static let relativePath = "Console"
    /// The page every client-side route of the console answers with.
    public static let appPage = "index.html"

    public init(files: [String: File], folder: String) {
        self.files = files
        self.folder = folder
    }

    /// `explicit` ($LEDGER_CONSOLE) when given, else ./Console, else beside the package the
    /// executable was built in; nil when none holds the app's page.
    public static func locate(explicit: String?, executablePath: String) -> String? {
        if let folder = explicit { return folder }
        var candidates = [FileManager.default.currentDirectoryPath + "/" + relativePath]
        var url = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(url.path + "/" + relativePath)
            url = url.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/" + appPage) }
    }

    /// Reads every file under `folder` (hidden ones left out); it must hold index.html.
    public static func load(folder: String) throws(ConsoleFilesError) -> ConsoleFiles {
        let root = URL(fileURLWithPath: folder).standardizedFileURL
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey],
                                                          options: [.skipsHiddenFiles]) else {
            throw .unreadable(folder)
        }
        var files: [String: File] = [:]
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(prefix), let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
            let name = String(path.dropFirst(prefix.count))
            files[name] = File(bytes: [UInt8](data), contentType: contentType(name))
        }
        guard files[appPage] != nil else { throw .noAppPage(folder) }
        return ConsoleFiles(files: files, folder: folder)
    }

    /// The Content-Type for a file name's extension; with `nosniff` a browser runs a module
    /// only when it is served as JavaScript.
    public static func contentType(_ name: String) -> String {
        switch name.split(separator: ".").last.map({ $0.lowercased() }) ?? "" {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "txt", "md": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}

/// Why the console's files could not be loaded, in words that say what to do.
public enum ConsoleFilesError: Error, CustomStringConvertible {
    case unreadable(String)
    case noAppPage(String)

    public var description: String {
        switch self {
        case .unreadable(let path):
            "cannot read the console's files at \(path) (LEDGER_CONSOLE, or \(ConsoleFiles.relativePath)/ in the project folder)"
        case .noAppPage(let folder):
            "the console folder \(folder) has no \(ConsoleFiles.appPage) (LEDGER_CONSOLE names the folder)"
        }
    }
}
