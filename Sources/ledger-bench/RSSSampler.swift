import Foundation
import Synchronization

/// Samples a process's resident memory (VmRSS in /proc/PID/status) every
/// `interval` seconds on its own thread, keeping the maximum, while a load runs.
final class RSSSampler: Sendable {
    private let pid: Int32
    private let interval: Double
    private let stopping = Atomic<Bool>(false)
    private let state = Mutex<(maxKB: Int, lastKB: Int, samples: Int)>((0, 0, 0))
    private let finished = DispatchSemaphore(value: 0)

    init(pid: Int32, interval: Double = 0.1) {
        self.pid = pid
        self.interval = interval
        let thread = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                if let kb = Self.residentKB(pid: pid) {
                    state.withLock { s in
                        s.maxKB = max(s.maxKB, kb)
                        s.lastKB = kb
                        s.samples += 1
                    }
                }
                Thread.sleep(forTimeInterval: interval)
            }
            finished.signal()
        }
        thread.name = "rss-sampler"
        thread.start()
    }

    /// Stops sampling; answers (max MB, last MB, samples taken).
    func stop() -> (maxMB: Double, lastMB: Double, samples: Int) {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
        let s = state.withLock { $0 }
        return (Double(s.maxKB) / 1024, Double(s.lastKB) / 1024, s.samples)
    }

    static func residentKB(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}
