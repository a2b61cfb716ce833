import FobAccess
import FobStore
import FobSync
import FoundationEssentials

/// Builds the sync engine of the invocation's vault, with git's messages on standard error.
extension Invocation {
    func syncEngine(_ items: ItemAccess) throws -> SyncEngine {
        nonisolated(unsafe) let sink = standardError
        let engine: SyncEngine
        do {
            engine = try SyncEngine(
                store: items,
                treeDirectory: SyncPaths.tree(vaultPath: globals.vaultURL.path, environment: context.environment),
                environment: context.environment, now: { Date() },
                messages: { text in sink.write(text) })
        } catch {
            throw error.cliFailure
        }
        engine.treePassword = { [self] device in try treePassword(device: device) }
        return engine
    }

    /// The master password that opens a header of the sync tree: the first
    /// line of `--tree-password-file`; else for `join` (`device` `nil`) as
    /// the vault's master password is read; else asked on the terminal, and
    /// without one ``SyncError/newKey(_:)`` (exit 63), never a wait.
    /// - Parameter device: the device whose header it opens (`nil`: any, for `join`).
    func treePassword(device: String?) throws -> SecretBytes {
        if let file = arguments.value("--tree-password-file") {
            return try PasswordFile.readFirstLine(path: file, maxBytes: Vault.maxPasswordBytes + 1)
        }
        guard let device else {
            // join: this vault's --password-file serves when the passwords agree.
            return try masterPassword(prompt: "Master password of a device in the tree: ")
        }
        do {
            return try ask(
                "The sync tree has a new key. Master password of device \(device): ",
                maxBytes: Vault.maxPasswordBytes, what: "the sync tree's password")
        } catch KeychainError.interactionNotAllowed {
            throw SyncError.newKey("(from device \(device))").cliFailure
        }
    }

    /// Asks on the terminal which of the keys `shown` (numbered 1 to
    /// `count`) the user compared with `fob sync status` on its device: the
    /// answer typed (echoed: it is no secret), its number or fingerprint
    /// (empty: none). An answer `accepts` refuses is asked again, saying
    /// what is valid, up to ``keyAnswersTried`` answers in all; the last is returned.
    /// - Throws: ``SyncError/keysNotAsked(_:)`` without a terminal.
    func chooseKey(_ shown: String, count: Int, accepts: (String) -> Bool) throws -> String {
        // Each line under 80 columns: a terminal wraps longer ones mid-sentence.
        var prompt =
            shown + "Compare one with `fob sync status` on its device.\n"
            + "Type its number to accept it (Enter accepts none): "
        var answer = ""
        for _ in 0..<Self.keyAnswersTried {
            do {
                answer = try context.terminal.readLine(prompt: prompt, maxBytes: 64)
            } catch .noTerminal {
                throw SyncError.keysNotAsked(
                    shown + "no terminal to accept one: compare one with `fob sync status` on that device,\n"
                        + "     then join with --accept-key FINGERPRINT")
            } catch .interrupted {
                throw CLIFailure("interrupted; nothing was changed", status: CLIFailure.interruptedStatus)
            } catch .tooLong {
                answer = String(repeating: "?", count: 65)
            }
            if answer.isEmpty || accepts(answer) { return answer }
            prompt = "Type a number from 1 to \(count), or a fingerprint; Enter accepts none: "
        }
        return answer
    }

    /// How many answers the key question of a join takes before it accepts none.
    static let keyAnswersTried = 3

    /// Runs `body` on the items of a sync command (as ``items()``), but a
    /// master password asked on the terminal is handed to the agent only
    /// when the vault has sync set up: whether it has is kept in the
    /// encrypted vault, so telling unlocks it, and a command refused for
    /// that leaves no agent started or unlocked.
    func withSyncItems<R>(_ body: (ItemAccess) throws -> R) throws -> R {
        let items = items()
        defer { items.close() }
        var unlockedHere: Vault?
        items.onLocalUnlock = { unlockedHere = $0 }
        do {
            let result = try body(items)
            if let unlockedHere { handToAgentIfAsked(unlockedHere) }
            return result
        } catch {
            let notSetUp = (error as? SyncError) == .notSetUp || (error as? CLIFailure) == SyncError.notSetUp.cliFailure
            if let unlockedHere, !notSetUp { handToAgentIfAsked(unlockedHere) }
            throw error
        }
    }

