/// A provider's signed body or query answer, read so that it can always be recorded:
/// providers.md keeps every field, and a delivery that names its order and status is
/// stored even where jsonb cannot hold a part of what it does not map.
enum ProviderBody {
    /// The body as an object, with what its parsed form had to change
    /// (`JSONParser.parseLenient`). A change to a field in `mapped` is refused
    /// (`JSONAlteration.refuseMapped`): a mapped value the ledger altered would be
    /// stored wrong. Bytes that are not JSON at all are refused as `parseObject` does.
    static func parseObject(_ bytes: [UInt8], what: String, mapped: Set<String>) throws(CoreError) -> (JSONValue, FieldReader, [JSONAlteration]) {
        let value: JSONValue
        let alterations: [JSONAlteration]
        do throws(JSONError) {
            (value, alterations) = try JSONParser.parseLenient(bytes)
        } catch {
            if error.kind == .invalidUTF8 { throw .notUTF8 }
            throw .invalidJSON(error)
        }
        let reader = try FieldReader(value, what: what)
        try JSONAlteration.refuseMapped(alterations, mapped: mapped)
        return (value, reader, alterations)
    }
}
