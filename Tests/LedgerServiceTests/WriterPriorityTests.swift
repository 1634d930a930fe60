import LedgerAPI
import Foundation
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// The single writer thread asks for a higher priority (a lower nice value) than the
/// request threads it serves; where the process may not raise it, it says why.
@Suite("The writer thread's priority")
struct WriterPriorityTests {
    /// The nice value of this process's thread `tid`, from /proc (field 19 of its stat).
    static func nice(ofThread tid: Int32) throws -> Int? {
        let stat = try String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8)
        // The fields after the parenthesised name start with the state, field 3.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return Int(fields[16])
    }

    @Test("the writer runs at the nice value asked for, or reports the refusal; 0 leaves it alone")
    func writerNice() throws {
        let db = try TestDatabase.create("writernice")
        defer { LedgerFixture.drop(db) }
        let pool = db.pool(size: 2)
        defer { pool.close() }
        let committer = GroupCommitter(pool: pool, writerNice: -5)
        defer { committer.shutdown() }
        let priority = try #require(committer.writerPriority, "the writer thread did not report its priority")
        #expect(priority.requested == -5)
        // Whether it may (root with CAP_SYS_NICE, or an RLIMIT_NICE allowing it) depends on the
        // host: what is checked is that the report matches what the thread runs at.
        let inherited = try Self.nice(ofThread: getpid())
        if priority.applied {
            #expect(try Self.nice(ofThread: priority.threadID) == -5)
        } else {
            #expect([EPERM, EACCES].contains(priority.errorCode), "\(priority)")
            #expect(try Self.nice(ofThread: priority.threadID) == inherited, "a refused request changes nothing")
            #expect(priority.description.contains("LimitNICE"))
        }
        // The writer still works at its priority.
        _ = try committer.append([try OrderStateCacheTests.webhook("WN-1", status: 2, seq: 1)])
        #expect(committer.stats.appended == 1)

        let plain = GroupCommitter(pool: pool, writerNice: 0)
        defer { plain.shutdown() }
        let unchanged = try #require(plain.writerPriority)
        #expect(unchanged.requested == 0 && unchanged.applied)
        #expect(try Self.nice(ofThread: unchanged.threadID) == (try Self.nice(ofThread: getpid())),
                "a request of 0 leaves the nice the process started with")
    }

    @Test("LEDGER_WRITER_NICE: -10 by default, 0 to leave the writer alone, a bad value named")
    func configuration() throws {
        let base = ["DATABASE_URL": "postgresql://localhost/x"]
        #expect(try LedgerConfiguration.fromEnvironment(base).service.writerNice == -10)
        #expect(try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_WRITER_NICE": "0"]) { $1 }).service.writerNice == 0)
        for bad in ["-21", "20", "high"] {
            #expect(throws: ConfigurationError.self) {
                try LedgerConfiguration.fromEnvironment(base.merging(["LEDGER_WRITER_NICE": bad]) { $1 })
            }
        }
    }
}
