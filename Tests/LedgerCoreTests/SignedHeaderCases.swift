import LedgerCore

/// A webhook's signature headers built from parts that are each right or wrong in
/// a known way, with the answer the providers' rules give them: the verification
/// when every part is right, else the error for the flaw checked first (a missing
/// header, then a malformed signature, a malformed time, an unknown key, a wrong
/// signature, and last the time window).
struct SignedHeaderCase {
    var headers: [String: String]
    var body: [UInt8]
    var expected: Result<WebhookVerification, CoreError>
    /// What was done to the parts, for the failure message.
    var recipe: [String]
}

/// Builds signed header cases for the web3 and Banxa webhooks from one seeded generator.
struct SignedHeaderCases {
    var rng: SplitMix64
    let now = Timestamp(seconds: 1_764_417_600)
    let tolerance: Int64 = 300
    static let web3Keys = ["key-old", "key-new"]
    static let banxaAPIKey = "merchant-key"
    static let banxaSecrets = ["secret-old", "secret-new"]
    static let bodies = [FuzzTests.web3Body, FuzzTests.banxaBody, "", "{}"].map { Array($0.utf8) }

    private mutating func chance(_ oneIn: Int) -> Bool { Int.random(in: 0..<oneIn, using: &rng) == 0 }

    /// Spaces and tabs around a value: a header's value is read without them.
    private mutating func padded(_ value: String) -> String {
        guard chance(4) else { return value }
        let blanks = [" ", "\t", "  ", " \t"]
        return blanks.randomElement(using: &rng)! + value + blanks.randomElement(using: &rng)!
    }