    /// Runs a sync step, turning its errors into the CLI's.
    func syncing<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as SyncError { throw error.cliFailure }
    }

    /// Runs a sync step that writes, under the vault's exclusive lock
    /// (`VAULT.lock`), so two syncs of one vault never share its work tree.
    func syncing<R>(locking items: ItemAccess, _ body: () throws -> R) throws -> R {
        try syncing { try items.withExclusiveLock(body) }
    }
}

extension SyncError {
    var cliFailure: CLIFailure { CLIFailure(description, status: exitStatus) }
}

/// `fob sync`, `fob sync init REMOTE`, `fob sync join REMOTE`, `fob sync status`.
enum SyncCommand: FobCommand {
    static let name = "sync"
    static let summary = "sync this vault with other devices through a git remote"
    static let positionals = ["init|join|status", "REMOTE"]
    static let optionalPositionals = 2
    static let options: [OptionSpec] = [
        .flag("--strict", help: "exit 1 when conflicts remain"),
        .value(
            "--kdf", "K", choices: ["interactive", "moderate", "sensitive"],
            help: "init: Argon2id costs of the tree's header (default moderate)"),
        .value(
            "--tree-password-file", "PATH",
            help:
                "join, or a sync that meets a new key: the tree's password (a device's master password) is the first line of PATH"
        ),
        .value(
            "--name", "NAME",
            help: "init, join: this device's name (default the host name); a sync: renames this device"),
        .value(
            "--accept-key", "FINGERPRINT",
            help: "join: trust the device whose signing key has this fingerprint (as 'fob sync status' there shows it)"),
    ]
    static let usageLines = [
        "fob sync [--strict] [--name NAME] [--tree-password-file PATH]",
        "fob sync init REMOTE [--kdf K] [--name NAME] [--tree-password-file PATH]",
        "fob sync join REMOTE [--name NAME] [--tree-password-file PATH] [--accept-key FINGERPRINT]",
        "fob sync status",
    ]
    static let discussion = """
        'fob sync init REMOTE' makes the tree of this vault's items and pushes
        it to an empty git remote. 'fob sync join REMOTE' joins a tree from
        another device: it asks the master password of a device in the tree
        (or reads --tree-password-file), shows the signing key fingerprint of
        each device that signs a device roster in the tree, numbered, and asks
        for the number of the one whose key you compared with 'fob sync
        status' on it (another answer is asked again; Enter or a third wrong
        answer accepts none: exit 1, nothing changed), or takes
        --accept-key FINGERPRINT; without a terminal or the option it stops
        with exit 36, and with a key no device has, with exit 1. The keys the
        accepted device's roster lists are the only ones taken for those
        devices. Then it merges the items of both. Each
        device has a name, shown beside its id: the host name, or --name NAME
        (1 to 64 bytes, no control characters); 'fob sync --name NAME' renames
        this device. 'fob sync' fetches, merges item by item, commits and
        pushes, and prints 'merged N, conflicts M'. When another device
        started a new sync key ('fob passwd --rotate-key', 'fob devices
        --revoke'), it asks that device's master password (or reads
        --tree-password-file) and keeps this vault's unsynced edits; without a
        terminal or the file it stops with exit 63. 'fob sync status' shows
        the remote, this device's name and id, the last sync, the pending
        local changes (items changed since the last sync), the revisions not
        yet sent (committed here by 'fob resolve' or a sync whose push failed:
        the next 'fob sync' sends them) and the devices. git runs as a
        program: its messages reach standard error. Exit 60 without git, 61
        when the remote cannot be reached, 62 when it refuses the push, 63
        when a new sync key needs a password no one can give, 93 when the tree
        went back or was tampered with, or this vault is a copy.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let positionals = invocation.arguments.positionals
        let verb = positionals.first
        switch (verb, positionals.count) {
        case (nil, _):
            let newName = try deviceName(invocation)
            let outcome = try invocation.withSyncItems { items in
                let engine = try invocation.syncEngine(items)
                return try invocation.syncing(locking: items) {
                    guard let newName else { return try engine.sync() }
                    try engine.rename(to: newName)
                    // The head carries the new name, also when nothing else changed.
                    return try engine.sync(forceHead: true)
                }
            }
            return finish(invocation, outcome)
        case ("init", 2), ("join", 2):
            return try setUp(invocation, join: verb == "join", remote: positionals[1])
        case ("status", 1):
            return try showStatus(invocation)
        default:
            throw UsageError(
                "'fob sync' takes nothing, 'init REMOTE', 'join REMOTE' or 'status', not '\(positionals.joined(separator: " "))'",
                command: name)
        }
    }

    /// `fob sync init REMOTE` (`join` false) or `fob sync join REMOTE`.
    static func setUp(_ invocation: Invocation, join: Bool, remote: String) throws -> Int32 {
        // A bad name is refused before any password is asked.
        let device = try deviceName(invocation) ?? DeviceName.hostName()
        var kdf = KDFParameters.default
        if let text = invocation.arguments.value("--kdf") {
            guard !join, let preset = KDFParameters.Preset(rawValue: text) else {
                throw UsageError(
                    join
                        ? "--kdf applies to 'fob sync init' only"
                        : "--kdf wants interactive, moderate or sensitive, not '\(text)'", command: name)
            }
            kdf = KDFParameters(preset)
        }
        // The vault is needed: say so before any password is asked.
        let vaultURL = invocation.globals.vaultURL
        guard Vault.exists(at: vaultURL) else { throw KeychainError.noSuchKeychain(vaultURL.path) }
        var fromVaultPasswordFile = false
        // The header is sealed under (or opened with) a master password:
        // this vault's for init; for join the one the tree was sealed with.
        let password: SecretBytes
        if join {
            fromVaultPasswordFile =
                invocation.arguments.value("--tree-password-file") == nil && invocation.globals.passwordFile != nil
            password = try invocation.treePassword(device: nil)
        } else if let file = invocation.arguments.value("--tree-password-file") {
            password = try PasswordFile.readFirstLine(path: file, maxBytes: Vault.maxPasswordBytes + 1)
        } else {
            password = try invocation.masterPassword(prompt: "Master password: ")
        }
        let items = invocation.items()
        defer { items.close() }
        // A join hands the vault key to the agent once it went through: a refused one leaves none unlocked.
        var unlockedHere: Vault?
        if join { items.onLocalUnlock = { unlockedHere = $0 } }
        let engine = try invocation.syncEngine(items)
        let outcome = try invocation.syncing(locking: items) {
            if !join {
                return try engine.initialize(remote: remote, password: password, kdf: kdf, name: device)
            }
            engine.chooseKey = { try invocation.chooseKey($0, count: $1, accepts: $2) }
            do {
                return try engine.join(
                    remote: remote, password: password, name: device,
                    acceptKey: invocation.arguments.value("--accept-key"))
            } catch SyncError.wrongPassword where fromVaultPasswordFile {
                // The vault's own password file was tried: say so, the tree may have another.
                // SyncError.wrongPassword's words, in lines under 80 columns after `fob: `.
                throw CLIFailure(
                    "the master password does not open the sync tree's header\n"
                        + "     (errSecAuthFailed); it was tried with this vault's password file\n"
                        + "     (FOB_PASSWORD_FILE or --password-file): give the password of a device\n"
                        + "     in the tree with --tree-password-file PATH",
                    status: SyncError.wrongPassword.exitStatus)
            }
        }
        if let unlockedHere { invocation.handToAgentIfAsked(unlockedHere) }
        return finish(invocation, outcome)
    }

    /// `fob sync status`: the remote, this device, the last sync, pending changes, the devices.
    static func showStatus(_ invocation: Invocation) throws -> Int32 {
        guard invocation.arguments.value("--name") == nil else {
            throw UsageError("--name applies to 'fob sync', 'init' and 'join', not 'status'", command: name)
        }
        let status = try invocation.withSyncItems { items in
            try invocation.syncing { try invocation.syncEngine(items).status() }
        }
        var text = "remote: \(status.remote)\ndevice: \(DeviceName.label(status.device, name: status.name))\n"
        if let key = status.signingKey { text += "signing key: \(key)\n" }
        if status.lastSync == 0 {
            text += "last sync: never\n"
        } else {
            let when = ItemJSON.date(Date(timeIntervalSince1970: Double(status.lastSync)))
            text += "last sync: \(when), merged \(status.lastMerged), conflicts \(status.lastConflicts)\n"
        }
        // Committed here by `fob resolve` or a sync whose push failed: the next sync sends them.
        text += "pending local changes: \(status.pending), "
        text += "not yet sent: \(status.unsent) revision\(status.unsent == 1 ? "" : "s")\n"
        for device in status.devices {
            text += "device \(device.label): counter \(device.counter)\(device.isThis ? " (this vault)" : "")"
            text += device.isRevoked ? ", revoked\n" : "\n"
        }
        return invocation.succeed(printing: text)
    }

    /// The `--name` given, or `nil`.
    /// - Throws: ``UsageError`` for a name ``DeviceName/isValid(_:)`` refuses.
    static func deviceName(_ invocation: Invocation) throws -> String? {
        guard let name = invocation.arguments.value("--name") else { return nil }
        guard DeviceName.isValid(name) else {
            throw UsageError(
                "--name wants 1 to \(DeviceName.maxBytes) bytes without control characters or a space at either end",
                command: self.name)
        }
        return name
    }

    static func finish(_ invocation: Invocation, _ outcome: SyncEngine.Outcome) -> Int32 {
        SyncPaths.writeSummary(
            outcome, vaultPath: invocation.globals.vaultURL.path, environment: invocation.context.environment)
        // What went out, on standard error beside git's messages (nothing
        // when nothing did): standard output stays the one line scripts read.
        if outcome.written > 0 {
            invocation.standardError.write(
                "fob: sent \(outcome.written) new revision\(outcome.written == 1 ? "" : "s")\n")
        }
        if outcome.conflicts > 0 {
            invocation.standardError.write(
                "fob: \(outcome.conflicts) item\(outcome.conflicts == 1 ? " has" : "s have") versions to settle: "
                    + "see `fob conflicts --show`,\n     then `fob resolve SERVICE ACCOUNT --keep local|remote`\n")
        }
        invocation.standardOutput.write("merged \(outcome.merged), conflicts \(outcome.conflicts)\n")
        return invocation.arguments.flag("--strict") && outcome.conflicts > 0 ? 1 : 0
    }
}

/// `fob devices`: the devices in the sync tree.
enum DevicesCommand: FobCommand {
    static let name = "devices"
    static let summary = "the devices syncing this vault, as of the last sync; --revoke shuts one out"
    static let options: [OptionSpec] = [
        .value(
            "--revoke", "DEVICE", help: "sync, then ignore DEVICE's later writes, everywhere (and sync); its id or name"
        )
    ]
    static let discussion = """
        One line per device: its name and id ('laptop (0123456789abcdef)'; the
        id alone for a device without a name), the highest counter it wrote,
        which one is this vault, which are revoked, and who added it to this
        vault's device roster: the device, its counter then and the time, in
        UTC ('added by desk (a01d77e2c94b3f10) at its counter 4,
        2026-12-02T09:14:03Z'; 'added by itself' for the device that started
        the tree or joined). Reads the local tree
        only. DEVICE is an id or the name of one device (a name several
        devices have is refused: give the id). --revoke DEVICE syncs first
        (what DEVICE pushed so far is kept), then writes a revocation into the
        tree and syncs: every device ignores DEVICE's later writes, and DEVICE
        can no longer sync. It also starts a new sync key, sealed under this
        vault's master password (asked, or --password-file), which DEVICE is
        never given: it keeps what it read before and cannot read what is
        written after. The other devices ask for that password at their next
        sync.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        if let device = invocation.arguments.value("--revoke") {
            return try revoke(invocation, device: device)
        }
        let status = try invocation.withSyncItems { items in
            try invocation.syncing { try invocation.syncEngine(items).status() }
        }
        var text = ""
        for device in status.devices {
            text += "\(device.label)  counter \(device.counter)\(device.isThis ? "  (this vault)" : "")"
            text += device.isRevoked ? "  revoked" : ""
            if let origin = device.origin, let adder = device.adder {
                text +=
                    "  added by \(origin.device == device.device ? "itself" : adder) at its counter \(origin.counter)"
                text += origin.time > 0 ? ", " + ItemJSON.date(Date(timeIntervalSince1970: Double(origin.time))) : ""
            }
            text += "\n"
        }
        return invocation.succeed(printing: text)
    }

    /// `fob devices --revoke DEVICE`.
    static func revoke(_ invocation: Invocation, device: String) throws -> Int32 {
        // The new key is sealed under this vault's master password: checked first.
        let password = try invocation.masterPassword(prompt: "Master password: ")
        let vault = try invocation.openVault()
        try vault.unlock(password: password)
        vault.lock()
        let (revoked, outcome) = try invocation.withSyncItems { items in
            let engine = try invocation.syncEngine(items)
            return try invocation.syncing(locking: items) {
                try engine.revoke(device: device, password: password)
            }
        }
        invocation.standardOutput.write("revoked \(revoked)\n")
        return SyncCommand.finish(invocation, outcome)
    }
}

