import FobStore
import FoundationEssentials

/// The scratch files the benchmarks give the `fob` they run: private
/// directories (`XDG_RUNTIME_DIR`, a `GNUPGHOME`) and the master password in
/// a file for `--password-file`.
enum BenchFiles {
    /// The master password of every benchmark vault.
    static let passwordText = "benchmark master password"

    /// Creates `directory` and its parents, the last one private to the user
    /// (mode 0700), as a runtime or GnuPG directory must be.
    static func privateDirectory(_ directory: URL) throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Writes the master password and a newline to `directory/password`.
    /// - Returns: the password, and the file's path.
    static func password(in directory: URL) throws -> (secret: SecretBytes, file: String) {
        let file = directory.appendingPathComponent("password").path
        try Data((passwordText + "\n").utf8).write(to: URL(fileURLWithPath: file))
        return (SecretBytes(utf8: passwordText), file)
    }

    /// libsodium's lowest Argon2id costs (1 pass, 8 KiB): a benchmark
    /// vault's, so that its figures leave the key derivation out.
    static let quickKDF = KDFParameters(opslimit: 1, memlimit: 8192)

    /// A new vault, `directory/name` (the directory made when missing),
    /// with ``passwordText`` and ``quickKDF``, unlocked.
    /// - Returns: the vault and its master password.
    static func quickVault(_ name: String, in directory: URL) throws -> (vault: Vault, password: SecretBytes) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let password = SecretBytes(utf8: passwordText)
        let vault = try Vault.create(
            at: directory.appendingPathComponent(name), password: password, kdf: quickKDF, accessDefault: .any)
        return (vault, password)
    }
}
