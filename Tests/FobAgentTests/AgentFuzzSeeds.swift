import FobAgent
import Foundation

@testable import FobStore

/// The seeds of the `agent-request` fuzz corpus for this protocol version:
/// `vN-NAME` (N = ``AgentProtocol/version``), each one message (a frame's
/// payload) of every request, every answer shape and every event kind,
/// built from fixed values so that the same bytes come out every time.
/// `FOB_WRITE_FUZZ_SEEDS=1 swift test --filter AgentFuzzCorpusTests`
/// writes them into `Fuzz/Corpus/agent-request` (after a version bump, or a
/// new verb); ``AgentFuzzCorpusTests`` checks that the corpus holds them.
enum AgentFuzzSeeds {
    /// The seeds' name prefix: `v6-`.
    static var prefix: String { "v\(AgentProtocol.version)-" }

    static let id = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
    static let key = ItemKey(service: "s", account: "a")

    /// An item with every date and identifier fixed; `secret` when given.
    static func item(secret: String?) -> Item {
        var item = Item(service: "s", account: "a", secret: secret.map { SecretBytes.text($0) })
        item.persistentID = id
        item.created = Date(timeIntervalSince1970: 1_700_000_000)
        item.modified = Date(timeIntervalSince1970: 1_700_000_100)
        item.label = "label"
        item.revision = 3
        return item
    }

    /// A consent question as the terminal UI sees it.
    static let prompt = AccessPrompt(
        id: 7, pid: 4321, program: "/usr/bin/git", parents: "bash[4000] ← tmux[1]", workingDirectory: "/home/ana/src",
        terminal: "/dev/pts/3", item: "service \"s\", account \"a\"", channel: "git",
        reason: "the vault's default rule is 'ask'", leaseSeconds: 900)

    /// Every request, by seed name.
    static var requests: [(name: String, message: AgentRequest)] {
        var update = ItemChanges()
        update.label = .some("new label")
        let filter = AccessLogFilter(
            item: (service: "s", account: "a"), program: "/usr/bin/git",
            since: Date(timeIntervalSince1970: 1_700_000_000), text: "read")
        return [
            ("status", .status), ("lock", .lock), ("subscribe", .subscribe),
            ("get", .get(.key(service: "s", account: "a"), limitOne: true, detail: .secret)),
            ("get-secret-only", .get(.key(service: "s", account: "a"), limitOne: false, detail: .secretOnly)),
            ("get-items", .getItems(ids: [id], detail: .attributes)),
            ("list", .list(service: "s")),
            ("add", .add(item(secret: "x"))),
            ("save", .save(service: "s", account: "a", secret: .text("x"), changes: update)),
            ("update", .update(.key(service: "s", account: "a"), update)),
            ("delete", .delete(.key(service: "s", account: "a"))),
            ("import", .applyImport([.add(item(secret: "x")), .delete(existing: item(secret: nil))])),
            (
                "for-client",
                .forClient(pid: 4321, request: .get(.key(service: "s", account: "a"), limitOne: true, detail: .secret))
            ),
            ("access-log", .accessLog(filter)),
            ("access-log-all", .accessLog(AccessLogFilter())),
            ("answer-once", .answer(question: 7, .once)),
            ("answer-lease", .answer(question: 7, .lease(seconds: 900))),
            ("answer-until-lock", .answer(question: 7, .untilLock)),
            ("answer-always", .answer(question: 7, .always)),
            ("answer-deny", .answer(question: 7, .deny)),
        ]
    }

    /// An entry of the access log as the agent answers it.
    static let logEntry = AccessLogEntry(
        time: Date(timeIntervalSince1970: 1_700_000_000), event: .denial,
        requester: AccessLogRequester(
            pid: 4321, uid: 1000, executable: "/usr/bin/git", argv0: "git", parents: ["bash(4000)"],
            tty: "/dev/pts/3", unit: "session-2.scope"),
        item: key, channel: .git, decision: .timedOut, detail: "the vault's default rule is 'ask'; no one answered")

    /// Every answer and event shape, by seed name.
    static var responses: [(name: String, message: AgentResponse)] {
        let renamed = AgentEvent(
            kind: .renamed, key: key, revision: 7, id: id, oldKey: ItemKey(service: "s", account: "old"))
        let added = AgentEvent(kind: .added, key: key, revision: 3, id: id, summary: item(secret: nil))
        return [
            ("event", .event(renamed)), ("event-added", .event(added)),
            ("event-locked", .event(AgentEvent(kind: .locked, key: nil))),
            ("event-unlocked", .event(AgentEvent(kind: .unlocked, key: nil))),
            ("event-question", .event(AgentEvent(question: prompt, settled: false))),
            ("event-settled", .event(AgentEvent(question: prompt, settled: true))),
            ("written", .written(count: 2, changes: [added, renamed])),
            (
                "access-log-answer",
                .accessLog(
                    records: [AccessLogRecord(index: 12, entry: logEntry)],
                    problems: ["entry 11 was removed"])
            ),
        ]
    }

    /// Every seed's name (with ``prefix``) and bytes.
    static var all: [(name: String, bytes: [UInt8])] {
        requests.map { (prefix + $0.name, $0.message.encoded()) }
            + responses.map { (prefix + $0.name, $0.message.encoded()) }
    }

    /// The corpus directory of the `agent-request` target.
    static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/agent-request")
    }

    /// Writes every seed into ``directory``.
    static func write() throws {
        for seed in all { try Data(seed.bytes).write(to: directory.appendingPathComponent(seed.name)) }
    }
}
