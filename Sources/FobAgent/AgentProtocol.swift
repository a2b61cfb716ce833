import FobStore
import FoundationEssentials

/// The agent's wire format. A connection starts with one hello
/// (``AgentHello``) and then carries any number of exchanges, one at a time:
/// a request, then its response. ``AgentRequest/subscribe`` ends that: the
/// agent answers `.ok` and then sends one `.event` per change until the
/// connection closes. Every message is a frame of a 4-byte big-endian length
/// and that many bytes.
///
/// A message starts with the magic `FOBA`, the protocol version (one byte)
/// and a code (one byte: the operation of a request, the outcome of a
/// response), then fields, each a 4-byte big-endian length and its bytes.
/// The version is checked in the hello and in every message: an agent of
/// another version answers with its own version and code ``AgentProtocol/versionMismatchCode``.
/// Version 3 has one verb per operation (get, list, add, save, update,
/// delete), an ``ItemDetail`` on `get`, and ``AgentRequest/subscribe``;
/// version 4 adds ``ItemDetail/secretOnly``; version 5 keeps a connection
/// open for many requests and adds ``AgentRequest/getItems(ids:detail:)``,
/// ``AgentResponse/written(count:changes:)`` and events that carry the
/// item's persistent ID and summary; version 6 adds the access log
/// (``AgentRequest/accessLog(_:)``, code 15, answered by
/// ``AgentResponse/accessLog(records:problems:)``), consent questions put
/// to the terminal UI (``AgentEvent/Kind/question`` and
/// ``AgentEvent/Kind/settled`` events carrying an ``AccessPrompt``) and
/// their answers (``AgentRequest/answer(question:_:)``, code 16), and
/// a read refused for want of consent (``KeychainError/consentMissing(_:_:)``,
/// failure code 0x1A: its text, then one byte, ``ConsentMiss``).
public enum AgentProtocol {
    /// The version this build speaks. Version 3 names the vault in the
    /// hello and carries item revisions (record tag 29 in items), expected
    /// revisions (query attribute 17, change attribute 25) and the
    /// `.revisionMismatch` failure (code 0x18): an agent of version 2 would
    /// ignore an expected revision and write. Version 4 adds the detail
    /// ``ItemDetail/secretOnly`` (3), which an agent of version 3 would refuse
    /// as a malformed request rather than as another version. Version 5
    /// answers every write with ``AgentResponse/written(count:changes:)``
    /// where version 4 answered `.ok` or `.count`, and its events have
    /// another layout: a client of version 4 would misread both. Version 6
    /// adds requests 15 (the access log) and 16 (an answer to a consent
    /// question), the access log's answer (response code 7) and the
    /// question and settled events (kinds 7 and 8, with the prompt as their
    /// seventh field): an agent of version 5 would refuse the requests as
    /// unknown codes, and a terminal UI of version 5 would drop the
    /// questions it was meant to show, so the consent would wait out its
    /// timeout unseen.
    public static let version: UInt8 = 6
    /// The first four bytes of every message.
    public static let magic: [UInt8] = Array("FOBA".utf8)
    /// The largest message accepted, in bytes: a whole record (secret,
    /// attributes) with room for framing. A longer length prefix is refused
    /// before anything is read.
    public static let maxMessageBytes = Vault.maxRecordBytes + (64 << 10)
    /// The largest import request accepted, in bytes (512 MiB, as the
    /// largest export file `fob import` reads): only a frame whose header
    /// names ``AgentRequest/applyImport(_:)`` may exceed ``maxMessageBytes``,
    /// and only from a peer of the agent's own uid.
    public static let maxImportMessageBytes = 512 << 20
    /// The largest answer a client accepts, in bytes: a listing of every
    /// item (the agent is checked to be the user's own before anything is read).
    public static let maxResponseBytes = 1 << 30
    /// The most persistent IDs one ``AgentRequest/getItems(ids:detail:)`` may name (65,536).
    public static let maxIDsPerRequest = 65_536
    /// The response code of a version mismatch (the header carries the agent's version).
    public static let versionMismatchCode: UInt8 = 0xFF
}

