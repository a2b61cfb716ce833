import FobAgent
import FobStore
import Foundation
@preconcurrency import Glibc

/// What consent costs a read on the agent's side: naming the requester from
/// `/proc` (``ProcessInspector``), the decision under the item's rule (or a
/// lease) with its access log entry, and the answer itself, for an item with
/// no rule of its own (the vault's default `any`), one whose rule trusts the
/// requester, and one a lease settles. Each figure is the median of 2,000
/// in-process requests; the requester is this program, named as the agent
/// names the program behind `fob get`.
enum ConsentBenchmark {
    static func run(scratch: URL) throws {
        print("\nconsent: one read settled by no rule, a rule, a lease (agent side, median of 2,000)")
        let (vault, password) = try BenchFiles.quickVault("consent-bench.db", in: scratch)
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        let me = TrustedProgram(path: exe, identity: ProcessInspector.identity(ofFile: "/proc/self/exe")!)
        let rules: [(String, AccessRule)] = [
            ("no rule (default any)", AccessRule()), ("a rule trusting it", AccessRule(mode: .ask, trusted: [me])),
            ("a lease", AccessRule(mode: .ask)),
        ]
        for (n, (_, rule)) in rules.enumerated() {
            var item = Item(service: "svc\(n)", account: "acct", secret: SecretBytes(utf8: "secret \(n)"))
            item.accessRule = rule
            try vault.add(item)
        }
        vault.lock()
        let core = AgentCore(vaultURL: vault.url)
        _ = core.handle(.unlock(password: password, idleSeconds: 0, maxSeconds: 0))
        core.gate.askers = [LeaseAnswer()]
        let via = ProcessSummary(pid: getpid(), executable: exe, name: "fob", arguments: ["fob", "get"])
        func identify() -> AccessContext {
            let requester = try! ProcessInspector.requester(pid: getpid(), forwardedBy: via)
            return AccessContext(requester: requester, channel: .command("get"))
        }
        let tIdentify = median { _ = identify() }
        print(String(format: "  naming the requester (/proc): %.1f µs", tIdentify))
        var base = 0.0
        for (n, (name, _)) in rules.enumerated() {
            let get = AgentRequest.get(.key(service: "svc\(n)", account: "acct"), limitOne: true, detail: .secret)
            _ = core.consent(to: get, from: identify()) // the lease's question, once
            let tAnswer = median { _ = core.handle(get) }
            let tWhole = median {
                guard case .success(let allowed) = core.consent(to: get, from: identify()) else { fatalError(name) }
                _ = core.handle(allowed)
            }
            if n == 0 { base = tWhole }
            print(
                String(
                    format: "  %@: %.1f µs (answer alone %.1f µs), %.2f× no rule", name, tWhole, tAnswer,
                    tWhole / base))
        }
        core.lockAll()
    }

    /// The median of 2,000 runs of `body`, in microseconds.
    private static func median(_ body: () -> Void) -> Double {
        var times: [Double] = []
        times.reserveCapacity(2000)
        for _ in 0..<2000 {
            var a = timespec()
            var b = timespec()
            clock_gettime(CLOCK_MONOTONIC, &a)
            body()
            clock_gettime(CLOCK_MONOTONIC, &b)
            times.append(Double(b.tv_sec - a.tv_sec) * 1e6 + Double(b.tv_nsec - a.tv_nsec) / 1e3)
        }
        return times.sorted()[1000]
    }
}

/// Answers every question with a lease of ten minutes.
private struct LeaseAnswer: AccessAsker {
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome { .answered(.lease(seconds: 600)) }
}
