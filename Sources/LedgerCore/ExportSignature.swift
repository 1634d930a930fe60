/// A signed export manifest (shared/spec/audit.md, *Signed exports*): `checkpoint`, a
/// note for the ledger's head at export time (at or after the export's highest
/// position), and `signature`, a signed note whose body lists the manifest's `kind`,
/// `from`, `to`, `format`, `rows`, `sha256` and `highestPosition`, one `key value` per line.
public enum ExportSignature {
    public static let signedFields = ["kind", "from", "to", "format", "rows", "sha256", "highestPosition"]

    /// The fields whose values are numbers (`highestPosition` may be null: no rows); the others are strings.
    static let numberFields: Set<String> = ["rows", "highestPosition"]

    /// The signature's body: each field as the manifest gives it (`none` for a null
    /// highestPosition); nil when a field is absent or not of its type. The types are part of
    /// what is signed: the line `rows 2` reads the same from `2` and `"2"`, and a check that
    /// reads a number would pass over a string (a `highestPosition` of `"9"` would excuse a
    /// missing checkpoint).
    public static func body(of manifest: JSONValue) -> String? {
        var lines = ""
        for name in signedFields {
            let isNumber = numberFields.contains(name)
            switch manifest[name] {
            case .string(let s)? where !isNumber: lines += "\(name) \(s)\n"
            case .number(let n)? where isNumber: lines += "\(name) \(n)\n"
            case .null? where name == "highestPosition": lines += "\(name) none\n"
            default: return nil
            }
        }
        return lines
    }

    /// Each field whose line differs between two bodies, on one line: `rows signed 100, manifest says 99; ...`.
    static func differences(signed: String, manifest: String) -> String {
        func fields(_ body: String) -> [String: String] {
            var found: [String: String] = [:]
            for line in body.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                found[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
            return found
        }
        let a = fields(signed), b = fields(manifest)
        let names = signedFields + a.keys.filter { !signedFields.contains($0) }.sorted()
        return names.compactMap { name -> String? in
            guard a[name] != b[name] else { return nil }
            return "\(name) signed \(a[name].map(JSONSerializer.quoted) ?? "(absent)"), manifest says \(b[name].map(JSONSerializer.quoted) ?? "(absent)")"
        }.joined(separator: "; ")
    }

    /// The manifest with `checkpoint` and `signature` added; an empty ledger has no checkpoint (null).
    public static func sign(_ manifest: JSONValue, origin: String, key: Ed25519SigningKey, now: Timestamp) -> JSONValue {
        guard case .object(var fields) = manifest, let body = body(of: manifest) else { return manifest }
        var checkpoint = JSONValue.null
        if let head = ledgerHead(manifest), head.position > 0 {
            let body = CheckpointBody(origin: origin, position: head.position, hash: head.hash, signedAt: now)
            checkpoint = .string(Checkpoint.sign(body, key: key).note.text)
        }
        fields.append(("checkpoint", checkpoint))
        fields.append(("signature", .string(SignedNote.sign(body: body, name: origin, key: key).text)))
        return .object(fields)
    }

    /// Every way the manifest's notes fail under `publicKey`, in words; empty when both hold.
    public static func problems(_ manifest: JSONValue, publicKey: Ed25519PublicKey) -> [String] {
        var problems = [String]()
        guard let body = body(of: manifest) else {
            return ["the manifest lacks one of \(signedFields.joined(separator: ", ")), or one is not of its type (rows and highestPosition numbers, the others strings)"]
        }
        if let text = manifest["signature"]?.stringValue, let note = SignedNote(text: text) {
            if !note.verifies(publicKey: publicKey) {
                problems.append("the manifest's signature does not verify under the public key")
            } else if note.body != body {
                problems.append("the manifest's fields differ from what its signature signed: " + differences(signed: note.body, manifest: body))
            }
        } else {
            problems.append("the manifest has no signature note")
        }
        let highest: Int64? = manifest["highestPosition"]?.numberLiteral.flatMap { Int64($0) }
        switch manifest["checkpoint"] {
        case .string(let text)?:
            guard let checkpoint = Checkpoint(text: text) else { problems.append("the manifest's checkpoint is not a checkpoint note"); break }
            if !checkpoint.note.verifies(publicKey: publicKey) {
                problems.append("the manifest's checkpoint does not verify under the public key")
            }
            if let highest, checkpoint.body.position < highest {
                problems.append("the manifest's checkpoint is for position \(checkpoint.body.position), before the export's highest position \(highest)")
            }
            if let head = ledgerHead(manifest), head.position != checkpoint.body.position || head.hash != checkpoint.body.hash {
                problems.append("the manifest's ledgerHead differs from its checkpoint")
            }
        case .null?:
            if highest != nil { problems.append("the manifest has rows but no checkpoint") }
        default:
            problems.append("the manifest has no checkpoint")
        }
        return problems
    }

    static func ledgerHead(_ manifest: JSONValue) -> (position: Int64, hash: [UInt8])? {
        guard let head = manifest["ledgerHead"], let position = head["position"]?.numberLiteral.flatMap({ Int64($0) }),
              let hash = head["hash"]?.stringValue.flatMap(Hex.decode) else { return nil }
        return (position, hash)
    }
}
