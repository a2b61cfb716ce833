import FobAccess
import FobAgent
import FobImport
import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// `fob import FORMAT PATH`: brings another password manager's export (or another Fob vault) in.
enum ImportCommand: FobCommand {
    static let name = "import"
    static let summary = "import an export of another password manager, or another Fob vault"
    static let positionals = ["FORMAT", "PATH"]
    static let options: [OptionSpec] = [
        .flag("--dry-run", help: "print what would happen; change nothing"),
        .value("--on-duplicate", "MODE", help: "rename (default), skip, replace or newer"),
        .value("--encoding", "NAME", help: "the file's legacy encoding (default UTF-8)"),
        .value("--source-password-file", "F", help: "fob-vault: the source's password (first line of F)"),
    ]
    static let discussion = """
        FORMAT: pass, keepassxc-csv, keepassxc-xml, bitwarden-json, bitwarden-csv,
        chrome-csv (also Edge and Brave), firefox-csv, 1password-csv, fob-json,
        fob-csv (what export --format csv writes), fob-vault. PATH is the export file (for pass the password-store directory,
        for fob-vault the other vault). Everything is imported in one transaction,
        or nothing. An entry with the same service and user ID as an item (or an
        earlier entry) is renamed to "SERVICE (2)", skipped, replaces it, or with
        'newer' the more recently modified copy wins. The summary counts what was
        added, renamed, replaced and skipped, and lists what could not be kept.
        Encrypted exports are refused: export unencrypted. Exits 1 when nothing
        could be imported. See fob(1) for how each format's fields map.
        """

    /// The largest export file read: 512 MiB.
    static let maxFileBytes = 512 << 20

    static func run(_ invocation: Invocation) throws -> Int32 {
        let formatName = invocation.arguments.positionals[0]
        let path = invocation.arguments.positionals[1]
        guard let format = ImportFormat(rawValue: formatName) else {
            throw UsageError(
                "unknown format \"\(displaySafe(formatName))\"; formats: "
                    + ImportFormat.allCases.map(\.rawValue).joined(separator: ", "), command: name)
        }
        let modeName = invocation.arguments.value("--on-duplicate") ?? "rename"
        guard let policy = DuplicatePolicy(rawValue: modeName) else {
            throw UsageError("--on-duplicate takes rename, skip, replace or newer", command: name)
        }
        let encoding = invocation.arguments.value("--encoding")
        if let encoding, TextDecoding.encodings[encoding.lowercased()] == nil {
            throw UsageError(
                "unknown encoding \"\(displaySafe(encoding))\"; known: "
                    + TextDecoding.encodings.keys.sorted().joined(separator: ", "), command: name)
        }
        if encoding != nil, [.pass, .fobVault, .fobJSON, .keepassxcXML].contains(format) {
            throw UsageError(
                "--encoding is for the CSV formats and bitwarden-json (XML names its own encoding; fob-json is UTF-8)",
                command: name)
        }
        if invocation.arguments.value("--source-password-file") != nil, format != .fobVault {
            throw UsageError("--source-password-file is for fob-vault only", command: name)
        }
        let progress = Progress(invocation)
        var read: ImportRead
        do {
            read = try readSource(format, path: path, encoding: encoding, invocation: invocation, progress: progress)
        } catch let error as ImportError {
            throw CLIFailure("cannot import \(path) (\(format.rawValue)): \(error); nothing was changed")
        }
        read.keepCounterBasedSeedsAsFields()
        guard !read.entries.isEmpty else {
            for line in read.unusable { invocation.standardError.write("fob: not imported: \(line)\n") }
            throw CLIFailure("nothing could be imported from \(path) (\(format.rawValue)); nothing was changed")
        }
        // An entry over a limit names itself before anything is written.
        try checkEntries(read.entries, path: path, format: format)
        // Through the agent when it holds the vault unlocked: no password.
        let backend = invocation.items()
        defer { backend.close() }
        // Every attribute of the stored items (a replacement keeps what the export lacks).
        let existing = try storedItems(backend)
        let plan = ImportPlan(entries: read.entries, existing: existing, policy: policy, now: invocation.now)
        let dryRun = invocation.arguments.flag("--dry-run")
        if !dryRun {
            let total = plan.changes.count
            try backend.applyImport(plan.changes) { done in progress.show("writing", done, total) }
            progress.finish()
        }
        let out = invocation.standardOutput
        let entries = read.entries.count == 1 ? "1 entry" : "\(read.entries.count) entries"
        for line in plan.details { out.write("  \(line)\n") }
        for line in read.notKept { out.write("  not kept: \(line)\n") }
        for line in read.unusable { out.write("  not imported: \(line)\n") }
        if dryRun {
            out.write("Dry run, nothing changed: \(entries) from \(path) would give \(plan.summary)\n")
        } else if plan.changes.isEmpty {
            out.write("Nothing imported from \(path) (\(format.rawValue)): \(entries) read, \(plan.summary)\n")
        } else {
            out.write("Imported \(entries) from \(path) (\(format.rawValue)): \(plan.summary)\n")
        }
        return 0
    }

    /// Refuses the whole import, before anything is written, when one entry
    /// is over a limit (``Item/checkLimits()``, a secret over 1 MiB) or names a
    /// reserved access group; the message names the entry's place in the source.
    /// - Throws: `CLIFailure` (status 1; 2 for a reserved access group).
    static func checkEntries(_ entries: [ImportEntry], path: String, format: ImportFormat) throws {
        for entry in entries {
            do { try entry.item.checkLimits() } catch {
                throw CLIFailure(
                    "cannot import \(path) (\(format.rawValue)): \(entry.origin): \(error); nothing was changed")
            }
            if ItemQuery.reservedAccessGroups.contains(entry.item.accessGroup) {
                throw CLIFailure(
                    "cannot import \(path) (\(format.rawValue)): \(entry.origin): the access group \"\(entry.item.accessGroup)\" is reserved for Fob's own records (sync's state); nothing was changed",
                    status: 2)
            }
            if let secret = entry.item.secret, secret.count > Item.maxSecretBytes {
                throw CLIFailure(
                    "cannot import \(path) (\(format.rawValue)): \(entry.origin): the secret is larger than 1 MiB; nothing was changed"
                )
            }
        }
    }

