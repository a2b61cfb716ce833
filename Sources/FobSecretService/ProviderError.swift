import FobAgent
import FobStore

/// A D-Bus error answer: its name and a message (never a secret).
public struct ProviderError: Error, Equatable, Sendable {
    /// The D-Bus error name.
    public let name: String
    /// What went wrong, for people.
    public let message: String

    /// `org.freedesktop.DBus.Error.NotSupported`.
    static func notSupported(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }
    /// `org.freedesktop.Secret.Error.IsLocked`.
    static let isLocked = ProviderError(
        name: "org.freedesktop.Secret.Error.IsLocked", message: "the vault is locked; run `fob unlock`")
    /// `org.freedesktop.Secret.Error.NoSession`.
    static let noSession = ProviderError(
        name: "org.freedesktop.Secret.Error.NoSession", message: "no such session of this connection")
    /// `org.freedesktop.Secret.Error.NoSuchObject`.
    static func noSuchObject(_ path: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: "no such object: \(path)")
    }
    /// `org.freedesktop.DBus.Error.UnknownObject`.
    static func unknownObject(_ path: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "unknown object: \(path)")
    }
    /// `org.freedesktop.DBus.Error.InvalidArgs`.
    static func invalidArgs(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    /// `org.freedesktop.DBus.Error.LimitsExceeded`: a connection asked for more than it may hold.
    static func limitsExceeded(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: message)
    }
    /// `org.freedesktop.DBus.Error.NoMemory`.
    static func noMemory(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.NoMemory", message: message)
    }
    /// `org.freedesktop.DBus.Error.AccessDenied`.
    static func accessDenied(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
    }
    /// `org.freedesktop.DBus.Error.Failed`.
    static func failed(_ message: String) -> ProviderError {
        ProviderError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }

    /// The answer for a store error: a read the access rules refused (a
    /// rule, a person's denial, or no one to ask) is `AccessDenied` naming
    /// why; a locked vault is `IsLocked`; a missing item `NoSuchObject`;
    /// anything else `Failed` with its reason.
    static func from(_ error: KeychainError, path: String = "") -> ProviderError {
        switch error {
        case .accessDenied(let why): return .accessDenied("access denied: \(why)")
        case .consentMissing(let why, _): return .accessDenied(why)
        case .interactionNotAllowed, .authFailed: return .isLocked
        case .itemNotFound: return .noSuchObject(path)
        default: return .failed("\(error)")
        }
    }
}
