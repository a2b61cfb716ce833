import FobStore
import FoundationEssentials

/// The agent's wire format: one request and one response per connection
/// (a subscription: one request, then `.ok` and one `.event` per change),
/// each a frame of a 4-byte big-endian length and that many bytes.
///
/// A message starts with the magic `FOBA`, the protocol version (one byte)
/// and a code (one byte: the operation of a request, the outcome of a
/// response), then fields, each a 4-byte big-endian length and its bytes.
/// The version is checked in this first (and only) exchange: an agent of
/// another version answers with its own version and code ``AgentProtocol/versionMismatchCode``.
/// Version 3 has one verb per operation (get, list, add, save, update,
/// delete), an ``ItemDetail`` on `get`, and ``AgentRequest/subscribe``;
/// version 4 adds ``ItemDetail/secretOnly``.
public enum AgentProtocol {
    /// The version this build speaks. Version 3 names the vault in the
    /// hello and carries item revisions (record tag 29 in items), expected
    /// revisions (query attribute 17, change attribute 25) and the
    /// `.revisionMismatch` failure (code 0x18): an agent of version 2 would
    /// ignore an expected revision and write. Version 4 adds the detail
    /// ``ItemDetail/secretOnly`` (3), which an agent of version 3 would refuse
    /// as a malformed request rather than as another version.
    public static let version: UInt8 = 4
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

    public static func < (a: ItemDetail, b: ItemDetail) -> Bool { a.rawValue < b.rawValue }
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
    /// Every item (or those of one service, of any class) at the
    /// ``ItemDetail/listing`` detail, in ``ListingOrder``; answers `.items`
    /// (empty when there are none).
    case list(service: String?)
    /// Add an item; `.duplicateItem` when it exists; answers `.ok`.
    case add(Item)
    /// Add or update the generic password with this service and account
    /// (empty access group); every attribute of `changes` travels. Answers
    /// `.count` 1 when added, 0 when updated.
    case save(service: String, account: String, secret: SecretBytes, changes: ItemChanges)
    /// Change every item matching a query in one transaction (`SecItemUpdate`);
    /// answers `.count`, `.itemNotFound` when none.
    case update(ItemQuery, ItemChanges)
    /// Delete every item matching a query (`SecItemDelete`); answers `.count`,
    /// `.itemNotFound` when none.
    case delete(ItemQuery)
    /// Apply an import plan in one transaction (``Vault/applyImport(_:progress:)``);
    /// answers `.count` (the changes applied).
    case applyImport([ImportChange])
    /// Keep the connection open and send an `.event` for each change of the
    /// vault's items (the agent's own writes and other processes' alike)
    /// and for each lock; answers `.ok` first.
    case subscribe

    /// Whether the request uses items (and so restarts the idle timer).
    public var isItemOperation: Bool {
        switch self {
        case .status, .unlock, .unlockWithKey, .lock, .subscribe: return false
        default: return true
        }
    }

    /// Whether the request may change items.
    public var isWrite: Bool {
        switch self {
        case .add, .save, .update, .delete, .applyImport: return true
        default: return false
        }
    }

    /// The code of ``applyImport(_:)``, the one request that may be larger
    /// than ``AgentProtocol/maxMessageBytes``.
    static let importCode: UInt8 = 11

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
        }
    }
}

/// One change of the vault that a subscriber hears of (``AgentRequest/subscribe``).
public struct AgentEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: UInt8, Sendable {
        /// An item appeared.
        case added = 1
        /// An item's attributes or secret changed.
        case changed = 2
        /// An item went away.
        case deleted = 3
        /// The agent locked (fully, or after a timeout): no item can be read through it.
        case locked = 4
    }
    /// What happened.
    public var kind: Kind
    /// The item (`nil` for ``Kind/locked``).
    public var key: ItemKey?
    /// The item's ``Item/revision`` after the change (``Kind/added`` and
    /// ``Kind/changed``); `nil` for ``Kind/deleted`` and ``Kind/locked``.
    public var revision: UInt64?

    /// - Parameters: as the properties.
    public init(kind: Kind, key: ItemKey?, revision: UInt64? = nil) {
        self.kind = kind
        self.key = key
        self.revision = revision
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
    /// How many items changed (or 1 = added, 0 = updated for `.save`).
    case count(Int)
    /// A change, sent to a subscriber.
    case event(AgentEvent)
    /// The error direct use of the vault would have thrown.
    case failure(KeychainError)
}