/// Why a message could not be decoded.
public enum AgentProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer bytes than the layout needs.
    case truncated
    /// A length over ``AgentProtocol/maxMessageBytes``.
    case tooLarge(Int)
    /// Not starting with `FOBA`.
    case badMagic
    /// Another protocol version: the peer's.
    case versionMismatch(UInt8)
    /// An operation or outcome code this version does not know.
    case unknownCode(UInt8)
    /// A field with the wrong count, length or content.
    case badField(String)

    public var description: String {
        switch self {
        case .truncated: return "truncated message"
        case .tooLarge(let n): return "message of \(n) bytes is over the limit of \(AgentProtocol.maxMessageBytes)"
        case .badMagic: return "not a fob agent message"
        case .versionMismatch(let v):
            return
                "the agent speaks protocol version \(v), this fob speaks \(AgentProtocol.version); "
                + (v < AgentProtocol.version
                    ? "'fob unlock' replaces it with an agent of this version"
                    : "use the fob that started it, or stop that agent")
        case .unknownCode(let c): return "unknown message code \(c)"
        case .badField(let why): return "bad field: \(why)"
        }
    }
}

/// How much of each item an answer carries.
///
/// A listing never carries one-time seeds or custom field values unless the
/// caller asks for them with ``attributes`` or ``secret``: an item listed
/// keeps an empty seed (so that it says it has one) and its custom fields'
/// names and hidden flags, with empty values. ``secretOnly`` carries the
/// secret and what names the item, nothing else. Ordered by raw value
/// (``secretOnly`` carries less than ``secret``, but is the newest).
public enum ItemDetail: UInt8, Sendable, Comparable {
    /// No secret, no one-time seed, no custom field value.
    case listing = 0
    /// Every attribute (seed and custom field values too), but not the secret.
    case attributes = 1
    /// Everything, the secret too.
    case secret = 2
    /// The secret and what names the item — its class, primary key,
    /// persistent ID and revision — with no label, comment, URL, generic
    /// bytes, one-time seed or custom field (``ItemOperations/secretOnly(_:)``):
    /// for a client that holds the rest already, such as the Secret
    /// Service provider answering `GetSecrets` of thousands of items.
    case secretOnly = 3
    /// A listing with the values of the fields a Secret Service client
    /// searches on (``ItemOperations/searchAttributes(_:)``: the custom
    /// fields `attr:NAME` and `content-type`), and no secret, one-time seed
    /// or other field value. As the Secret Service specification says of
    /// attributes, these are not secret: a read of them needs no consent,
    /// so `SearchItems` then `GetSecrets` is one question, not two.
    case searchAttributes = 4

    public static func < (a: ItemDetail, b: ItemDetail) -> Bool { a.rawValue < b.rawValue }

    /// Whether an answer at this detail carries anything the access rules
    /// guard (a secret, a one-time seed, a custom field value other than
    /// the searchable ones): ``attributes``, ``secret``, ``secretOnly``.
    public var needsConsent: Bool {
        switch self {
        case .listing, .searchAttributes: return false
        case .attributes, .secret, .secretOnly: return true
        }
    }
}

