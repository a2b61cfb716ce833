import FobAccess
import FobSessions
import FobStore

/// The create-vault screen's intents: editing, focus, the KDF preset, and
/// creating the vault.
extension CreateVaultModel {
    /// Performs `action` on this screen.
    /// - Parameters:
    ///   - store: the store to create the vault in.
    ///   - kdfOverride: KDF costs to use instead of the chosen preset (tests).
    func handle(_ action: Action, store: any KeychainStore, kdfOverride: KDFParameters?) -> Transition {
        if focusedField.apply(action) {
            if let note = TextFieldState.droppedNote(focusedField.takeDroppedLineBreaks()) { message = note }
            return .stay
        }
        switch action {
        case .focusNext, .focusPrevious:
            focus = focus == .newPassword ? .confirm : .newPassword
        case .setKDFPreset(let preset):
            kdfPreset = preset
        case .submit:
            if focus == .newPassword {
                if newPassword.isEmpty {
                    message = .warning(CreateVaultModel.emptyMessage)
                } else {
                    focus = .confirm
                }
                return .stay
            }
            guard let password = validate() else { return .stay }
            do {
                try store.create(password: password, kdf: kdfOverride ?? KDFParameters(kdfPreset))
            } catch {
                message = .error(error.description)
                return .stay
            }
            wipe()
            return .openVault
        case .quit:
            return .quit
        default:
            break
        }
        return .stay
    }
}

/// The unlock screen's intents: editing the password and unlocking.
extension UnlockModel {
    /// Performs `action` on this screen, unlocking `store` on Enter.
    func handle(_ action: Action, store: any KeychainStore) -> Transition {
        if password.apply(action) {
            if let note = TextFieldState.droppedNote(password.takeDroppedLineBreaks()) { message = note }
            return .stay
        }
        switch action {
        case .submit:
            guard !password.isEmpty else {
                message = .warning("Enter the master password")
                return .stay
            }
            let secret = password.secret()
            wipe()
            do {
                try store.unlock(password: secret)
            } catch .authFailed {
                failedAttempts += 1
                let attempts = "\(failedAttempts) failed attempt\(failedAttempts == 1 ? "" : "s")"
                message = .error("\(UnlockModel.wrongPasswordMessage) (\(attempts))")
                return .stay
            } catch {
                message = .error(error.description)
                return .stay
            }
            return .openVault
        case .quit:
            return .quit
        default:
            return .stay
        }
    }
}