    /// A header name as a sender might spell it; the lookup ignores case.
    private mutating func spelled(_ lowercased: String) -> String {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return lowercased.uppercased()
        case 1: return lowercased.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
        default: return lowercased
        }
    }

    /// A different hex digit at one place: still well formed, no longer the signature.
    private mutating func flipDigit(_ hex: String) -> String {
        var digits = Array(hex)
        let i = Int.random(in: 0..<digits.count, using: &rng)
        let others = Array("0123456789abcdef").filter { $0 != Character(digits[i].lowercased()) }
        digits[i] = others.randomElement(using: &rng)!
        return String(digits)
    }

    /// A signature value that is not 64 hex digits.
    private mutating func malformedHex(_ hex: String) -> String {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return String(hex.dropLast(Int.random(in: 1...63, using: &rng)))
        case 1: return hex + "0"
        case 2:
            var digits = Array(hex)
            digits[Int.random(in: 0..<digits.count, using: &rng)] = ["g", "z", "-", "é", " "].randomElement(using: &rng)!
            return String(digits)
        default: return "sha256=" + hex
        }
    }

    /// A time value that is not of the accepted shapes (`digits` of them are accepted).
    private mutating func malformedTime(_ digits: Set<Int>) -> String {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            let lengths = (1...19).filter { !digits.contains($0) }
            return String((0..<lengths.randomElement(using: &rng)!).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
        case 1: return "+" + String(now.seconds)
        case 2: return String(now.seconds) + ".5"
        default: return "1764417600x"
        }
    }

    /// A signing time: inside the window, or outside it by up to 10 minutes either way.
    private mutating func signedTime(inWindow: Bool) -> Int64 {
        let limit = tolerance * 1_000_000
        let skew = inWindow
            ? Int64.random(in: -limit...limit, using: &rng)
            : (Bool.random(using: &rng) ? 1 : -1) * Int64.random(in: (limit + 1)...(limit + 600_000_000), using: &rng)
        return now.microseconds + skew
    }

    /// The window includes both its ends.
    private func isInWindow(_ signedAt: Timestamp) -> Bool {
        abs(signedAt.microseconds - now.microseconds) <= tolerance * 1_000_000
    }

    private func windowError(_ signedAt: Timestamp) -> CoreError {
        let skew = signedAt.microseconds - now.microseconds
        return skew < 0 ? .staleTimestamp(skewSeconds: -skew / 1_000_000, toleranceSeconds: tolerance)
                        : .futureTimestamp(skewSeconds: skew / 1_000_000, toleranceSeconds: tolerance)
    }

    private func keyId(_ key: String) -> String { String(Hex.encode(Crypto.sha256(Array(key.utf8))).prefix(8)) }

    mutating func web3() -> SignedHeaderCase {
        var recipe: [String] = []
        let body = Self.bodies.randomElement(using: &rng)!
        let keyIndex = Int.random(in: 0..<Self.web3Keys.count, using: &rng)
        // The time: well formed (seconds, or milliseconds), missing, or malformed.
        let timeFlaw = Int.random(in: 0..<6, using: &rng)
        var micros = signedTime(inWindow: timeFlaw != 1)
        var timeText: String?
        switch timeFlaw {
        case 2: timeText = nil; recipe.append("no timestamp")
        case 3: timeText = malformedTime([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]); recipe.append("malformed timestamp")
        default:
            if Bool.random(using: &rng) {
                micros = micros / 1_000_000 * 1_000_000
                timeText = String(micros / 1_000_000)
            } else {
                micros = micros / 1_000 * 1_000
                timeText = String(micros / 1_000)
            }
        }
        let signedAt = Timestamp(microseconds: micros)
        let inWindow = isInWindow(signedAt)
        if !inWindow { recipe.append("outside the window") }
        // The signature, over the time as sent.
        var signature = Web3Webhook.signature(key: Self.web3Keys[keyIndex], timestamp: timeText ?? "", body: body)
        let signatureFlaw = Int.random(in: 0..<8, using: &rng)
        switch signatureFlaw {
        case 0: recipe.append("no signature")
        case 1: signature = ""; recipe.append("empty signature")
        case 2: signature = malformedHex(signature); recipe.append("malformed signature")
        case 3: signature = Web3Webhook.signature(key: "key-unknown", timestamp: timeText ?? "", body: body); recipe.append("unknown key")
        case 4: signature = flipDigit(signature); recipe.append("one digit changed")
        case 5: signature = signature.uppercased(); recipe.append("uppercase hex")
        default: break
        }
        let bodyChanged = chance(8)
        let sentBody = bodyChanged ? body + Array(" ".utf8) : body
        if bodyChanged { recipe.append("body changed after signing") }

        var headers: [String: String] = [:]
        if signatureFlaw != 0 { headers[spelled("x-pay-signature")] = padded(signature) }
        if let timeText { headers[spelled("x-pay-timestamp")] = padded(timeText) }
        let expected: Result<WebhookVerification, CoreError>
        if signatureFlaw == 0 || signatureFlaw == 1 {
            expected = .failure(.missingSignature(header: "X-Pay-Signature"))
        } else if timeText == nil {
            expected = .failure(.missingTimestamp(header: "X-Pay-Timestamp"))
        } else if signatureFlaw == 2 {
            expected = .failure(.malformedSignature("it must be 64 hexadecimal digits (HMAC-SHA256)"))
        } else if timeFlaw == 3 {
            expected = .failure(.malformedTimestamp(timeText!))
        } else if signatureFlaw == 3 || signatureFlaw == 4 || bodyChanged {
            expected = .failure(.badSignature)
        } else if !inWindow {
            expected = .failure(windowError(signedAt))
        } else {
            expected = .success(WebhookVerification(keyIndex: keyIndex, keyId: keyId(Self.web3Keys[keyIndex]), signedAt: signedAt))
        }
        return SignedHeaderCase(headers: headers, body: sentBody, expected: expected, recipe: recipe)
    }

    mutating func banxa() -> SignedHeaderCase {
        var recipe: [String] = []
        let body = Self.bodies.randomElement(using: &rng)!
        let secretIndex = Int.random(in: 0..<Self.banxaSecrets.count, using: &rng)
        // The nonce: milliseconds (13 digits) or microseconds (16), or malformed.
        let nonceFlaw = Int.random(in: 0..<6, using: &rng)
        var micros = signedTime(inWindow: nonceFlaw != 1)
        let nonce: String
        if nonceFlaw == 3 {
            nonce = malformedTime([13, 16])
            recipe.append("malformed nonce")
        } else if Bool.random(using: &rng) {
            micros = micros / 1_000 * 1_000
            nonce = String(micros / 1_000)
        } else {
            nonce = String(micros)
        }
        let signedAt = Timestamp(microseconds: micros)
        let inWindow = isInWindow(signedAt)
        if !inWindow { recipe.append("outside the window") }
        var signature = BanxaWebhook.signature(secret: Self.banxaSecrets[secretIndex], nonce: nonce, body: body)
        let signatureFlaw = Int.random(in: 0..<7, using: &rng)
        switch signatureFlaw {
        case 0: signature = malformedHex(signature).replacingOccurrences(of: ":", with: ""); recipe.append("malformed signature")
        case 1: signature = BanxaWebhook.signature(secret: "secret-unknown", nonce: nonce, body: body); recipe.append("unknown secret")
        case 2: signature = flipDigit(signature); recipe.append("one digit changed")
        case 3: signature = signature.uppercased(); recipe.append("uppercase hex")
        default: break
        }
        let wrongKey = chance(8)
        if wrongKey { recipe.append("another API key") }
        let bodyChanged = chance(8)
        let sentBody = bodyChanged ? body + Array(" ".utf8) : body
        if bodyChanged { recipe.append("body changed after signing") }
        let bearer = ["Bearer ", "bearer ", "BEARER "].randomElement(using: &rng)!
        var value: String? = bearer + (wrongKey ? "other-key" : Self.banxaAPIKey) + ":" + signature + ":" + nonce
        // The header's shape: missing, empty, or not Bearer KEY:SIGNATURE:NONCE.
        let shapeFlaw = Int.random(in: 0..<10, using: &rng)
        switch shapeFlaw {
        case 0: value = nil; recipe.append("no Authorization")
        case 1: value = ""; recipe.append("empty Authorization")
        case 2: value = "Basic " + Self.banxaAPIKey + ":" + signature + ":" + nonce; recipe.append("not Bearer")
        case 3: value = bearer + signature + ":" + nonce; recipe.append("no key part")
        default: break
        }
        var headers: [String: String] = [:]
        if let value { headers[spelled("authorization")] = padded(value) }
        let expected: Result<WebhookVerification, CoreError>
        if shapeFlaw == 0 || shapeFlaw == 1 {
            expected = .failure(.missingSignature(header: "Authorization"))
        } else if shapeFlaw == 2 || shapeFlaw == 3 {
            expected = .failure(.malformedSignature("the Authorization header must be 'Bearer KEY:SIGNATURE:NONCE'"))
        } else if signatureFlaw == 0 {
            expected = .failure(.malformedSignature("it must be 64 hexadecimal digits (HMAC-SHA256)"))
        } else if nonceFlaw == 3 {
            expected = .failure(.malformedTimestamp(nonce))
        } else if wrongKey {
            expected = .failure(.unknownAPIKey)
        } else if signatureFlaw == 1 || signatureFlaw == 2 || bodyChanged {
            expected = .failure(.badSignature)
        } else if !inWindow {
            expected = .failure(windowError(signedAt))
        } else {
            expected = .success(WebhookVerification(keyIndex: secretIndex, keyId: keyId(Self.banxaSecrets[secretIndex]), signedAt: signedAt))
        }
        return SignedHeaderCase(headers: headers, body: sentBody, expected: expected, recipe: recipe)
    }
}