    static func readSource(
        _ format: ImportFormat, path: String, encoding: String?, invocation: Invocation,
        progress: Progress
    ) throws -> ImportRead {
        switch format {
        case .pass:
            return try PassStore.read(directory: path, environment: invocation.context.environment) { done, total in
                progress.show("decrypting", done, total)
            }
        case .fobVault:
            return try readVault(path, invocation: invocation)
        default:
            break
        }
        var bytes = try readFile(path)
        defer { bytes.wipe() }
        switch format {
        case .keepassxcCSV: return try CSVFormats.keepassxc(bytes, encoding: encoding)
        case .bitwardenCSV: return try CSVFormats.bitwarden(bytes, encoding: encoding)
        case .chromeCSV: return try CSVFormats.chrome(bytes, encoding: encoding)
        case .firefoxCSV: return try CSVFormats.firefox(bytes, encoding: encoding)
        case .onePasswordCSV: return try CSVFormats.onePassword(bytes, encoding: encoding)
        case .fobCSV: return try CSVFormats.fob(bytes, encoding: encoding)
        case .keepassxcXML:
            return try KeePassXML.read(
                bytes, parser: HelperXMLParser(environment: invocation.context.environment).parse)
        case .bitwardenJSON: return try BitwardenJSON.read(TextDecoding.utf8(bytes, encoding: encoding))
        case .fobJSON: return try FobJSON.read(bytes)
        case .pass, .fobVault: return ImportRead()
        }
    }

    /// Every item of another vault, unlocked with its own password; the
    /// unlock and the read of each item are recorded in that vault's access
    /// log (``LocalAccessRecord``), before anything is imported.
    static func readVault(_ path: String, invocation: Invocation) throws -> ImportRead {
        let url = URL(fileURLWithPath: path)
        guard url.standardizedFileURL.path != invocation.globals.vaultURL.standardizedFileURL.path else {
            throw ImportError.wrongType("the source is this vault")
        }
        let source = try Vault(url: url)
        let password: SecretBytes
        if let file = invocation.arguments.value("--source-password-file") {
            password = try PasswordFile.readFirstLine(path: file, maxBytes: Vault.maxPasswordBytes)
        } else {
            password = try invocation.context.terminal.readSecret(
                prompt: "Master password of \(path): ",
                maxBytes: Vault.maxPasswordBytes)
        }
        do {
            try source.unlock(password: password)
        } catch {
            throw error == .authFailed ? wrongSourcePassword(path, invocation: invocation) : error
        }
        defer { source.lock() }
        let items = try source.allItemsWithSecrets()
        // The source's own access log records the bulk read, as `fob export` does its own.
        let record = invocation.accessRecord()
        record.unlocked(source)
        record.read(
            items.map(ItemKey.init),
            "the master password: read by fob import into \(invocation.globals.vaultURL.path)", source)
        return ImportRead(
            entries: items.enumerated().map { ImportEntry(item: $1, datesKnown: true, origin: "item \($0 + 1)") })
    }

    /// A wrong master password for the source vault of `fob-vault`, named as
    /// the source's (not this vault's), exit status 51.
    static func wrongSourcePassword(_ path: String, invocation: Invocation) -> CLIFailure {
        let file = invocation.arguments.value("--source-password-file")
        return CLIFailure(
            "wrong master password for the source vault \(path)"
                + (file.map { " (given by --source-password-file \($0))" } ?? "")
                + ", not this vault's; nothing was changed (errSecAuthFailed)",
            status: KeychainError.authFailed.exitStatus)
    }

    /// The file's bytes, up to ``maxFileBytes``.
    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImportError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var out: [UInt8] = []
        var info = stat()
        if fstat(fd, &info) == 0, info.st_size > 0 {
            out.reserveCapacity(Swift.min(Int(info.st_size), maxFileBytes) + 1)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        defer { buffer.wipe() }
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ImportError.io("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { return out }
            out += buffer[0..<n]
            guard out.count <= maxFileBytes else {
                out.wipe()
                throw ImportError.io("\(path) is larger than \(maxFileBytes >> 20) MiB")
            }
        }
    }

    /// A progress line on standard error, when it is a terminal and there are over 1,000 entries.
    final class Progress {
        let sink: any ByteSink
        let enabled: Bool
        var shown = false

        init(_ invocation: Invocation) {
            sink = invocation.standardError
            enabled = (invocation.standardError as? FileDescriptorSink).map { isatty($0.fd) == 1 } ?? false
        }

        func show(_ what: String, _ done: Int, _ total: Int) {
            guard enabled, total > 1000 else { return }
            sink.write("\r\u{1B}[Kfob: \(what) \(done)/\(total)")
            shown = true
        }

        func finish() {
            if shown { sink.write("\r\u{1B}[K") }
            shown = false
        }
    }

    /// Every stored item with every attribute but the secret; empty when none.
    private static func storedItems(_ backend: ItemAccess) throws(KeychainError) -> [Item] {
        do {
            return try backend.items(matching: ItemQuery(itemClass: nil), detail: .attributes)
        } catch .itemNotFound {
            return []
        }
    }
}
