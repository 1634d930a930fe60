import LedgerCore
import LedgerPostgres

/// An event of realistic size (a web3 webhook body is ~400 bytes).
func sampleEvent(key: String, stream: String = "order-A1", payload: String = #"{"status":3,"amount":"40.00"}"#,
                 expectedVersion: Int? = nil) -> NewEvent {
    NewEvent(stream: stream, type: "StatusObserved", source: "webhook", payloadJSON: payload,
             raw: Array(payload.utf8), metadataJSON: #"{"verified":true}"#, idempotencyKey: key,
             observedAt: Timestamp(seconds: 1_767_225_600), expectedVersion: expectedVersion)
}

func count(_ sql: String, on connection: PostgresConnection, _ params: [SQLValue] = []) throws -> Int64 {
    try connection.query(sql, params).int64(0, "n")
}
