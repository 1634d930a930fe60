/// HTTP field names, which are ASCII tokens compared without case.
public enum HeaderName {
    /// `name` lowercased byte by byte (and returned as it is when already lowercase);
    /// anything that is not ASCII goes through `lowercased()`.
    public static func lowercased(_ name: String) -> String {
        var ascii = true, upper = false
        for byte in name.utf8 {
            if byte >= 0x80 { ascii = false; break }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { upper = true }
        }
        guard ascii else { return name.lowercased() }
        guard upper else { return name }
        // Written in place: a name of up to 15 bytes becomes a small string, no allocation.
        return String(unsafeUninitializedCapacity: name.utf8.count) { buffer in
            var n = 0
            for byte in name.utf8 {
                buffer[n] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
                n += 1
            }
            return n
        }
    }
}
