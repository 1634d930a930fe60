/// Request-smuggling defence, decided from the header block before any body byte is read.
///
/// libmicrohttpd 0.9.75 answers `Transfer-Encoding: chunked` + `Content-Length` and two
/// different Content-Lengths with 200, and waits for `Transfer-Encoding: gzip` bodies until the
/// timeout. A proxy in front could frame such a request differently than we do, so a second
/// request hides inside the first. We accept only unambiguous framing: no body, one clean
/// Content-Length, or exactly `Transfer-Encoding: chunked` on HTTP/1.1.
enum FramingGuard {
    enum Verdict: Equatable {
        case accept(contentLength: Int?, chunked: Bool)
        case reject(status: Int, title: String, detail: String)
    }

    static func check(headers: [(String, String)], version: String, maxBodyBytes: Int) -> Verdict {
        var transferEncodings: [String] = []
        var contentLengths: [String] = []
        for (rawName, value) in headers {
            let name = HTTPRequest.fieldName(rawName)
            let trimmedName = name.trimmingSpaces()
            guard trimmedName == "transfer-encoding" || trimmedName == "content-length" else { continue }
            // "Transfer-Encoding :" or a tab-padded name is an obfuscation some proxies still honour.
            if trimmedName != name { return malformed("a framing header name carries whitespace") }
            if name == "transfer-encoding" { transferEncodings.append(value) } else { contentLengths.append(value) }
        }

        if !transferEncodings.isEmpty {
            if transferEncodings.count > 1 { return malformed("several Transfer-Encoding fields") }
            let coding = transferEncodings[0]
            if coding.trimmingSpaces().lowercased() != "chunked" || coding.trimmingSpaces() != coding {
                return malformed("Transfer-Encoding other than \"chunked\" is not accepted")
            }
            if !contentLengths.isEmpty { return malformed("both Transfer-Encoding and Content-Length") }
            if version != "HTTP/1.1" { return malformed("chunked transfer coding needs HTTP/1.1") }
            return .accept(contentLength: nil, chunked: true)
        }

        if contentLengths.count > 1 { return malformed("several Content-Length fields") }
        guard let text = contentLengths.first else { return .accept(contentLength: nil, chunked: false) }
        let digits = text.trimmingSpaces()
        guard !digits.isEmpty, digits.utf8.count <= 18,
              digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let length = Int(digits)
        else { return malformed("Content-Length is not a decimal number") }
        if length > maxBodyBytes {
            return .reject(status: 413, title: "Content Too Large",
                           detail: "The request body exceeds the limit of \(maxBodyBytes) bytes.")
        }
        return .accept(contentLength: length, chunked: false)
    }

    private static func malformed(_ detail: String) -> Verdict {
        .reject(status: 400, title: "Bad Request", detail: "Ambiguous request framing: \(detail).")
    }
}
