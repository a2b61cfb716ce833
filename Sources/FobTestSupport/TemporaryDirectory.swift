import FobStore
import Foundation

/// A fresh directory under the system temporary directory, removed with
/// everything in it when the instance goes away.
public final class TemporaryDirectory: @unchecked Sendable {
    /// The directory.
    public let url: URL

    /// Creates `…/fob-test-XXXXXX`.
    public init(prefix: String = "fob-test") {
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// `url/name`.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

extension KDFParameters {
    /// libsodium's minimum Argon2id costs (1 pass, 8 KiB): for tests only,
    /// where the KDF is not under test.
    public static let testing = KDFParameters(opslimit: 1, memlimit: 8192)
}

extension SecretBytes {
    /// Shorthand for tests: the UTF-8 bytes of `text`.
    public static func text(_ text: String) -> SecretBytes { SecretBytes(utf8: text) }
}

/// A vault in a temporary directory, created unlocked with the testing KDF.
public struct TestVault {
    /// Keeps the directory alive as long as the vault value.
    public let directory: TemporaryDirectory
    /// The vault, unlocked.
    public let vault: Vault
    /// Its master password.
    public let password: SecretBytes

    /// Creates `vault.db` in a new temporary directory.
    public init(password: String = "correct horse") throws {
        directory = TemporaryDirectory()
        self.password = .text(password)
        vault = try Vault.create(
            at: directory.file("vault.db"), password: self.password, kdf: .testing, accessDefault: .any)
    }
}
