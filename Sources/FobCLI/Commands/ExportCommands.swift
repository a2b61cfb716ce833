import FobAccess
import FobAgent
import FobImport
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// `fob export [--format fob-json|csv] [--output PATH] [--force] [--include-ssh-keys]`: every item with its secrets, in plaintext.
enum ExportCommand: FobCommand {
    static let name = "export"
    static let summary = "write every item with its secrets, in plaintext (fob-json or csv)"
    static let options: [OptionSpec] = [
        .value("--format", "fob-json|csv", help: "fob-json (default; every attribute) or csv"),
        .value("--output", "PATH", help: "write to PATH (created 0600) instead of standard output"),
        .flag("--force", help: "write to a terminal, or over an existing PATH"),
        .flag("--include-ssh-keys", help: "also write the private keys of ssh-key items (left out by default)"),
    ]
    static let discussion = """
        fob-json keeps every attribute, so 'fob import fob-json' into another vault
        reproduces each item exactly. csv has the columns service, account, password,
        url, notes, totp, label, kind, created, modified (RFC 4180 quoting); a cell
        that begins with = + - @ ' a tab or a carriage return gets a ' in front, so
        no spreadsheet runs it as a formula; 'fob import fob-csv' reads it back, and
        a warning names what csv cannot hold (custom fields, Keychain attributes).
        The output holds every secret in plaintext: a warning says so on standard
        error. Refuses to write to a terminal, or over an existing file, without
        --force, which writes a new 0600 file and renames it over the old one.
        Asks the master password every time, even while the agent is unlocked; a
        file it created is removed again when the export fails. SSH keys (items
        of kind ssh-key) are left out, and counted on standard error, unless
        --include-ssh-keys is given.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let format = invocation.arguments.value("--format") ?? "fob-json"
        guard format == "fob-json" || format == "csv" else {
            throw UsageError("--format takes fob-json or csv", command: name)
        }
        let force = invocation.arguments.flag("--force")
        let output = invocation.arguments.value("--output")
        // A new file, renamed over an existing one only once it is written:
        // an existing file is never truncated in place, and a failed export
        // (a wrong password, say) leaves it as it was.
        var destination = try ExportDestination(
            path: output, force: force, standardOutput: invocation.standardOutput)
        var finished = false
        defer { if !finished { destination.abandon() } }
        if let fd = destination.fd, isatty(fd) == 1, !force {
            throw CLIFailure(
                "refusing to write every secret in plaintext to a terminal; use --output PATH, a pipe, or --force")
        }
        let vault: Vault
        do {
            vault = try invocation.unlockedVault()
        } catch KeychainError.interactionNotAllowed {
            throw KeychainError.interactionNotAllowed(
                "export asks the master password every time, even while the agent is unlocked; "
                    + "run it on a terminal or pass --password-file")
        }
        defer { vault.lock() }
        let record = invocation.accessRecord()
        record.unlocked(vault)
        let everything = try vault.allItemsWithSecrets()
        let withKeys = invocation.arguments.flag("--include-ssh-keys")
        let items = withKeys ? everything : everything.filter { $0.kind != .sshKey }
        // Recorded before a byte is written: an export cut short has still read them.
        record.read(items.map(ItemKey.init), "the master password: exported as \(format)", vault)
        record.read(
            everything.filter { !withKeys && $0.kind == .sshKey }.map(ItemKey.init),
            "the master password: read by the export, left out of it", vault)
        if items.count < everything.count {
            invocation.standardError.write(
                "fob: \(everything.count - items.count) SSH keys left out; --include-ssh-keys writes them too\n")
        }
        var bytes = format == "csv" ? CSVExport.write(items) : FobJSON.write(items)
        defer { bytes.wipe() }
        if let fd = destination.fd {
            guard FileDescriptorIO.writeAll(bytes, to: fd) else {
                throw KeychainError.io(
                    "cannot write \(output ?? "standard output"): \(String(cString: strerror(errno)))")
            }
        } else {
            invocation.standardOutput.write(bytes)
        }
        try destination.commit()
        finished = true
        invocation.standardError.write(
            "fob: warning: \(output ?? "the output") holds \(items.count) secrets in plaintext; "
                + "keep it safe and delete it when done\n")
        if format == "csv" {
            for loss in CSVExport.losses(items) {
                invocation.standardError.write(
                    "fob: warning: csv cannot hold \(loss); they are not in the export (--format fob-json keeps them)\n"
                )
            }
        }
        return 0
    }
}

/// `fob backup PATH`: a consistent, still-encrypted copy of the vault.
enum BackupCommand: FobCommand {
    static let name = "backup"
    static let summary = "write a consistent, still-encrypted copy of the vault (0600)"
    static let positionals = ["PATH"]
    static let discussion = """
        Uses SQLite's online backup API, so other processes may write meanwhile; the
        copy is one consistent state. It opens with the same master password (use it
        as a vault with --vault PATH, read-only; fob verify checks it). Needs no
        password; refuses to overwrite a file. Copied back over the vault by hand it
        is refused as an old copy (exit 93); 'fob restore PATH' puts it back.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let path = invocation.arguments.positionals[0]
        let vault = try invocation.openVault()
        try vault.backup(to: URL(fileURLWithPath: path))
        return invocation.succeed(printing: "Backed up \(vault.url.path) to \(path)\n")
    }
}

/// `fob restore BACKUP`: puts a backup back as the vault, on purpose.
enum RestoreCommand: FobCommand {
    static let name = "restore"
    static let summary = "put a backup back as the vault (its older state accepted)"
    static let positionals = ["BACKUP"]
    static let discussion = """
        Asks the backup's master password, copies the backup over the vault of
        --vault (made when missing) with SQLite's online backup API, and takes its
        state as the current one, as 'fob unlock --accept-rollback' does: the vault
        opens without exit 93. Every item written since the backup is lost. A
        running agent is locked, to read the restored vault afresh.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let source = URL(fileURLWithPath: invocation.arguments.positionals[0])
        let destination = invocation.globals.vaultURL
        let backup = try Vault(url: source)
        defer { backup.lock() }
        if Vault.exists(at: destination), Vault.sameFile(source, destination) {
            throw UsageError("\(source.path) is the vault itself; name a backup", command: name)
        }
        try backup.unlock(password: try invocation.masterPassword(prompt: "Master password: "))
        let counter = backup.writeCounter ?? 0
        let id = try VaultWatermarks.id(of: backup)
        try backup.restore(to: destination)
        invocation.watermarks.set(counter, of: id)
        if invocation.globals.useAgent {
            _ = try? AgentClient(endpoint: invocation.agentEndpoint).send(.lock)
        }
        return invocation.succeed(printing: "Restored \(source.path) to \(destination.path) (write \(counter))\n")
    }
}
