import FobAccess
import FobStore
import FobSync
import FoundationEssentials

/// `fob passwd [--new-password-file PATH]`: changes the master password.
enum PasswdCommand: FobCommand {
    static let name = "passwd"
    static let summary = "change the master password; rotates the vault key and re-encrypts every item"
    static let options: [OptionSpec] = [
        .value(
            "--new-password-file", "PATH",
            help: "the new master password is the first line of PATH ('-' = standard input)"),
        .flag("--rotate-key", help: "also start a new sync key, which every other device takes at its next sync"),
    ]
    static let discussion = """
        The current password comes from --password-file, else the terminal. The new
        one comes from --new-password-file, else it is asked twice on the terminal.
        When both files are '-', the first line of standard input is the current
        password and the second line the new one. A new random vault key replaces
        the old one and every item is re-encrypted in one transaction, so a copy of
        the file taken before and the old password open nothing written after. The
        key derivation settings stay those the current password authenticated.

        A vault that syncs seals the sync key under the new password in its
        header of the sync tree. With --rotate-key a new random sync key starts
        a new key epoch: the next 'fob sync' writes every item again under it,
        and every other device asks for the new master password at its next
        sync, keeping its unsynced edits. A device that had only the old key
        (a lost one) cannot read what is written after.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        // The old password is about to go: the agent is locked, not unlocked, after.
        let vault = try invocation.unlockedVault(handingToAgent: false)
        let record = invocation.accessRecord()
        record.unlocked(vault)
        let rotate = invocation.arguments.flag("--rotate-key")
        if rotate,
            (try? vault.item(
                service: SyncState.key.service, account: SyncState.key.account, accessGroup: SyncState.key.accessGroup))
                == nil
        {
            throw UsageError("--rotate-key: sync is not set up for this vault; nothing was changed", command: name)
        }
        let newPassword = try invocation.newMasterPassword(
            file: invocation.arguments.value("--new-password-file"),
            prompt: "New master password: ")
        // Every record is decrypted and sealed again under the new vault key.
        let keys = ((try? vault.items(matching: ItemQuery(itemClass: nil))) ?? []).map(ItemKey.init)
        try vault.changePassword(to: newPassword)
        record.read(keys, "the master password: re-encrypted under a new vault key", vault)
        let epoch = try rewrapSyncHeader(invocation, vault: vault, password: newPassword, rotate: rotate)
        vault.lock()
        invocation.lockAgentIfRunning()
        invocation.standardOutput.write("Changed the master password of \(vault.url.path)\n")
        if rotate {
            guard let epoch else { return 1 }
            invocation.standardOutput.write(
                "Started sync key epoch \(epoch); the next 'fob sync' carries it, and the other devices ask for the new master password\n"
            )
        }
        return 0
    }

    /// A vault that syncs re-seals its header of the sync tree under the new
    /// password, or with `rotate` starts a new key epoch sealed under it
    /// (the next `fob sync` carries either).
    /// - Returns: the new epoch's number when one started.
    private static func rewrapSyncHeader(
        _ invocation: Invocation, vault: Vault, password: SecretBytes, rotate: Bool
    ) throws -> UInt64? {
        guard
            (try? vault.item(
                service: SyncState.key.service, account: SyncState.key.account, accessGroup: SyncState.key.accessGroup))
                != nil
        else { return nil }
        nonisolated(unsafe) let sink = invocation.standardError
        do {
            let engine = try SyncEngine(
                store: VaultStore(vault: vault),
                treeDirectory: SyncPaths.tree(
                    vaultPath: invocation.globals.vaultURL.path, environment: invocation.context.environment),
                environment: invocation.context.environment, messages: { sink.write($0) })
            let costs = try? vault.kdfParameters()
            if rotate { return try engine.rotateKey(password: password, vaultKDF: costs) }
            try engine.rewrap(password: password, vaultKDF: costs)
        } catch let error as SyncError {
            // The password is changed either way; the header follows at the next try.
            invocation.standardError.write(
                rotate
                    ? "fob: the master password changed, but no new sync key started: \(error); run 'fob passwd --rotate-key' again\n"
                    : "fob: the sync tree's header still has the old password: \(error)\n")
        }
        return nil
    }
}
