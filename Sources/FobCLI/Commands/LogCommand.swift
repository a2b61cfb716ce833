import FobAgent
import FobStore
import FoundationEssentials

/// `fob log [--item SERVICE ACCOUNT] [--program PATH] [--since TIME] [--json]`:
/// the access log, verified, oldest entry first.
enum LogCommand: FobCommand {
    static let name = "log"
    static let summary = "show the access log: who read what, when, through which channel, what was decided"
    // `--item` takes two words: the service here, the account as the positional after it.
    static let positionals = ["ACCOUNT"]
    static let optionalPositionals = 1
    static let options: [OptionSpec] = [
        .value("--item", "SERVICE", help: "only the entries of the item SERVICE ACCOUNT"),
        .value("--program", "PATH", help: "only the entries of the program at PATH (or with argv[0] PATH)"),
        .value("--since", "TIME", help: "only entries since TIME: 30m, 2h, 7d, 2026-12-05 or 2026-12-05T10:00:00Z"),
        .flag("--json", help: "print a JSON array of objects"),
    ]
    static let usageLines = ["fob log [--item SERVICE ACCOUNT] [--program PATH] [--since TIME] [--json]"]
    static let discussion = """
        Asks the agent when it holds the vault unlocked (it applies the filters
        and asks nothing); otherwise, or with --password-file, reads the access
        log beside the vault with the master password (asked as other commands
        ask). Each line: time (UTC), event, decision, channel,
        the item (service/account) and the program (executable, pid). On a
        terminal the lines fit its width (COLUMNS, else the terminal's size):
        the item and the program are shortened with an ellipsis ('...' where
        the terminal cannot show '…'), then the event and the channel; time
        and decision stay whole. Piped or redirected, every line is whole. The whole
        log is verified as it is read: when an entry was removed, changed or
        reordered, the entries are still shown, each problem is named on
        standard error and the status is 93. --json prints an array of objects
        with index, time, event, decision, channel, detail, item (class,
        accessGroup, service, account) and requester (pid, uid, executable,
        argv0, parents, tty, unit, flatpakId); an absent decision, channel or
        item is null, an unknown pid or uid is left out.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let filter = try parseFilter(invocation)
        if let (records, problems) = fromAgent(invocation, filter) {
            return try show(records, problems: problems, invocation)
        }
        let vault = try invocation.unlockedVault()
        defer { vault.lock() }
        guard let key = try vault.accessLogKey(create: false) else {
            if AccessLogLocation(vaultURL: vault.url).exists {
                throw KeychainError.decode(AccessLogProblem.keyMissing.description)
            }
            return try show([], problems: [], invocation)
        }
        let keys = AccessLogKeys(logKey: key)
        let head = AccessLogHead.read(AccessLogHead.path(directory: invocation.watermarks.directory, keys: keys))
        let report = AccessLogReader.read(AccessLogLocation(vaultURL: vault.url), keys: keys, head: head)
        return try show(
            report.records.filter { filter.matches($0.entry) }, problems: report.problems.map(\.description),
            invocation)
    }

    /// The entries the agent answers (``AgentRequest/accessLog(_:)``), when
    /// it holds the vault unlocked and no password file was given; `nil`
    /// otherwise (the log is then read here).
    static func fromAgent(_ invocation: Invocation, _ filter: AccessLogFilter) -> ([AccessLogRecord], [String])? {
        guard invocation.globals.passwordFile == nil, let client = invocation.agentClient,
            case .accessLog(let records, let problems)? = try? client.send(.accessLog(filter), withSecrets: false)
        else { return nil }
        return (records, problems)
    }

    /// Prints `shown` (a table, or `--json`), then each problem on standard
    /// error. - Throws: `.decode` (exit 93) when there is a problem.
    static func show(_ shown: [AccessLogRecord], problems: [String], _ invocation: Invocation) throws -> Int32 {
        if invocation.arguments.flag("--json") {
            invocation.standardOutput.write(try json(shown) + "\n")
        } else if !shown.isEmpty {
            let context = invocation.context
            invocation.standardOutput.write(
                table(shown, columns: context.standardOutputColumns, term: context.environment["TERM"]))
        }
        guard problems.isEmpty else {
            for problem in problems { invocation.standardError.write("fob: \(problem)\n") }
            let count = problems.count
            throw KeychainError.decode(
                "the access log does not verify (\(count) problem\(count == 1 ? "" : "s")); see 'fob verify'")
        }
        return 0
    }

    /// The table of `shown`. On a terminal `columns` wide each line fits it
    /// (as `ps` and `journalctl` fit theirs): the item and the program are
    /// shortened first, then the event and the channel; the time and the
    /// decision stay whole. A program is cut at its start, keeping its name
    /// and pid. Not on a terminal (`columns` is `nil`) every cell is whole.
    /// - Parameters:
    ///   - shown: the entries, a row each.
    ///   - columns: the terminal's width, `nil` when standard output is not one.
    ///   - term: the `TERM` variable, for the ellipsis (``TextTable/ellipsis(term:)``).
    static func table(_ shown: [AccessLogRecord], columns: Int?, term: String?) -> [UInt8] {
        let rows = [["TIME", "EVENT", "DECISION", "CHANNEL", "ITEM", "PROGRAM"]] + shown.map(row)
        let table = TextTable(
            rows: rows, maximumCells: columns == nil ? nil : TextTable.defaultMaximumCells,
            yielding: [[4, 5], [1, 3]], cutAtStart: [5])
        return table.render(width: columns, ellipsis: TextTable.ellipsis(term: term))
    }

    /// The filter the options ask for.
    /// - Throws: ``UsageError`` for an ACCOUNT without `--item` (or the reverse) or a TIME not understood.
    static func parseFilter(_ invocation: Invocation) throws -> AccessLogFilter {
        var filter = AccessLogFilter(program: invocation.arguments.value("--program"))
        let service = invocation.arguments.value("--item")
        let account = invocation.arguments.positionals.first
        switch (service, account) {
        case (let service?, let account?): filter.item = (service, account)
        case (nil, nil): break
        default: throw UsageError("--item takes two words: --item SERVICE ACCOUNT", command: name)
        }
        if let since = invocation.arguments.value("--since") {
            guard let time = AccessLogFilter.time(since, now: invocation.now) else {
                throw UsageError(
                    "--since takes 30m, 2h, 7d, 2026-12-05 or 2026-12-05T10:00:00Z, not \"\(since)\"", command: name)
            }
            filter.since = time
        }
        return filter
    }

    /// One table row: time, event, decision, channel, item, program.
    static func row(_ record: AccessLogRecord) -> [String] {
        let entry = record.entry
        let item = entry.item.map { ListCommand.printable($0.service) + "/" + ListCommand.printable($0.account) } ?? "-"
        let who = entry.requester
        var program = ListCommand.printable(who.executable.isEmpty ? who.argv0 : who.executable)
        if let pid = who.pid { program += program.isEmpty ? "pid \(pid)" : " (\(pid))" }
        return [
            ItemJSON.date(entry.time), entry.event.rawValue, entry.decision?.rawValue ?? "-",
            entry.channel?.name ?? "-", item, program.isEmpty ? "-" : program,
        ]
    }

    /// The `--json` array (keys sorted).
    static func json(_ records: [AccessLogRecord]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(records.map(JSONEntry.init)), as: UTF8.self)
    }

    private struct JSONEntry: Encodable {
        struct Key: Encodable {
            var `class`: String, accessGroup: String, service: String, account: String
        }
        struct Requester: Encodable {
            var pid: Int32?, uid: UInt32?, executable: String, argv0: String, parents: [String]
            var tty: String, unit: String, flatpakId: String
        }
        var index: UInt64, time: String, event: String, decision: String?, channel: String?, detail: String
        var item: Key?, requester: Requester

        init(_ record: AccessLogRecord) {
            let e = record.entry
            let r = e.requester
            index = record.index
            time = ItemJSON.date(e.time)
            event = e.event.rawValue
            decision = e.decision?.rawValue
            channel = e.channel?.name
            detail = e.detail
            item = e.item.map {
                Key(class: $0.itemClass.rawValue, accessGroup: $0.accessGroup, service: $0.service, account: $0.account)
            }
            requester = Requester(
                pid: r.pid, uid: r.uid, executable: r.executable, argv0: r.argv0, parents: r.parents, tty: r.tty,
                unit: r.unit, flatpakId: r.flatpakID)
        }

        func encode(to encoder: any Encoder) throws {
            // Absent values are written as null, not left out.
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(index, forKey: .index)
            try c.encode(time, forKey: .time)
            try c.encode(event, forKey: .event)
            try c.encode(decision, forKey: .decision)
            try c.encode(channel, forKey: .channel)
            try c.encode(detail, forKey: .detail)
            try c.encode(item, forKey: .item)
            try c.encode(requester, forKey: .requester)
        }

        enum CodingKeys: String, CodingKey { case index, time, event, decision, channel, detail, item, requester }
    }
}
