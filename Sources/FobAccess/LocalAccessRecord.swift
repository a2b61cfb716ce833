import FobAgent
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The access log's record of a command that opened the vault itself with
/// the master password (`--password-file`, a password typed at the prompt,
/// `--no-agent`): the master password is its own proof, so it is recorded,
/// not asked. One entry for the unlock, one per item whose secret (or
/// one-time seed and field values) a request read, with decision
/// ``AccessDecision/allowedPassword``; the requester is the program that ran
/// the command (its parent), as the agent names a requester behind Fob's
/// own command line.
///
/// Entries are written at once, each request's in one write (a command
/// reads a few items, then ends). A log that cannot be written is told to
/// ``onFailure`` (the command line names it on standard error) and does not
/// stop the command.
public final class LocalAccessRecord {
    /// The channel entries carry (`fob get`, `fob run`, …).
    public let channel: AccessChannel
    private let watermarks: VaultWatermarks
    private var writer: AccessLogWriter?
    private lazy var requester = AccessLogRequester.peer(pid: getppid(), uid: getuid())
    /// Why a write failed, or `nil` when none did.
    public private(set) var failure: String?
    /// Told why a write failed, once per command.
    public var onFailure: ((String) -> Void)?

    /// - Parameters:
    ///   - channel: the command's channel.
    ///   - watermarks: where the log's head state is kept.
    public init(channel: AccessChannel, watermarks: VaultWatermarks) {
        self.channel = channel
        self.watermarks = watermarks
    }

    /// Records that `vault` (fully unlocked) was opened with the master password.
    public func unlocked(_ vault: Vault) {
        write(
            [
                AccessLogEntry(
                    time: Date(), event: .unlockWithPassword, requester: requester, channel: channel,
                    decision: .allowedPassword, detail: "opened with the master password by fob \(channel.name)")
            ], vault)
    }

    /// Records each item whose secret `answer` to `request` carries.
    public func answered(_ request: AgentRequest, with answer: AgentResponse, _ vault: Vault) {
        let detail: ItemDetail
        switch request {
        case .get(_, _, let asked), .getItems(_, let asked): detail = asked
        default: return
        }
        guard detail.needsConsent, case .items(let items) = answer, !items.isEmpty else { return }
        let now = Date()
        let what = detail == .attributes ? "attributes (one-time seed, field values)" : "secret"
        write(
            items.map {
                AccessLogEntry(
                    time: now, event: .read, requester: requester, item: ItemKey($0), channel: channel,
                    decision: .allowedPassword, detail: "the master password: \(what)")
            }, vault)
    }

    private func write(_ entries: [AccessLogEntry], _ vault: Vault) {
        do {
            if writer == nil {
                guard let key = try vault.accessLogKey(create: true) else {
                    throw KeychainError.io("no access log key")
                }
                writer = AccessLogWriter(
                    location: AccessLogLocation(vaultURL: vault.url), keys: AccessLogKeys(logKey: key),
                    headDirectory: watermarks.directory)
            }
            try writer?.append(entries)
        } catch {
            if failure == nil { onFailure?("the access log was not written: \(error)") }
            failure = "\(error)"
        }
    }
}
