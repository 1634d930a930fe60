/// Writes JSON straight into a byte buffer, field by field, with no `JSONValue`
/// tree in between: for the shapes the service renders on every write (an
/// order's document and stored state). Strings are escaped by `JSONSerializer`,
/// so the bytes are the same as serializing the equivalent tree.
struct JSONFieldWriter {
    private(set) var bytes: [UInt8] = []
    /// Bit d is set while the container at depth d has no member yet.
    private var empty: UInt64 = 0
    private var depth = 0

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func openObject() { open(UInt8(ascii: "{")) }
    mutating func closeObject() { close(UInt8(ascii: "}")) }
    mutating func openArray() { open(UInt8(ascii: "[")) }
    mutating func closeArray() { close(UInt8(ascii: "]")) }

    /// Starts a member of the current object: a comma if needed, then `"name":`.
    /// Names are constants that need no escaping.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts an element of the current array (a comma if needed).
    mutating func element() { separate() }

    mutating func string(_ value: String) { JSONSerializer.writeString(value, to: &bytes) }
    mutating func integer(_ value: Int) { DecimalDigits.append(Int64(value), to: &bytes) }
    mutating func integer(_ value: Int64) { DecimalDigits.append(value, to: &bytes) }
    mutating func bool(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    mutating func null() { bytes.append(contentsOf: "null".utf8) }
    /// RFC 3339 needs no escaping: written straight into the buffer, quoted.
    mutating func time(_ value: Timestamp) {
        bytes.append(UInt8(ascii: "\""))
        value.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
    mutating func value(_ value: JSONValue) { JSONSerializer.write(value, to: &bytes) }

    // Members whose value may be missing: `orNull` writes null (the read model shows
    // every field), `ifPresent` leaves the member out (the storage form drops nils).
    mutating func string(_ name: StaticString, orNull value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }
    mutating func time(_ name: StaticString, orNull value: Timestamp?) {
        key(name)
        if let value { time(value) } else { null() }
    }
    mutating func string(_ name: StaticString, ifPresent value: String?) {
        if let value { key(name); string(value) }
    }
    mutating func time(_ name: StaticString, ifPresent value: Timestamp?) {
        if let value { key(name); time(value) }
    }

    private mutating func open(_ mark: UInt8) {
        precondition(depth < 64, "JSONFieldWriter nests at most 64 containers")
        bytes.append(mark)
        empty |= 1 << UInt64(depth)
        depth += 1
    }

    private mutating func close(_ mark: UInt8) {
        depth -= 1
        bytes.append(mark)
    }

    private mutating func separate() {
        let bit: UInt64 = 1 << UInt64(depth - 1)
        if empty & bit != 0 { empty &= ~bit } else { bytes.append(UInt8(ascii: ",")) }
    }
}
