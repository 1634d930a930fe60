/// How checkpoints are signed (shared/spec/audit.md, *Keys* and *Making checkpoints*).
/// A plain value: `LedgerConfiguration` reads it from the environment. It holds the key's
/// path, never the key; `CheckpointKeyFile` reads the key when a command needs it.
public struct CheckpointConfiguration: Sendable, Equatable {
    /// The Ed25519 private key's PEM file (`LEDGER_CHECKPOINT_KEY`); nil: nothing is signed.
    public var keyPath: String?
    /// The log's name in its notes (`LEDGER_CHECKPOINT_ORIGIN`).
    public var origin: String = "ledger"
    /// A folder that also receives every note as `<position>.checkpoint` (`LEDGER_CHECKPOINT_DIR`).
    public var directory: String?
    /// Seconds between the notes `ledger serve` signs when the head has moved (`LEDGER_CHECKPOINT_INTERVAL`).
    public var intervalSeconds: Int = 3600

    public init() {}

    /// Why `origin` cannot name a log in a note, or nil when it can: c2sp.org/signed-note
    /// names hold no space and no `+`, and a note's lines hold no control character.
    public static func problem(withOrigin origin: String) -> String? {
        if origin.isEmpty { return "the origin is empty" }
        if origin.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == "+" || $0.value < 0x20 || $0.value == 0x7F }) {
            return "a log's name holds no space, no control character and no +, such as shop.example/ledger"
        }
        return nil
    }
}
