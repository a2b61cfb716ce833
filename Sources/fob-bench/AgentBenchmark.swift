import FobAgent
import FobStore
import FobSystem
import Foundation
@preconcurrency import Glibc

/// Agent figures, side by side (not pass/fail): start-up against a minimal
/// Swift program built the same way, `fob get` and `fob ls` through the
/// agent against `pass show`, peak memory, 100 concurrent clients, and the
/// kept connection and change feed (``AgentFeedBenchmark``).
/// Runs the `fob` built next to this program.
enum AgentBenchmark {
    /// One finished child: exit status (-1 when it could not run) and output.
    struct Run {
        var status: Int32
        var output: String
    }

    /// Runs `executable` with `arguments` (empty stdin, stderr discarded) and waits.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) -> Run {
        guard
            let result = try? ChildProcessRunner.run(
                executable, arguments: arguments, environment: environment, maxOutput: 256 << 20, timeout: 600)
        else { return Run(status: -1, output: "") }
        return Run(status: result.status, output: String(decoding: result.output, as: UTF8.self))
    }

    /// Medians in ms of `count` runs of each body, one of each in turn, so
    /// that a busy machine slows both alike: wall time, and the CPU time
    /// (user + system) of the child each run waited for (RUSAGE_CHILDREN).
    static func interleaved(_ count: Int, fob: () -> Void, other: () -> Void)
        -> (fob: (wall: Double, cpu: Double), other: (wall: Double, cpu: Double))
    {
        func childCPU() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
                + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
        }
        func measure(_ body: () -> Void) -> (wall: Double, cpu: Double) {
            let before = childCPU()
            let wall = ((try? time(body)) ?? 0) * 1000
            return (wall, childCPU() - before)
        }
        var runs: [[(wall: Double, cpu: Double)]] = [[], []]
        for _ in 0..<count {
            runs[0].append(measure(fob))
            runs[1].append(measure(other))
        }
        func medians(_ all: [(wall: Double, cpu: Double)]) -> (wall: Double, cpu: Double) {
            (all.map(\.wall).sorted()[all.count / 2], all.map(\.cpu).sorted()[all.count / 2])
        }
        return (medians(runs[0]), medians(runs[1]))
    }

    /// Median wall time in ms of `count` runs.
    static func median(_ count: Int, _ body: () -> Void) -> Double {
        var times: [Double] = []
        for _ in 0..<count {
            let t = (try? time(body)) ?? 0
            times.append(t * 1000)
        }
        times.sort()
        return times[times.count / 2]
    }

    static func run(scratch: URL) throws {
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        // The fob next to this program, or $FOB_BINARY (a static build, say).
        let besideBench = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("fob").path
        let fob = ProcessInfo.processInfo.environment["FOB_BINARY"].flatMap { $0.isEmpty ? nil : $0 } ?? besideBench
        guard FileManager.default.isExecutableFile(atPath: fob) else {
            print("\nAgent: no fob next to fob-bench (\(fob)); skipped")
            return
        }
        let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        let runtime = scratch.appendingPathComponent("run")
        try BenchFiles.privateDirectory(runtime)
        let (password, passwordFile) = try BenchFiles.password(in: scratch)

        try startUp(fob: fob, exe: exe, path: path, scratch: scratch)
        for count in [1_000, 10_000] {
            try throughAgent(
                count: count, fob: fob, path: path, runtime: runtime, passwordFile: passwordFile, password: password,
                scratch: scratch)
        }
    }

    /// `fob --version` against a minimal Swift program built the same way,
    /// peak memory, and fob's shared libraries.
    static func startUp(fob: String, exe: String, path: String, scratch: URL) throws {
        section("Start-up (median of 30)")
        let hello = scratch.appendingPathComponent("hello")
        let source = scratch.appendingPathComponent("hello.swift")
        // It imports FoundationEssentials alone, as fob does (no ICU).
        try Data(
            "import FoundationEssentials\nprint(\"hello \\(ProcessInfo.processInfo.processIdentifier)\")\n"
                .utf8
        ).write(to: source)
        let swiftc =
            ExecutableLookup.find("swiftc", environment: ProcessInfo.processInfo.environment) ?? "/usr/bin/swiftc"
        let optimised = exe.contains("/release/")
        let libraries = run("/usr/bin/ldd", [fob], environment: ["PATH": path]).output.split(separator: "\n")
        // Built the same way: with the Swift runtime linked statically when fob's is.
        let isStatic = !libraries.contains { $0.contains("libswiftCore") }
        // And linked as scripts/build-release links fob: by lld, without an
        // exported symbol table, its relative relocations packed (DT_RELR).
        let packed = run("/usr/bin/readelf", ["-d", fob], environment: ["PATH": path]).output.contains("(RELR)")
        let linked =
            packed
            ? ["-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
            : []
        let flags = (optimised ? ["-O"] : ["-Onone"]) + (isStatic ? ["-static-stdlib"] : []) + linked
        var built = run(
            swiftc, flags + [source.path, "-o", hello.path], environment: ProcessInfo.processInfo.environment)
        // scripts/build-release lays out the functions fob's commands run
        // first (Assets/fob.order); the minimal program gets the same, from
        // its own run.
        if packed, built.status == 0, let order = functionOrder(hello.path, scratch: scratch) {
            built = run(
                swiftc,
                flags + [
                    "-Xlinker", "--symbol-ordering-file=" + order, "-Xlinker", "--no-warn-symbol-ordering",
                    source.path, "-o", hello.path,
                ], environment: ProcessInfo.processInfo.environment)
        }
        let tFob = median(30) { _ = run(fob, ["--version"], environment: ["PATH": path]) }
        print("  " + pad("fob --version") + String(format: "%10.1f ms", tFob))
        print(
            "  " + pad("peak memory of fob --version")
                + peakMemory(fob, ["--version"], environment: ["PATH": path], scratch: scratch))
        if built.status == 0 {
            let tHello = median(30) { _ = run(hello.path, [], environment: ["PATH": path]) }
            print(
                "  " + pad("minimal FoundationEssentials program (\(isStatic ? "static" : "dynamic"))")
                    + String(format: "%10.1f ms   ratio %.2f", tHello, tFob / tHello))
            let pair = interleaved(
                200, fob: { _ = run(fob, ["--version"], environment: ["PATH": path]) },
                other: { _ = run(hello.path, [], environment: ["PATH": path]) })
            print(
                "  " + pad("interleaved, 200 each: wall, fob / minimal")
                    + String(
                        format: "%10.2f / %.2f ms   ratio %.2f", pair.fob.wall, pair.other.wall,
                        pair.fob.wall / pair.other.wall))
            print(
                "  " + pad("interleaved, 200 each: CPU (user + system)")
                    + String(
                        format: "%10.2f / %.2f ms   ratio %.2f", pair.fob.cpu, pair.other.cpu,
                        pair.fob.cpu / pair.other.cpu))
            print(
                "  " + pad("peak memory of the minimal program")
                    + peakMemory(hello.path, [], environment: ["PATH": path], scratch: scratch))
            let fobInstructions = instructions(fob, ["--version"], scratch: scratch)
            let helloInstructions = instructions(hello.path, [], scratch: scratch)
            if let fobInstructions, let helloInstructions {
                print(
                    "  " + pad("instructions (callgrind), fob --version / minimal")
                        + String(
                            format: "%10.2f M / %.2f M   ratio %.2f", Double(fobInstructions) / 1e6,
                            Double(helloInstructions) / 1e6, Double(fobInstructions) / Double(helloInstructions)))
            }
        } else {
            print("  minimal Swift program: swiftc failed; skipped")
        }
        print(
            "  " + pad("shared libraries of fob (ldd)") + "\(libraries.count)"
                + (libraries.contains { $0.contains("libcurl") } ? " (libcurl among them)" : " (no libcurl)"))
        sizes(fob: fob, scratch: scratch)
    }

    /// The instructions one run executes, counted by valgrind's callgrind
    /// (steady on a busy machine, where times are not), or `nil` without valgrind.
    static func instructions(_ executable: String, _ arguments: [String], scratch: URL) -> Int? {
        let log = scratch.appendingPathComponent("callgrind.log").path
        guard
            callgrind(
                executable, options: ["--callgrind-out-file=/dev/null", "--log-file=" + log], arguments: arguments,
                scratch: scratch) != nil,
            let text = try? String(contentsOfFile: log, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.contains("Collected :") }),
            let count = Int(line.split(separator: " ").last.map(String.init) ?? "")
        else { return nil }
        return count
    }

    /// Runs a copy of `executable` (``withoutDebugInformation(_:scratch:)``)
    /// with `arguments` under valgrind's callgrind with `options`; the
    /// copy's path, or `nil` without valgrind or strip.
    static func callgrind(_ executable: String, options: [String], arguments: [String] = [], scratch: URL)
        -> String?
    {
        let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        guard let valgrind = ExecutableLookup.find("valgrind", environment: ["PATH": path]),
            let copy = withoutDebugInformation(executable, scratch: scratch)
        else { return nil }
        _ = run(valgrind, ["--tool=callgrind"] + options + [copy] + arguments, environment: ["PATH": path])
        return copy
    }

    /// A copy of `executable` in `scratch` without its debugging information
    /// (`strip --strip-debug`, the symbol table kept): valgrind 3.19 gives up
    /// on clang's DWARF 5, which fob's C targets carry. `nil` when strip fails.
    static func withoutDebugInformation(_ executable: String, scratch: URL) -> String? {
        let copy = scratch.appendingPathComponent("nodebug-" + URL(fileURLWithPath: executable).lastPathComponent).path
        try? FileManager.default.removeItem(atPath: copy)
        return run("/usr/bin/strip", ["--strip-debug", "-o", copy, executable], environment: [:]).status == 0
            ? copy : nil
    }

    /// An ordering file for lld (`--symbol-ordering-file`) naming the
    /// functions of `executable` that one run without arguments enters, as
    /// callgrind saw them (scripts/generate-order does the same for fob), or
    /// `nil` without valgrind.
    static func functionOrder(_ executable: String, scratch: URL) -> String? {
        let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        let profile = scratch.appendingPathComponent("order.callgrind").path
        guard
            let copy = callgrind(
                executable, options: ["--demangle=no", "--callgrind-out-file=" + profile, "--log-file=/dev/null"],
                scratch: scratch)
        else { return nil }
        let defined = Set(
            run("/usr/bin/nm", ["--defined-only", copy], environment: ["PATH": path]).output.split(separator: "\n")
                .compactMap { line -> Substring? in
                    let fields = line.split(separator: " ")
                    return fields.count == 3 && "tTwW".contains(fields[1]) ? fields[2] : nil
                })
        guard let text = try? String(contentsOfFile: profile, encoding: .utf8) else { return nil }
        var seen = Set<Substring>()
        var names: [Substring] = []
        for line in text.split(separator: "\n") where line.hasPrefix("fn=(") || line.hasPrefix("cfn=(") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let name = line[line.index(after: space)...]
            if defined.contains(name), seen.insert(name).inserted { names.append(name) }
        }
        guard !names.isEmpty else { return nil }
        let order = scratch.appendingPathComponent("minimal.order")
        guard (try? Data(names.joined(separator: "\n").utf8).write(to: order)) != nil else { return nil }
        return order.path
    }

    /// The size of `fob` and each helper beside it, stripped (`strip`),
    /// and of all of them together.
    static func sizes(fob: String, scratch: URL) {
        let directory = URL(fileURLWithPath: fob).deletingLastPathComponent()
        var total = 0
        for name in ["fob", "fob-http", "fob-xml", "fob-secret-service"] {
            let source = directory.appendingPathComponent(name).path
            let copy = scratch.appendingPathComponent("stripped-" + name).path
            guard FileManager.default.isExecutableFile(atPath: source) else {
                print("  " + pad("\(name) stripped") + "  (not built)")
                continue
            }
            try? FileManager.default.removeItem(atPath: copy)
            guard (try? FileManager.default.copyItem(atPath: source, toPath: copy)) != nil,
                run("/usr/bin/strip", [copy], environment: [:]).status == 0,
                let size = (try? FileManager.default.attributesOfItem(atPath: copy))?[.size] as? Int
            else {
                print("  " + pad("\(name) stripped") + "  (strip failed)")
                continue
            }
            total += size
            print("  " + pad("\(name) stripped") + String(format: "%10.1f MB", Double(size) / 1e6))
        }
        print("  " + pad("all of them") + String(format: "%10.1f MB", Double(total) / 1e6))

    }

    /// The agent's process id, from `fob status --json`.
    static func agentPID(_ fob: String, environment: [String: String]) -> Int? {
        let status = run(fob, ["status", "--json"], environment: environment).output
        guard let data = status.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["pid"] as? Int
    }

    /// `fob get`, `fob ls` and memory through an agent holding `count` items.
    static func throughAgent(
        count: Int, fob: String, path: String, runtime: URL, passwordFile: String, password: SecretBytes,
        scratch: URL
    ) throws {
        section("Through the agent at \(count) items")
        let url = scratch.appendingPathComponent("agent\(count)/vault.db")
        let vault = try Vault.create(at: url, password: password, kdf: BenchFiles.quickKDF, accessDefault: .any)
        let items = (0..<count).map { i in
            Item(
                service: "svc\(i % 50)", account: "user\(i)", label: "Label \(i)",
                secret: SecretBytes(utf8: "secret-\(i)-xxxxxxxxxxxxxxxxxxxxxxxx"))
        }
        try vault.add(contentsOf: items)
        vault.lock()
        let env = ["PATH": path, "XDG_RUNTIME_DIR": runtime.path, "FOB_VAULT": url.path, "FOB_AGENT": "1"]
        let unlock = run(fob, ["unlock", "--password-file", passwordFile], environment: env)
        guard unlock.status == 0 else {
            print("  unlock failed (\(unlock.status)); skipped")
            return
        }
        defer {
            if let pid = agentPID(fob, environment: env) { kill(pid_t(pid), SIGTERM) }
        }
        var last = Run(status: 0, output: "")
        let tGet = median(30) { last = run(fob, ["get", "svc7", "user7"], environment: env) }
        print("  " + pad("fob get (median of 30)") + String(format: "%10.1f ms   exit %d", tGet, last.status))
        print(
            "  " + pad("peak memory of one fob get")
                + peakMemory(fob, ["get", "svc7", "user7"], environment: env, scratch: scratch))
        let tList = median(10) { last = run(fob, ["ls"], environment: env) }
        print("  " + pad("fob ls (median of 10)") + String(format: "%10.1f ms   %.2f× get", tList, tList / tGet))
        AgentFeedBenchmark.run(
            endpoint: AgentEndpoint(vaultURL: url, environment: env), ids: items.map(\.persistentID))
        if count == 10_000 {
            if let pid = agentPID(fob, environment: env),
                let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
            {
                let kib = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "0") ?? 0
                print("  " + pad("peak memory of the agent (VmHWM)") + String(format: "%10.1f MiB", kib / 1024))
            }
        } else {
            final class Counter: @unchecked Sendable {
                let lock = NSLock()
                var value = 0
            }
            let ok = Counter()
            let tConcurrent = try time {
                DispatchQueue.concurrentPerform(iterations: 100) { _ in
                    let r = run(fob, ["get", "svc7", "user7"], environment: env)
                    if r.status == 0 { ok.lock.withLock { ok.value += 1 } }
                }
            }
            print(
                "  " + pad("100 concurrent fob get")
                    + String(format: "%10.1f ms   %d of 100 succeeded", tConcurrent * 1000, ok.value))
            passShow(scratch: scratch, count: count, path: path, fobGet: tGet)
        }
    }

    /// The peak memory of one run, measured by GNU time (a small parent, so
    /// that no parent's memory is counted: spawned with vfork, a child's
    /// `ru_maxrss` starts from its parent's).
    static func peakMemory(_ executable: String, _ arguments: [String], environment: [String: String], scratch: URL)
        -> String
    {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            return "  (no /usr/bin/time; skipped)"
        }
        let out = scratch.appendingPathComponent("time.out").path
        _ = run("/usr/bin/time", ["-f", "%M", "-o", out, executable] + arguments, environment: environment)
        guard let text = try? String(contentsOfFile: out, encoding: .utf8),
            let kib = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            return "  (unreadable)"
        }
        return String(format: "%10.1f MiB", kib / 1024)
    }

    /// `pass show` on a store of `count` entries, with a throwaway GnuPG key without passphrase.
    static func passShow(scratch: URL, count: Int, path: String, fobGet: Double) {
        guard let pass = ExecutableLookup.find("pass", environment: ["PATH": path]),
            let gpg = ExecutableLookup.find("gpg", environment: ["PATH": path])
        else {
            print("  pass show: pass or gpg is not installed; skipped (apt-get install pass)")
            return
        }
        let home = scratch.appendingPathComponent("gnupg")
        try? BenchFiles.privateDirectory(home)
        let store = scratch.appendingPathComponent("pass-store")
        let env = ["PATH": path, "GNUPGHOME": home.path, "PASSWORD_STORE_DIR": store.path, "HOME": scratch.path]
        _ = run(
            gpg,
            [
                "--batch", "--passphrase", "", "--quick-gen-key", "fob-bench@example.invalid", "default", "default",
                "never",
            ], environment: env)
        _ = run(pass, ["init", "fob-bench@example.invalid"], environment: env)
        // Entries encrypted directly with gpg (pass insert, one by one, takes minutes).
        for i in 0..<count {
            let dir = store.appendingPathComponent("svc\(i % 50)")
            try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            if i < 20 || i == 7 {
                _ = run(
                    "/bin/sh",
                    [
                        "-c", "printf 'secret-%s\\n' \"$1\" | gpg --batch -e -r fob-bench@example.invalid -o \"$2\"",
                        "sh",
                        String(i), dir.appendingPathComponent("user\(i).gpg").path,
                    ], environment: env)
            } else {
                _ = FileManager.default.createFile(
                    atPath: dir.appendingPathComponent("user\(i).gpg").path, contents: Data(count: 64))
            }
        }
        var last = Run(status: 0, output: "")
        _ = run(pass, ["show", "svc7/user7"], environment: env) // starts gpg-agent
        let t = median(30) { last = run(pass, ["show", "svc7/user7"], environment: env) }
        print(
            "  " + pad("pass show, same store size (median of 30)")
                + String(
                    format: "%10.1f ms   exit %d; fob get is %.2f× pass",
                    t, last.status, fobGet / t))
        _ = run("/usr/bin/gpgconf", ["--kill", "gpg-agent"], environment: env)
    }
}
