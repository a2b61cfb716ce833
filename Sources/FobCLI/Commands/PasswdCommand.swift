import FobStore
import FobSync

/// `fob passwd [--new-password-file PATH]`: changes the master password.
enum PasswdCommand: FobCommand {
    static let name = "passwd"
    static let summary = "change the master password; rotates the vault key and re-encrypts every item"
    static let options: [OptionSpec] = [
        .value(
            "--new-password-file", "PATH",
            help: "the new master password is the first line of PATH ('-' = standard input)")
    ]
    static let discussion = """
        The current password comes from --password-file, else the terminal. The new
        one comes from --new-password-file, else it is asked twice on the terminal.
        When both files are '-', the first line of standard input is the current
        password and the second line the new one. A new random vault key replaces
        the old one and every item is re-encrypted in one transaction, so a copy of
        the file taken before and the old password open nothing written after. The
        key derivation settings stay those the current password authenticated.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        // The old password is about to go: the agent is locked, not unlocked, after.
        let vault = try invocation.unlockedVault(handingToAgent: false)
        let newPassword = try invocation.newMasterPassword(
            file: invocation.arguments.value("--new-password-file"),
            prompt: "New master password: ")
        try vault.changePassword(to: newPassword)
        try rewrapSyncHeader(invocation, vault: vault, password: newPassword)
        vault.lock()
        invocation.lockAgentIfRunning()
        invocation.standardOutput.write("Changed the master password of \(vault.url.path)\n")
        return 0
    }

    /// A vault that syncs re-seals its header of the sync tree under the new
    /// password (the next `fob sync` carries it).
    private static func rewrapSyncHeader(_ invocation: Invocation, vault: Vault, password: SecretBytes) throws {
        guard
            (try? vault.item(
                service: SyncState.key.service, account: SyncState.key.account, accessGroup: SyncState.key.accessGroup))
                != nil
        else { return }
        nonisolated(unsafe) let sink = invocation.standardError
        do {
            let engine = try SyncEngine(
                store: vault,
                treeDirectory: SyncPaths.tree(
                    vaultPath: invocation.globals.vaultURL.path, environment: invocation.context.environment),
                environment: invocation.context.environment, messages: { sink.write($0) })
            try engine.rewrap(password: password)
        } catch let error as SyncError {
            // The password is changed either way; the header follows at the next try.
            invocation.standardError.write("fob: the sync tree's header still has the old password: \(error)\n")
        }
    }
}
