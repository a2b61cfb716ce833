import FobAccess
import FobStore
import FobSystem
import FoundationEssentials

/// The terminal UI's access log view: the log's entries, newest first,
/// narrowed by a query typed as in the item list (item, program, channel,
/// event or decision, case-insensitive) and by the item or program of an
/// entry picked, with one selected row and a line saying whether the log verifies.
public struct AccessLogView: Sendable {
    /// One row as the view draws it, every value display-safe.
    public struct Row: Sendable, Equatable {
        /// Local time, `2026-12-05 14:02:07`.
        public var time: String
        /// `read`, `denial`, …
        public var event: String
        /// `allowed-rule`, `denied`, …, or `-`.
        public var decision: String
        /// `get`, `secret-service`, …, or `-`.
        public var channel: String
        /// `service/account`, or `-`.
        public var item: String
        /// The executable (or `argv[0]`) and pid, or `-`.
        public var program: String
    }

    /// Every entry read, newest first.
    public private(set) var records: [AccessLogRecord]
    /// What is wrong with the log (empty: it verifies), as `fob verify` words it.
    public let problems: [String]
    /// The entries the filter lets through, newest first.
    public private(set) var visible: [AccessLogRecord] = []
    /// The selected row of ``visible`` (0 when it is empty).
    public private(set) var selection = 0
    /// The filter: the query typed, and the item or program picked.
    public var filter = AccessLogFilter() {
        didSet { refilter() }
    }

    /// A view of `report` (as ``AccessLogReader/read(_:keys:head:)`` gives it).
    public init(report: AccessLogReport) {
        records = report.records.reversed()
        problems = report.problems.map(\.description)
        refilter()
    }

    /// A view of what a store answered (``KeychainStore/accessLog(_:)``: oldest first).
    public init(answer: AccessLogAnswer) {
        records = answer.records.reversed()
        problems = answer.problems
        refilter()
    }

    /// Reads the log of a fully unlocked vault.
    /// - Parameters:
    ///   - vault: fully unlocked.
    ///   - headDirectory: where the log's head state is kept, or `nil`.
    /// - Returns: the view; an empty one when the vault has no log yet.
    /// - Throws: `.interactionNotAllowed` unless fully unlocked; `.decode` when the log key does not open.
    public static func load(from vault: Vault, headDirectory: String?) throws(KeychainError) -> AccessLogView {
        let location = AccessLogLocation(vaultURL: vault.url)
        guard let key = try vault.accessLogKey(create: false) else {
            var report = AccessLogReport()
            if location.exists { report.problems = [.keyMissing] }
            return AccessLogView(report: report)
        }
        let keys = AccessLogKeys(logKey: key)
        let head = headDirectory.flatMap { AccessLogHead.read(AccessLogHead.path(directory: $0, keys: keys)) }
        return AccessLogView(report: AccessLogReader.read(location, keys: keys, head: head))
    }

    /// The rows of ``visible``.
    public var rows: [Row] { visible.map(AccessLogView.row) }

    /// The selected entry, or `nil` when none is visible.
    public var selected: AccessLogRecord? { visible.indices.contains(selection) ? visible[selection] : nil }

    /// Moves the selection by `offset` rows (negative: up), within the visible rows.
    public mutating func move(by offset: Int) {
        guard !visible.isEmpty else { return }
        selection = min(max(selection + offset, 0), visible.count - 1)
    }

    /// Narrows to the entries of the selected entry's item (again: shows every item).
    public mutating func toggleSelectedItem() {
        if filter.item != nil {
            filter.item = nil
        } else if let item = selected?.entry.item {
            filter.item = (item.service, item.account)
        }
    }

    /// Narrows to the entries of the selected entry's program (again: shows every program).
    public mutating func toggleSelectedProgram() {
        if filter.program != nil {
            filter.program = nil
        } else if let who = selected?.entry.requester, !(who.executable.isEmpty && who.argv0.isEmpty) {
            filter.program = who.executable.isEmpty ? who.argv0 : who.executable
        }
    }

    /// `12 of 40 entries; the log verifies`, or the first problem and how many there are.
    public var statusLine: String {
        let shown = visible.count == records.count ? "\(records.count)" : "\(visible.count) of \(records.count)"
        let entries = "\(shown) entr\(records.count == 1 ? "y" : "ies")"
        guard let first = problems.first else { return entries + "; the log verifies" }
        let more = problems.count > 1 ? " (and \(problems.count - 1) more; run fob verify)" : ""
        return entries + "; DOES NOT VERIFY: \(first)" + more
    }

    private mutating func refilter() {
        let keep = selected?.index
        visible = records.filter { filter.matches($0.entry) }
        selection = keep.flatMap { index in visible.firstIndex { $0.index == index } } ?? 0
    }

    /// An entry's details for the view's details pane, display-safe and
    /// never a secret: the program, the parent chain, its pid, `argv[0]`,
    /// the terminal, the unit or Flatpak app, and the entry's detail (the
    /// rule that settled it, a lease's length).
    public static func details(_ record: AccessLogRecord) -> [String] {
        let entry = record.entry
        let who = entry.requester
        var lines = [
            "entry \(record.index): \(entry.event.rawValue)" + (entry.decision.map { ", \($0.rawValue)" } ?? "")
        ]
        if !who.executable.isEmpty { lines.append("program " + displaySafe(who.executable)) }
        lines.append("run by " + (who.parents.isEmpty ? "?" : who.parents.map(displaySafe).joined(separator: " < ")))
        if let pid = who.pid { lines.append("pid \(pid)" + (who.uid.map { ", uid \($0)" } ?? "")) }
        if !who.argv0.isEmpty { lines.append("argv[0] " + displaySafe(who.argv0)) }
        lines.append("on " + (who.tty.isEmpty ? "no terminal" : displaySafe(who.tty)))
        if !who.unit.isEmpty { lines.append("unit " + displaySafe(who.unit)) }
        if !who.flatpakID.isEmpty { lines.append("Flatpak " + displaySafe(who.flatpakID)) }
        if !entry.detail.isEmpty { lines.append("detail " + displaySafe(entry.detail)) }
        return lines
    }

    static func row(_ record: AccessLogRecord) -> Row {
        let entry = record.entry
        let who = entry.requester
        var program = displaySafe(who.executable.isEmpty ? who.argv0 : who.executable)
        if let pid = who.pid { program += program.isEmpty ? "pid \(pid)" : " (\(pid))" }
        return Row(
            time: DateText.local(entry.time, "%Y-%m-%d %H:%M:%S"), event: entry.event.rawValue,
            decision: entry.decision?.rawValue ?? "-", channel: entry.channel?.name ?? "-",
            item: entry.item.map { displaySafe($0.service) + "/" + displaySafe($0.account) } ?? "-",
            program: program.isEmpty ? "-" : program)
    }
}
