/// The errors of the item store, mirroring the Keychain's `errSec…` statuses.
///
/// Descriptions name the cause and the Keychain status; they never contain a
/// secret. The associated strings carry context such as a service name or a
/// SQLite message, never secret bytes.
public enum KeychainError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An item with the same class, access group, service and account exists
    /// (`errSecDuplicateItem`, -25299).
    case duplicateItem(String)
    /// No item matched the query (`errSecItemNotFound`, -25300).
    case itemNotFound(String)
    /// The master password is wrong (`errSecAuthFailed`, -25293).
    case authFailed
    /// The vault is locked, or no master password can be asked for
    /// (`errSecInteractionNotAllowed`, -25308).
    case interactionNotAllowed(String)
    /// The file is damaged, tampered with, or not a Fob vault (`errSecDecode`, -26275).
    case decode(String)
    /// A parameter is invalid (`errSecParam`, -50).
    case param(String)
    /// There is no vault at the path (`errSecNoSuchKeychain`, -25294).
    case noSuchKeychain(String)
    /// An I/O failure such as a full disk or a missing file (`errSecIO`, -36).
    case io(String)
    /// A conditional write found the item at another revision than the one
    /// the writer read (``ItemChanges/expectedRevision``,
    /// ``ItemQuery/expectedRevision``): nothing was changed. Mirrors
    /// `errSecInvalidItemRef` (-25304, "the specified item is no longer
    /// valid"); exit status 40.
    /// - Parameters:
    ///   - name: the item, as ``Item/displayName``.
    ///   - expected: the revision the writer read.
    ///   - current: the revision stored now.
    case revisionMismatch(String, expected: UInt64, current: UInt64)
    /// `errSecAuthFailed` for a reader the item's access rule refuses, or
    /// that the person asked refused: why, naming the rule (not the wrong
    /// master password of ``authFailed``, though the status is the same).
    case accessDenied(String)
    /// `errSecInteractionNotAllowed` for a read that needed a person's
    /// consent and got none: why, naming the item and its rule, and how the
    /// question ended (``ConsentMiss``), carried from where it ended, so a
    /// client can tell "no one answered" from "no one could be asked"
    /// without reading the text (which holds the item's name).
    case consentMissing(String, ConsentMiss)

    /// The Keychain status this error mirrors (`OSStatus` value).
    public var status: Int32 {
        switch self {
        case .duplicateItem: return -25299
        case .itemNotFound: return -25300
        case .authFailed, .accessDenied: return -25293
        case .interactionNotAllowed, .consentMissing: return -25308
        case .decode: return -26275
        case .param: return -50
        case .noSuchKeychain: return -25294
        case .io: return -36
        case .revisionMismatch: return -25304
        }
    }

    /// The `errSec…` name of ``status``.
    public var statusName: String {
        switch self {
        case .duplicateItem: return "errSecDuplicateItem"
        case .itemNotFound: return "errSecItemNotFound"
        case .authFailed, .accessDenied: return "errSecAuthFailed"
        case .interactionNotAllowed, .consentMissing: return "errSecInteractionNotAllowed"
        case .decode: return "errSecDecode"
        case .param: return "errSecParam"
        case .noSuchKeychain: return "errSecNoSuchKeychain"
        case .io: return "errSecIO"
        case .revisionMismatch: return "errSecInvalidItemRef"
        }
    }

    /// The process exit status for this error: the low byte of ``status``, as
    /// Apple's `security` tool does (44 not found, 45 duplicate, 51 wrong
    /// password, 36 locked, 93 damaged vault, 50 no vault, 40 an item changed
    /// since the revision a conditional write read); `.param` maps to 2
    /// (usage) and `.io` to 1.
    public var exitStatus: Int32 {
        switch self {
        case .param: return 2
        case .io: return 1
        default: return status & 0xff
        }
    }

    /// One line naming the cause and the Keychain status, without secrets.
    public var description: String {
        switch self {
        case .duplicateItem(let what): return "duplicate item: \(what) (\(statusName))"
        case .itemNotFound(let what): return "item not found: \(what) (\(statusName))"
        case .authFailed: return "wrong master password (\(statusName))"
        case .accessDenied(let why): return "access denied: \(why) (\(statusName))"
        case .interactionNotAllowed(let why), .consentMissing(let why, _):
            return "interaction not allowed: \(why) (\(statusName))"
        case .decode(let why): return "vault damaged, tampered with, or not a Fob vault: \(why) (\(statusName))"
        case .param(let why): return "invalid parameter: \(why) (\(statusName))"
        case .noSuchKeychain(let path):
            return
                "no vault at \(path); create one with `fob init`, or name yours with --vault or FOB_VAULT (\(statusName))"
        case .io(let why): return "I/O error: \(why) (\(statusName))"
        case .revisionMismatch(let what, 0, let current):
            return "item exists (a write for a new item only found revision \(current)): \(what) (\(statusName))"
        case .revisionMismatch(let what, let expected, let current):
            return "item changed since revision \(expected) was read: \(what), now revision \(current) (\(statusName))"
        }
    }
}

/// How a consent question that settled nothing ended
/// (``KeychainError/consentMissing(_:_:)``).
public enum ConsentMiss: UInt8, Sendable, Equatable {
    /// No channel could put the question (no terminal, no pinentry, the
    /// rate limit): a client may still open the vault itself with the master password.
    case noChannel = 0
    /// The question was put and no one answered before its timeout: no one
    /// is there to type the master password either.
    case unanswered = 1
}
