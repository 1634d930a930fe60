import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerCore
import Synchronization

/// The web3 gateway's order query (providers.md): `POST {API_BASE}/api/pay/open/queryOrder`
/// with `X-Pay-Api-Key` and `{"merchantOrderNo": ...}`. Answers the response's raw bytes;
/// the core maps them (`Web3Query`). The key never appears in an error.
package struct Web3Gateway: Sendable {
    package let endpoint: URL
    package let apiKey: String

    /// How long one query may take.
    package static let timeoutSeconds: Double = 10

    /// `base` must be https, or http on a loopback host (a gateway on this machine, tests):
    /// the key must not cross a network in clear.
    package init(base: String, apiKey: String) throws {
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
              scheme == "https" || (scheme == "http" && Self.isLoopback(host)), url.user == nil, url.password == nil else {
            // The value is quoted in the error (which is logged) only without anything before an `@`.
            let shown = base.contains("@") ? "(a URL with a user or password, not shown)" : base
            throw ConfigurationError.invalid("LEDGER_WEB3_API_BASE", value: shown,
                                             hint: "give the gateway's https base URL (http only on a loopback host), with no user or password in it")
        }
        endpoint = url.appendingPathComponent("api/pay/open/queryOrder")
        self.apiKey = apiKey
    }

    /// `localhost`, `::1`, or an IPv4 address in 127.0.0.0/8 written as one (a name that
    /// merely begins with `127.`, such as `127.attacker.example`, is not).
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return false }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }

    /// `text` with the key replaced: a gateway may echo it back in an error.
    package func redacted(_ text: String) -> String {
        apiKey.isEmpty ? text : text.replacingOccurrences(of: apiKey, with: "[redacted]")
    }

    package func queryOrder(_ no: MerchantOrderNo) throws -> [UInt8] {
        var request = URLRequest(url: endpoint, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: Self.timeoutSeconds)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(apiKey, forHTTPHeaderField: "X-Pay-Api-Key")
        request.httpBody = Data(JSONSerializer.bytes(.object([("merchantOrderNo", .string(no.value))])))
        let answer = Mutex<Result<(Int, [UInt8]), GatewayError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Self.session.dataTask(with: request) { data, response, error in
            let result: Result<(Int, [UInt8]), GatewayError>
            if let error {
                result = .failure(.transport(error.localizedDescription))
            } else if let http = response as? HTTPURLResponse {
                result = .success((http.statusCode, data.map { [UInt8]($0) } ?? []))
            } else {
                result = .failure(.transport("no HTTP response"))
            }
            answer.withLock { $0 = result }
            done.signal()
        }
        task.resume()
        guard done.wait(timeout: .now() + Self.timeoutSeconds + 2) == .success else {
            task.cancel()
            throw GatewayError.timedOut(Self.timeoutSeconds)
        }
        let (status, body) = try answer.withLock { $0 }!.get()
        // Redacted whole, then cut: a key echoed across the cut would leave its first part.
        guard (200..<300).contains(status) else {
            throw GatewayError.status(status, Self.excerpt(redacted(String(decoding: body, as: UTF8.self))))
        }
        return body
    }

    /// No cookies, no cache, no redirects (the key would follow them to another host):
    /// each query stands alone, and a 3xx is an error.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }()

    private static func excerpt(_ text: String) -> String {
        let head = String(decoding: text.utf8.prefix(200), as: UTF8.self)
        return head.unicodeScalars.map { $0.value < 32 ? " " : String($0) }.joined()
    }
}

/// Why a query gave no answer to map.
package enum GatewayError: Error, CustomStringConvertible {
    case transport(String)
    case status(Int, String)
    case timedOut(Double)

    package var description: String {
        switch self {
        case .transport(let why): return "the gateway could not be reached: \(why)"
        case .status(let code, let body): return "the gateway answered HTTP \(code): \(body)"
        case .timedOut(let seconds): return "the gateway did not answer within \(Int(seconds)) s"
        }
    }
}

/// Refuses every redirect: the response itself comes back.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    package func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
