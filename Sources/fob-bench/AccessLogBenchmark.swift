import FobAgent
import FobStore
import Foundation
@preconcurrency import Glibc

/// The access log's cost: 1,000 reads in one second, each appending one
/// entry to the agent's ``AccessLog`` (queued, then written in batches by
/// its flushing thread), as the budget counts it: the CPU time the
/// appends and the batched writes add (user + system, this process), the
/// writes made, and the time one `append` call takes on the reading thread.
enum AccessLogBenchmark {
    static func run(scratch: URL) throws {
        print("\naccess log (1,000 reads in one second)")
        let vault = try BenchFiles.quickVault("log-bench.db", in: scratch).vault
        let url = vault.url
        let log = try AccessLog.open(for: vault, watermarks: nil)
        let entry = AccessLogEntry(
            time: Date(), event: .read,
            requester: AccessLogRequester(
                pid: 4242, uid: 1000, executable: "/usr/bin/git", argv0: "git",
                parents: ["bash(4000)", "tmux: server(1200)"], tty: "/dev/pts/3"),
            item: ItemKey(service: "github.com", account: "ana@example.com"), channel: .git,
            decision: .allowedRule, detail: "rule any")
        let before = cpuSeconds()
        let start = monotonic()
        var appendTime = 0.0
        for n in 0..<1000 {
            // One read a millisecond: the flushing thread batches what arrives within its delay.
            let due = start + Double(n) / 1000
            let wait = due - monotonic()
            if wait > 0 { usleep(UInt32(wait * 1e6)) }
            let t0 = monotonic()
            log.append(entry)
            appendTime += monotonic() - t0
        }
        log.close()
        let cpu = (cpuSeconds() - before) * 1000
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path + ".log")[.size] as? Int) ?? 0
        let report = AccessLogReader.read(
            AccessLogLocation(vaultURL: url), keys: AccessLogKeys(logKey: try vault.accessLogKey(create: false)!),
            head: nil)
        print(String(format: "  CPU added by 1,000 appends and their writes: %.1f ms (budget 50 ms)", cpu))
        print(String(format: "  time in append on the reading thread: %.2f µs each", appendTime / 1000 * 1e6))
        print("  entries written: \(report.records.count) (\(size / 1024) KiB), verified: \(report.problems.isEmpty)")
        vault.lock()
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    private static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