/// What a client asks the agent: one verb per operation.
public enum AgentRequest: Sendable {
    /// State, vault, socket, pid and time left; never restarts the idle timer.
    case status
    /// Unlock with the master password; the two timeouts in seconds (0 = never).
    case unlock(password: SecretBytes, idleSeconds: UInt32, maxSeconds: UInt32)
    /// Unlock with the 32-byte vault key of a client that has just unlocked
    /// the vault with the master password, so that the key derivation runs
    /// once (``Vault/unlock(vaultKey:)``); idle and maximum seconds as `.unlock`.
    case unlockWithKey(vaultKey: SecretBytes, idleSeconds: UInt32, maxSeconds: UInt32)
    /// Lock fully (every key, every class).
    case lock
    /// The items matching a query (`SecItemCopyMatching`, `fob get`), at
    /// most one when `limitOne`, with as much of each as `detail` says;
    /// answers `.items`, `.itemNotFound` when none.
    case get(ItemQuery, limitOne: Bool, detail: ItemDetail)
    /// The items with these persistent IDs (``Item/persistentID``), in the
    /// order asked, with as much of each as `detail` says; an ID no item
    /// has is left out of the answer (not an error). The agent decrypts the
    /// records of the items asked only (none at ``ItemDetail/listing``).
    /// Answers `.items`; `.interactionNotAllowed` while locked or after a
    /// timeout left only `afterFirstUnlock` items open; `.param` past
    /// ``AgentProtocol/maxIDsPerRequest`` IDs.
    case getItems(ids: [UUID], detail: ItemDetail)
    /// Every item (or those of one service, of any class) at the
    /// ``ItemDetail/listing`` detail, in ``ListingOrder``; answers `.items`
    /// (empty when there are none).
    case list(service: String?)
    /// Add an item; `.duplicateItem` when it exists; answers
    /// `.written` (count 1, the added item).
    case add(Item)
    /// Add or update the generic password with this service and account
    /// (empty access group); every attribute of `changes` travels. Answers
    /// `.written`: count 1 when added, 0 when updated, and the item.
    case save(service: String, account: String, secret: SecretBytes, changes: ItemChanges)
    /// Change every item matching a query in one transaction (`SecItemUpdate`);
    /// answers `.written` (how many, and each changed item), `.itemNotFound` when none.
    case update(ItemQuery, ItemChanges)
    /// Delete every item matching a query (`SecItemDelete`); answers
    /// `.written` (how many, and each deleted item), `.itemNotFound` when none.
    case delete(ItemQuery)
    /// Apply an import plan in one transaction (``Vault/applyImport(_:progress:)``);
    /// answers `.written` (the changes applied, and each item changed).
    case applyImport([ImportChange])
    /// Keep the connection open and send an `.event` for each change of the
    /// vault's items (the agent's own writes and other processes' alike),
    /// each once, and for each lock and unlock; answers `.ok` first. The
    /// connection carries nothing else afterwards.
    case subscribe
    /// The answer of the person at a terminal UI to consent question
    /// `question` (an ``AgentEvent/Kind/question`` event). The agent takes
    /// it only from a peer that is Fob's own terminal UI
    /// (``AccessContext/isTerminalUI``); answers `.ok`, `.itemNotFound`
    /// when the question is no longer open (settled elsewhere, timed out),
    /// `.param` from any other peer.
    case answer(question: UInt64, AccessAnswer)
    /// `request`, made by the Secret Service provider for the D-Bus client
    /// whose process id is `pid` (the bus's `GetConnectionUnixProcessID`
    /// of the message's sender). The agent believes the pid only when its
    /// peer is Fob's own provider (``FobPrograms/isSecretServiceProvider(_:)``):
    /// the client is then the requester the access rules and the question
    /// name, through the channel "Secret Service"; from any other peer the
    /// claim is ignored and `request` is answered as if sent alone. The
    /// inner request is never a `forClient`, `subscribe` or `applyImport`.
    /// Answers as `request`.
    indirect case forClient(pid: Int32, request: AgentRequest)
    /// The access log's entries that pass `filter` (the filter applied by
    /// the agent, which flushes what it queued first); answers
    /// `.accessLog`. Needs the vault fully unlocked. Names items and
    /// programs, no secret: answered without consent, as a listing is.
    case accessLog(AccessLogFilter)

    /// Whether the request uses items (and so restarts the idle timer).
    public var isItemOperation: Bool {
        switch self {
        case .status, .unlock, .unlockWithKey, .lock, .subscribe, .accessLog, .answer: return false
        case .forClient(_, let request): return request.isItemOperation
        default: return true
        }
    }

