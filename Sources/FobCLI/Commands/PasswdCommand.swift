import FobStore

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
        vault.lock()
        invocation.lockAgentIfRunning()
        invocation.standardOutput.write("Changed the master password of \(vault.url.path)\n")
        return 0
    }
}
