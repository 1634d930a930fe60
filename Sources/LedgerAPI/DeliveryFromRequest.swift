import LedgerHTTP
import LedgerService

extension HTTPRequest {
    /// The request as the use cases take it: headers, body, request id, remote address and path.
    var delivery: Delivery {
        Delivery(headers: headers, body: body, requestID: requestID, remote: remoteAddress, path: path)
    }
}