    /// Whether the request may change items.
    public var isWrite: Bool {
        switch self {
        case .add, .save, .update, .delete, .applyImport: return true
        case .forClient(_, let request): return request.isWrite
        default: return false
        }
    }

    /// The request itself, without a ``forClient(pid:request:)`` around it.
    public var unwrapped: AgentRequest {
        if case .forClient(_, let request) = self { return request }
        return self
    }

    /// The code of ``applyImport(_:)``, the one request that may be larger
    /// than ``AgentProtocol/maxMessageBytes``.
    static let importCode: UInt8 = 11
    /// The code of ``forClient(pid:request:)``.
    static let forClientCode: UInt8 = 14
    /// The code of ``accessLog(_:)``.
    static let accessLogCode: UInt8 = 15
    /// The code of ``answer(question:_:)``.
    static let answerCode: UInt8 = 16

    var code: UInt8 {
        switch self {
        case .status: return 1
        case .unlock: return 2
        case .unlockWithKey: return 3
        case .lock: return 4
        case .get: return 5
        case .list: return 6
        case .add: return 7
        case .save: return 8
        case .update: return 9
        case .delete: return 10
        case .applyImport: return AgentRequest.importCode
        case .subscribe: return 12
        case .getItems: return 13
        case .forClient: return AgentRequest.forClientCode
        case .accessLog: return AgentRequest.accessLogCode
        case .answer: return AgentRequest.answerCode
        }
    }
}

/// One change of the vault: what a subscriber hears of
/// (``AgentRequest/subscribe``), and what a write answers for each item it
/// changed (``AgentResponse/written(count:changes:)``).
///
/// An item's change carries its persistent ID, its revision after the
/// change and its summary: the item at ``ItemDetail/listing`` (no secret,
/// an empty one-time seed, custom field names without values), so that a
/// client can patch its list without asking again.
public struct AgentEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: UInt8, Sendable {
        /// An item appeared.
        case added = 1
        /// An item's attributes or secret changed (its primary key did not).
        case changed = 2
        /// An item went away; the summary is the item as it was.
        case deleted = 3
        /// The agent locked (fully, or after a timeout): no item can be read through it.
        case locked = 4
        /// An item's primary key changed (`fob mv`, an update of the
        /// service, account or access group); ``AgentEvent/oldKey`` is the key
        /// it had. Other attributes may have changed with it.
        case renamed = 5
        /// The agent unlocked: items can be read again (a client reloads).
        case unlocked = 6
        /// A consent question for the terminal UI (``AgentEvent/prompt``),
        /// sent only to subscribers that are Fob's own terminal UI.
        case question = 7
        /// The question ``AgentEvent/prompt`` is settled (answered here or
        /// in another UI, or timed out): a UI drops it.
        case settled = 8
    }
    /// What happened.
    public var kind: Kind
    /// The item's primary key (after a rename, the new one); `nil` for
    /// ``Kind/locked`` and ``Kind/unlocked``.
    public var key: ItemKey?
    /// The item's ``Item/revision`` after the change (``Kind/added``,
    /// ``Kind/changed``, ``Kind/renamed``); for ``Kind/deleted`` the revision
    /// it had; `nil` for ``Kind/locked`` and ``Kind/unlocked``.
    public var revision: UInt64?
    /// The item's ``Item/persistentID``, which a rename keeps; `nil` for
    /// ``Kind/locked`` and ``Kind/unlocked``.
    public var id: UUID?
    /// The key the item had before a ``Kind/renamed``; `nil` otherwise.
    public var oldKey: ItemKey?
    /// The item at ``ItemDetail/listing`` after the change (as it was, for
    /// ``Kind/deleted``): never a secret; `nil` for ``Kind/locked`` and
    /// ``Kind/unlocked``.
    public var summary: Item?
    /// The question of ``Kind/question`` and ``Kind/settled``; `nil` otherwise.
    public var prompt: AccessPrompt?

    /// The event of a consent question asked (`settled` false) or settled.
    public init(question: AccessPrompt, settled: Bool) {
        self.init(kind: settled ? .settled : .question, key: nil)
        prompt = question
    }

    /// - Parameters: as the properties.
    public init(
        kind: Kind, key: ItemKey?, revision: UInt64? = nil, id: UUID? = nil, oldKey: ItemKey? = nil,
        summary: Item? = nil
    ) {
        self.kind = kind
        self.key = key
        self.revision = revision
        self.id = id
        self.oldKey = oldKey
        self.summary = summary.map(ItemOperations.listed)
    }

    /// The event of an item change: key, revision and persistent ID from
    /// `summary` (made a listing here, whatever it held).
    /// - Parameters:
    ///   - kind: ``Kind/added``, ``Kind/changed``, ``Kind/renamed`` or ``Kind/deleted``.
    ///   - summary: the item after the change (before it, for a deletion).
    ///   - oldKey: the key before a rename.
    public init(kind: Kind, summary: Item, oldKey: ItemKey? = nil) {
        self.init(
            kind: kind, key: ItemKey(summary), revision: summary.revision, id: summary.persistentID, oldKey: oldKey,
            summary: summary)
    }

    /// The event of one write of the vault's (``Vault/lastWrite``).
    public init(_ write: ItemWrite) {
        switch write {
        case .added(let item): self.init(kind: .added, summary: item)
        case .deleted(let item): self.init(kind: .deleted, summary: item)
        case .changed(let old, let new):
            let (before, after) = (ItemKey(old), ItemKey(new))
            if before == after && old.internetKeyParts == new.internetKeyParts {
                self.init(kind: .changed, summary: new)
            } else {
                self.init(kind: .renamed, summary: new, oldKey: before)
            }
        }
    }
}

