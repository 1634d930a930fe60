import Testing
import LedgerCore

/// Runs a throwing call and returns its error as a CoreError (nil when it succeeded).
/// Any other error type is a test failure: the core must only throw CoreError.
func coreError<T>(_ body: () throws -> T) -> CoreError? {
    do {
        _ = try body()
        return nil
    } catch let error as CoreError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}
