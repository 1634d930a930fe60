import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerCore
import Synchronization

/// The web3 gateway's order query (providers.md): `POST {API_BASE}/api/pay/open/queryOrder`
/// with `X-Pay-Api-Key` and `{"merchantOrderNo": ...}`. Answers the response's raw bytes;
/// the core maps them (`Web3Query`). The key never appears in an error.
struct Web3Gateway: Sendable {
    let endpoint: URL
    let apiKey: String
    let timeoutSeconds: Double

    init(base: String, apiKey: String, timeoutSeconds: Double = 10) throws {
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else {
            throw ConfigurationError.invalid("LEDGER_WEB3_API_BASE", value: base, hint: "give the gateway's http(s) base URL")
        }
        endpoint = url.appendingPathComponent("api/pay/open/queryOrder")
        self.apiKey = apiKey
        self.timeoutSeconds = timeoutSeconds
    }

    func queryOrder(_ no: MerchantOrderNo) throws -> [UInt8] {
        var request = URLRequest(url: endpoint, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeoutSeconds)
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
        guard done.wait(timeout: .now() + timeoutSeconds + 2) == .success else {
            task.cancel()
            throw GatewayError.timedOut(timeoutSeconds)
        }
        let (status, body) = try answer.withLock { $0 }!.get()
        guard (200..<300).contains(status) else { throw GatewayError.status(status, Self.excerpt(body)) }
        return body
    }

    /// No cookies, no cache: each query stands alone.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()

    private static func excerpt(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return text.unicodeScalars.map { $0.value < 32 ? " " : String($0) }.joined()
    }
}

/// Why a query gave no answer to map.
enum GatewayError: Error, CustomStringConvertible {
    case transport(String)
    case status(Int, String)
    case timedOut(Double)

    var description: String {
        switch self {
        case .transport(let why): return "the gateway could not be reached: \(why)"
        case .status(let code, let body): return "the gateway answered HTTP \(code): \(body)"
        case .timedOut(let seconds): return "the gateway did not answer within \(Int(seconds)) s"
        }
    }
}
