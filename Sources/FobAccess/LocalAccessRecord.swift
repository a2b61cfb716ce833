import FobAgent
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The access log's record of a command that opened the vault itself with
/// the master password (`--password-file`, a password typed at the prompt,
/// `--no-agent`): the master password is its own proof, so it is recorded,
/// not asked. One entry for the unlock, one per item whose secret (or
/// one-time seed and field values) a request read, or that `fob export`
/// wrote out, `fob verify` decrypted or `fob passwd` re-encrypted, and one
/// per access rule (or the vault's default) changed, each with decision
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
        let what = detail == .attributes ? "attributes (one-time seed, field values)" : "secret"
        read(items.map(ItemKey.init), "the master password: \(what)", vault)
    }

    /// Records a read of every item of `keys` that a command made on the
    /// vault itself (`fob export`, `fob passwd`): one entry per item, in one write.
    /// - Parameters:
    ///   - keys: the items whose secrets were read.
    ///   - detail: what was done with them ("the master password: exported").
    ///   - vault: the vault, fully unlocked.
    public func read(_ keys: [ItemKey], _ detail: String, _ vault: Vault) {
        guard !keys.isEmpty else { return }
        write(readEntries(keys, detail), vault)
    }

    /// Records the access rule that `request` (an update carrying one) set
    /// on each item of `keys`: one ``AccessEvent/ruleChange`` entry per item.
    /// - Parameters:
    ///   - keys: the items the update matched.
    ///   - request: the update; any other request records nothing.
    ///   - vault: the vault, fully unlocked.
    public func rulesChanged(_ keys: [ItemKey], _ request: AgentRequest, _ vault: Vault) {
        guard case .update(_, let changes) = request, let rule = changes.accessRule, !keys.isEmpty else { return }
        let now = Date()
        let detail =
            "the master password: rule now '\(rule.mode?.name ?? "default")', "
            + "\(rule.trusted.count) trusted and \(rule.denied.count) denied programs"
        write(
            keys.map {
                AccessLogEntry(
                    time: now, event: .ruleChange, requester: requester, item: $0, channel: channel,
                    decision: .allowedPassword, detail: detail)
            }, vault)
    }

    /// Records a change of the vault's own settings (its default access
    /// rule) made with the master password: one ``AccessEvent/ruleChange`` entry.
    /// - Parameters:
    ///   - detail: what changed ("the vault's default rule is now 'ask'").
    ///   - vault: the vault, fully unlocked.
    public func vaultChanged(_ detail: String, _ vault: Vault) {
        write(
            [
                AccessLogEntry(
                    time: Date(), event: .ruleChange, requester: requester, channel: channel,
                    decision: .allowedPassword, detail: detail)
            ], vault)
    }

    /// Records what `fob verify` decrypted: the unlock with the master
    /// password, then one read per item whose record it authenticated.
    /// `fob verify` opens no ``Vault`` of its own to unlock, so the log's
    /// key comes from the check itself (``Vault/verify(at:password:accessLogHeadDirectory:recording:)``).
    /// - Parameters:
    ///   - keys: the items decrypted.
    ///   - logKey: the access log's key.
    ///   - vaultURL: the vault's file.
    public func verified(_ keys: [ItemKey], logKey: SecretBytes, vaultURL: URL) {
        let unlock = AccessLogEntry(
            time: Date(), event: .unlockWithPassword, requester: requester, channel: channel,
            decision: .allowedPassword, detail: "opened with the master password by fob \(channel.name)")
        let entries = [unlock] + readEntries(keys, "the master password: decrypted to authenticate, not shown")
        do {
            try AccessLogWriter(
                location: AccessLogLocation(vaultURL: vaultURL), keys: AccessLogKeys(logKey: logKey),
                headDirectory: watermarks.directory
            ).append(entries)
        } catch {
            failed(error)
        }
    }

    private func readEntries(_ keys: [ItemKey], _ detail: String) -> [AccessLogEntry] {
        let now = Date()
        return keys.map {
            AccessLogEntry(
                time: now, event: .read, requester: requester, item: $0, channel: channel,
                decision: .allowedPassword, detail: detail)
        }
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
            failed(error)
        }
    }

    private func failed(_ error: any Error) {
        if failure == nil { onFailure?("the access log was not written: \(error)") }
        failure = "\(error)"
    }
}
