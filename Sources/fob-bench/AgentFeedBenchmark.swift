import FobAgent
import FobStore
import FobSystem
import Foundation
@preconcurrency import Glibc

/// Figures of the agent's connection and change feed, against a running
/// agent: requests on one kept connection against one connection each (a
/// hello each), items by persistent ID, and the time from an agent write to
/// a subscriber seeing its event.
enum AgentFeedBenchmark {
    /// Events that arrive on the subscription's thread, with the time each came.
    final class Arrivals: @unchecked Sendable {
        private let condition = NSCondition()
        private var seen: [String: Double] = [:]

        func note(_ account: String) {
            condition.lock()
            seen[account] = SocketClock.now()
            condition.broadcast()
            condition.unlock()
        }

        /// When `account`'s event came (monotonic seconds), waiting at most 2 s.
        func wait(for account: String) -> Double? {
            condition.lock()
            defer { condition.unlock() }
            let until = Date(timeIntervalSinceNow: 2)
            while seen[account] == nil { if !condition.wait(until: until) { break } }
            return seen[account]
        }
    }

    /// Monotonic seconds.
    enum SocketClock {
        static func now() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
    }

    /// Prints the figures for the agent of `endpoint`, whose vault holds `ids` among its items.
    static func run(endpoint: AgentEndpoint, ids: [UUID]) {
        let kept = AgentConnection(endpoint: endpoint)
        let request = AgentRequest.get(.key(service: "svc7", account: "user7"), limitOne: true, detail: .secret)
        _ = try? kept.send(request)
        let tKept = (try? time { for _ in 0..<1_000 { _ = try? kept.send(request) } }) ?? 0
        let client = AgentClient(endpoint: endpoint)
        let tEach = (try? time { for _ in 0..<1_000 { _ = try? client.send(request) } }) ?? 0
        print(
            "  " + pad("1,000 gets on one connection / one each")
                + String(
                    format: "%10.1f / %.1f ms   %d hello(s) / 1,000", tKept * 1000, tEach * 1000, kept.connectionsOpened
                ))
        let ten = Array(ids.prefix(10))
        let tIDs = AgentBenchmark.median(30) { _ = try? kept.get(ids: ten, detail: .secret) }
        print("  " + pad("get(ids:) of 10 with secrets (median of 30)") + String(format: "%10.2f ms", tIDs))
        feed(endpoint: endpoint, connection: kept)
    }

    /// The time from a write's start, and from its answer, to the event, median of 50 adds.
    static func feed(endpoint: AgentEndpoint, connection: AgentConnection) {
        let arrivals = Arrivals()
        guard
            let subscription = try? AgentClient(endpoint: endpoint).subscribe(onEvent: { event in
                if event.kind == .added, let account = event.key?.account { arrivals.note(account) }
            })
        else {
            print("  " + pad("write to event") + "     no subscription")
            return
        }
        defer { subscription.cancel() }
        var fromStart: [Double] = []
        var fromAnswer: [Double] = []
        let run = UUID().uuidString.prefix(8)
        for i in 0..<50 {
            let account = "feed-\(run)-\(i)"
            let start = SocketClock.now()
            guard
                case .written? = try? connection.send(
                    .add(Item(service: "bench-feed", account: account, secret: SecretBytes(utf8: "s"))))
            else { continue }
            let answered = SocketClock.now()
            guard let seen = arrivals.wait(for: account) else { continue }
            fromStart.append((seen - start) * 1000)
            fromAnswer.append((seen - answered) * 1000)
        }
        _ = try? connection.send(.delete(ItemQuery(service: "bench-feed")))
        guard !fromStart.isEmpty else {
            print("  " + pad("write to event") + "     no event arrived")
            return
        }
        let median = { (all: [Double]) in all.sorted()[all.count / 2] }
        print(
            "  " + pad("agent write to subscriber's event (median of \(fromStart.count))")
                + String(
                    format: "%10.2f ms from the write's start, %.2f ms after its answer, max %.2f", median(fromStart),
                    median(fromAnswer), fromStart.max() ?? 0))
    }
}
