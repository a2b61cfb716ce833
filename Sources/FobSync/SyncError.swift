import FobStore
import FoundationEssentials

/// Why a sync stopped. The vault is unchanged by a failed sync except for
/// what an earlier, completed step wrote; local work goes on either way.
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No `git` on `PATH`: exit 60.
    case gitMissing
    /// The remote cannot be reached (git's message follows): exit 61.
    case remoteUnreachable(String)
    /// The remote refused the push, also after fetching again: exit 62.
    case pushRejected(String)
    /// Another git failure (its message follows): exit 1.
    case git(String)
    /// The tree was tampered with or went back (a force-push of older
    /// commits, a file moved or changed): exit 93, naming what.
    case tampered(String)
    /// This vault is a copy: the tree holds writes under this device's id
    /// that this vault never made: exit 93.
    case copied(String)
    /// Sync is not set up for this vault, or set up already: exit 2.
    case usage(String)
    /// The master password does not open the tree's header: exit 51.
    case wrongPassword
    /// This device was revoked by another: exit 1.
    case revoked(String)
    /// The tree moved to a key epoch this device does not know (another
    /// device ran `fob passwd --rotate-key` or revoked one), and no password
    /// to open it could be asked (no terminal, no `--tree-password-file`):
    /// exit 63. Nothing changed but what earlier steps committed locally.
    case newKey(String)
    /// `join`: the devices' signing keys could not be accepted, no
    /// terminal to ask and no `--accept-key` (the keys are shown): exit 36.
    case keysNotAsked(String)
    /// `join`: the key given with `--accept-key` is no device's of the
    /// tree, or the keys shown were not accepted: exit 1.
    case keysRefused(String)

    /// Sync was never set up for this vault (found in the vault's own
    /// items: only a vault unlocked can tell): exit 2.
    /// Two lines under 80 columns after `fob: `, the second indented to the first's text.
    public static let notSetUp = SyncError.usage(
        "sync is not set up for this vault;\n     run `fob sync init REMOTE` or `fob sync join REMOTE`")

    /// The process exit status.
    public var exitStatus: Int32 {
        switch self {
        case .gitMissing: 60
        case .remoteUnreachable: 61
        case .pushRejected: 62
        case .git, .revoked, .keysRefused: 1
        case .keysNotAsked: 36
        case .tampered, .copied: 93
        case .usage: 2
        case .wrongPassword: 51
        case .newKey: 63
        }
    }

    /// One line, or lines under 80 columns after `fob: ` with the others
    /// indented to the first's text (git's own message may follow on the
    /// lines before it).
    public var description: String {
        switch self {
        case .gitMissing: "sync needs git, and none is on PATH; install git (apt install git)"
        case .remoteUnreachable(let why): "cannot reach the sync remote: \(why)"
        case .pushRejected(let why): "the sync remote refused the push: \(why)"
        case .git(let why): "git failed: \(why)"
        case .tampered(let why): "the sync tree was tampered with or went back: \(why) (errSecDecode)"
        case .copied(let why):
            "this vault is a copy of another device's:\n     \(why);\n"
                + "     run `fob sync join REMOTE` here to take a new device id (errSecDecode)"
        case .usage(let why): why
        case .wrongPassword: "the master password does not open the sync tree's header (errSecAuthFailed)"
        case .revoked(let why): why
        case .keysNotAsked(let why), .keysRefused(let why): why
        case .newKey(let why):
            "the sync tree has a new key \(why);\n     its master password is needed: run `fob sync` on a terminal,\n"
                + "     or give --tree-password-file PATH"
        }
    }
}
