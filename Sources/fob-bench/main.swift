import FobStore
import Foundation

// fob-bench: prints Fob's speed and memory figures. Build and run with
//   swift run -c release fob-bench
// Figures depend on the machine; docs/speed.md lists one run.

let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("fob-bench-\(getpid())")
defer { try? FileManager.default.removeItem(at: scratch) }
print("fob-bench (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
let onlyAgent = CommandLine.arguments.contains("--agent")
do {
    // `fob-bench import` runs the import figures alone, `browse` the
    // terminal UI's at 100,000 items, `access-log` the access log's and consent's, `ssh` the SSH agent's, `secret-service [N …]` the Secret
    // Service provider's (beside gnome-keyring's), `sync [N …]` sync's
    // through git; `--agent` the agent's.
    if CommandLine.arguments.dropFirst().first == "import" {
        try ImportBenchmark.run(scratch: scratch)
    } else if CommandLine.arguments.dropFirst().first == "secret-service" {
        let counts = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        try SecretServiceBenchmark.run(scratch: scratch, counts: counts.isEmpty ? [1_000, 10_000] : counts)
    } else if CommandLine.arguments.dropFirst().first == "sync" {
        let counts = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        try SyncBenchmark.run(scratch: scratch, counts: counts.isEmpty ? [1_000, 10_000] : counts)
    } else if CommandLine.arguments.dropFirst().first == "browse" {
        try BrowseBenchmark.run(scratch: scratch)
    } else if CommandLine.arguments.dropFirst().first == "ssh" {
        try SSHBenchmark.run(scratch: scratch)
    } else if CommandLine.arguments.dropFirst().first == "access-log" {
        try AccessLogBenchmark.run(scratch: scratch)
        try ConsentBenchmark.run(scratch: scratch)
    } else {
        try AgentBenchmark.run(scratch: scratch)
        try AccessLogBenchmark.run(scratch: scratch)
        try ConsentBenchmark.run(scratch: scratch)
        if !onlyAgent {
            try StoreBenchmark.run(scratch: scratch)
            try TerminalBenchmark.run(scratch: scratch)
            try BrowseBenchmark.run(scratch: scratch)
            try ImportBenchmark.run(scratch: scratch)
            // 1,000 items only: search --all at 10,000 takes minutes (`fob-bench secret-service` runs both).
            try SecretServiceBenchmark.run(scratch: scratch, counts: [1_000])
        }
    }
} catch {
    print("fob-bench: \(error)")
    exit(1)
}
print(String(format: "\npeak memory (max RSS): %.1f MiB", peakMemoryMiB()))
