import FobStore
import FoundationEssentials

/// The create-vault screen: `New master password` and `Confirm` (masked), a
/// KDF preset, and a message line.
public final class CreateVaultModel {
    /// Which field has focus on the create screen.
    public enum Field: Sendable, Equatable { case newPassword, confirm }

    /// The new master password.
    public let newPassword = TextFieldState(secure: true, maxBytes: Vault.maxPasswordBytes)
    /// The same password again.
    public let confirmation = TextFieldState(secure: true, maxBytes: Vault.maxPasswordBytes)
    /// The focused field.
    public internal(set) var focus: Field = .newPassword
    /// The Argon2id preset for the new vault (default `moderate`).
    public internal(set) var kdfPreset: KDFParameters.Preset = .moderate
    /// The message line: empty, or why creating failed.
    public internal(set) var message = StatusLine.empty

    /// "The password cannot be empty".
    public static let emptyMessage = "The password cannot be empty"
    /// "The passwords do not match".
    public static let mismatchMessage = "The passwords do not match"

    init() {}

    /// The focused field.
    public var focusedField: TextFieldState { focus == .newPassword ? newPassword : confirmation }

    /// Checks the fields; on success returns the password (fields wiped).
    func validate() -> SecretBytes? {
        if newPassword.isEmpty {
            message = .warning(CreateVaultModel.emptyMessage)
            focus = .newPassword
            return nil
        }
        let first = newPassword.secret()
        let second = confirmation.secret()
        guard first == second else {
            message = .warning(CreateVaultModel.mismatchMessage)
            confirmation.clear()
            focus = .confirm
            return nil
        }
        return first
    }

    /// Wipes both fields.
    func wipe() {
        newPassword.clear()
        confirmation.clear()
        focus = .newPassword
    }
}

/// The unlock screen: `Master password` (masked), a message, and how many
/// wrong attempts were made. Shows nothing of the vault's contents.
public final class UnlockModel {
    /// The master password field.
    public let password = TextFieldState(secure: true, maxBytes: Vault.maxPasswordBytes)
    /// Wrong passwords entered since this screen appeared.
    public internal(set) var failedAttempts = 0
    /// The message line: why the vault is locked, or why unlocking failed.
    public internal(set) var message: StatusLine
    /// The agent's requests waiting for this unlock (an SSH signature).
    public internal(set) var requests = UnlockRequestsModel()

    /// "Wrong master password".
    public static let wrongPasswordMessage = "Wrong master password"

    init(message: StatusLine = .empty) { self.message = message }

    /// Wipes the field.
    func wipe() { password.clear() }
}