/// `fob conflicts`: items with versions kept after a conflict.
enum ConflictsCommand: FobCommand {
    static let name = "conflicts"
    static let summary = "items whose versions conflicted in a sync, with the versions kept"
    static let options: [OptionSpec] = [
        .flag(
            "--show",
            help: "under each item, its versions: when and by which device each was written, which parts differ")
    ]
    static let discussion = """
        One line per item: service, account and the number of versions. The
        vault holds the version every device picked ('local' to 'fob
        resolve'); the other is 'remote'. --show adds a line per version with
        the time it was written, the device that wrote it ('by NAME (ID)') and
        the parts 'fob resolve --keep remote' would take from it: those it
        lost in the merge whose values differ from the vault's (secret, notes,
        url, label, ...), never their values. Never prints a secret.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let conflicts = try invocation.withSyncItems { items in
            try invocation.syncing { try invocation.syncEngine(items).conflicts() }
        }
        let show = invocation.arguments.flag("--show")
        var text = ""
        for conflict in conflicts {
            text += "\(conflict.current.service)\t\(conflict.current.account)\t\(conflict.others.count + 1) versions\n"
            guard show else { continue }
            // ` by NAME (ID)` for a version whose writer is known.
            func by(_ device: String?) -> String { conflict.label(device).map { " by " + $0 } ?? "" }
            text +=
                "  local   written \(ItemJSON.date(conflict.current.modified))\(by(conflict.device)), in the vault\n"
            for (index, other) in conflict.others.enumerated() {
                // `fob resolve --keep remote` keeps the last one.
                let name = index == conflict.others.count - 1 ? "remote " : "older  "
                let parts = conflict.differingParts(of: other).map(\.name)
                let differs = parts.isEmpty ? "same parts" : "differs in " + parts.joined(separator: ", ")
                text += "  \(name) written \(ItemJSON.date(other.item.modified))\(by(other.device)), \(differs)\n"
            }
        }
        return invocation.succeed(printing: text)
    }
}

/// `fob resolve SERVICE ACCOUNT --keep local|remote`.
enum ResolveCommand: FobCommand {
    static let name = "resolve"
    static let summary = "settle a sync conflict: keep this vault's version or the other one"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options: [OptionSpec] = [
        .required(
            "--keep", "local|remote", choices: ["local", "remote"],
            help: "local: the version in the vault now; remote: the other one's conflicting parts")
    ]
    static let discussion = """
        After a conflict every device holds the same version in its vault (the
        one the merge picked, whichever device wrote it): that is 'local'. The
        other version is 'remote': keeping it takes only the parts in which it
        conflicted (both devices changed them); the parts the merge took from
        other edits stay. 'fob conflicts --show' tells them apart (when each
        was written and which parts --keep remote would take). The resolution
        is committed to the local tree and travels with the next 'fob sync'
        (one line says what was kept; 'fob sync status' counts it as not yet
        sent); the other devices drop the versions too. Exit 44 when the item
        has no conflict.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let keep = invocation.arguments.value("--keep") ?? ""
        guard keep == "local" || keep == "remote" else {
            throw UsageError("--keep wants local or remote, not '\(keep)'", command: name)
        }
        let positionals = invocation.arguments.positionals
        try invocation.withSyncItems { items in
            let engine = try invocation.syncEngine(items)
            try invocation.syncing(locking: items) {
                try engine.resolve(service: positionals[0], account: positionals[1], keepRemote: keep == "remote")
            }
        }
        let kept = keep == "remote" ? "the other version's conflicting parts" : "this vault's version"
        invocation.standardOutput.write(
            "kept \(kept) of \(positionals[0]) \(positionals[1]); `fob sync` sends the resolution\n")
        return 0
    }
}