/// The agent's lock state as `fob status` reports it.
public struct AgentStatus: Sendable, Equatable {
    /// `unlocked` (every item), `afterFirstUnlock` (after a timeout: only
    /// those items), `locked`.
    public enum State: UInt8, Sendable {
        case locked = 0
        case unlocked = 1
        case afterFirstUnlock = 2
    }
    /// The lock state.
    public var state: State
    /// The agent's process id.
    public var pid: Int32
    /// The vault's canonical path.
    public var vault: String
    /// Seconds left before the idle lock (`nil` when locked or no idle timeout).
    public var idleSecondsLeft: UInt32?
    /// Seconds left before the maximum-time lock (`nil` when locked or none).
    public var maxSecondsLeft: UInt32?

    /// - Parameters: as the properties.
    public init(state: State, pid: Int32, vault: String, idleSecondsLeft: UInt32?, maxSecondsLeft: UInt32?) {
        self.state = state
        self.pid = pid
        self.vault = vault
        self.idleSecondsLeft = idleSecondsLeft
        self.maxSecondsLeft = maxSecondsLeft
    }
}

/// What the agent answers.
public enum AgentResponse: Sendable {
    /// Done, nothing to return.
    case ok
    /// Items, with as much of each as the request asked.
    case items([Item])
    /// The state.
    case status(AgentStatus)
    /// The answer to a write: how many items it changed (for `.save`, 1 =
    /// added, 0 = updated), and one ``AgentEvent`` per item changed, in the
    /// order written, each with the item's new revision and summary.
    case written(count: Int, changes: [AgentEvent])
    /// A change, sent to a subscriber.
    case event(AgentEvent)
    /// The answer to ``AgentRequest/accessLog(_:)``: the entries that
    /// authenticated and pass the filter, oldest first, and what is wrong
    /// with the log (empty: it verifies), as `fob verify` words it.
    case accessLog(records: [AccessLogRecord], problems: [String])
    /// The error direct use of the vault would have thrown.
    case failure(KeychainError)
}
