@testable import LedgerPostgres
@testable import LedgerService
import Testing

/// The writer's retries when another writer changed the log met it again: the batch was not
/// committed, and the caller is told to retry (503), not that the ledger failed (500).
@Suite("A batch another writer raced twice")
struct RacedBatchAnswerTests {
    @Test("ProbeHintMiss, HeadMoved and SkippedRoundTripRefused are 503 problems to retry")
    func racedBatchIs503() {
        let cause = PostgresError.server(sqlState: "23505", message: "duplicate key value violates unique constraint", detail: nil)
        for error: any Error in [ProbeHintMiss(cause: cause), HeadMoved(cause: cause),
                                 SkippedRoundTripRefused(recordedMicros: 1, postgresMicros: 2)] {
            let answer = ServiceError.from(error)
            #expect(answer.isUnavailable, "\(error): \(answer)")
        }
        #expect(!ServiceError.from(cause).isUnavailable, "a unique violation of its own is no reason to retry")
    }
}
