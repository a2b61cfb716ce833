import FobStore

/// Why a `SecItem…` call failed: the status it returns and, for
/// diagnostics, a reason (never a secret).
struct SecItemFailure: Error, CustomStringConvertible {
    let status: OSStatus
    let reason: String

    init(_ status: OSStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    /// The one place where a store error becomes a status: the store's
    /// errors already carry the Keychain status they mirror
    /// (``FobStore/KeychainError/status``).
    init(_ error: KeychainError) {
        self.init(error.status, error.description)
    }

    var description: String { "\(reason) (\(status))" }
}
