import FobStore
import Foundation

// fob-bench: prints Fob's speed and memory figures. Build and run with
//   swift run -c release fob-bench
// Figures depend on the machine; the README lists one run.

let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("fob-bench-\(getpid())")
defer { try? FileManager.default.removeItem(at: scratch) }
print("fob-bench (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
let onlyAgent = CommandLine.arguments.contains("--agent")
do {
    // `fob-bench import` runs the import figures alone, `browse` the
    // terminal UI's at 100,000 items; `--agent` the agent's.
    if CommandLine.arguments.dropFirst().first == "import" {
        try ImportBenchmark.run(scratch: scratch)
    } else if CommandLine.arguments.dropFirst().first == "browse" {
        try BrowseBenchmark.run(scratch: scratch)
    } else {
        try AgentBenchmark.run(scratch: scratch)
        if !onlyAgent {
            try StoreBenchmark.run(scratch: scratch)
            try TerminalBenchmark.run(scratch: scratch)
            try BrowseBenchmark.run(scratch: scratch)
            try ImportBenchmark.run(scratch: scratch)
        }
    }
} catch {
    print("fob-bench: \(error)")
    exit(1)
}
print(String(format: "\npeak memory (max RSS): %.1f MiB", peakMemoryMiB()))
