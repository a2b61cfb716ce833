import FobStore
import FoundationEssentials

/// `fob init [--kdf interactive|moderate|sensitive]`: creates a vault.
enum InitCommand: FobCommand {
    static let name = "init"
    static let summary = "create a vault (the master password from --password-file, else asked twice); never overwrites"
    static let options: [OptionSpec] = [
        .value(
            "--kdf", "interactive|moderate|sensitive", choices: KDFParameters.Preset.allCases.map(\.rawValue),
            help: "Argon2id cost: interactive (64 MiB), moderate (256 MiB, default) or sensitive (1 GiB)")
    ]
    static let discussion = """
        The vault is created at --vault (default ~/.local/share/fob/vault.db) with
        its directory 0700 and the file 0600. An existing file is never overwritten.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        var preset = KDFParameters.Preset.moderate
        if let text = invocation.arguments.value("--kdf") {
            guard let chosen = KDFParameters.Preset(rawValue: text) else {
                throw UsageError("--kdf wants interactive, moderate or sensitive, not '\(text)'", command: name)
            }
            preset = chosen
        }
        let url = invocation.globals.vaultURL
        guard !Vault.exists(at: url) else {
            throw CLIFailure(
                "a file already exists at \(url.path); fob init never overwrites it (choose another --vault)")
        }
        let password = try invocation.newMasterPassword(
            file: invocation.globals.passwordFile,
            prompt: "New master password: ")
        let vault = try Vault.create(at: url, password: password, kdf: invocation.context.kdfParameters(preset))
        vault.lock()
        return invocation.succeed(printing: "Created the vault \(url.path) (KDF \(preset.rawValue))\n")
    }
}
