import FobStore
import Foundation

/// The agent's wire format: one request and one response per connection,
/// each a frame of a 4-byte big-endian length and that many bytes.
///
/// A message starts with the magic `FOBA`, the protocol version (one byte)
/// and a code (one byte: the operation of a request, the outcome of a
/// response), then fields, each a 4-byte big-endian length and its bytes.
/// The version is checked in this first (and only) exchange: an agent of
/// another version answers with its own version and code ``AgentProtocol/versionMismatchCode``.
public enum AgentProtocol {
    /// The version this build speaks. Version 3 names the vault in the
    /// hello and carries item revisions (record tag 29 in items), expected
    /// revisions (query attribute 17, change attribute 25) and the
    /// `.revisionMismatch` failure (code 0x18): an agent of version 2 would
    /// ignore an expected revision and write.
    public static let version: UInt8 = 3
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
                "the agent speaks protocol version \(v), this fob speaks \(AgentProtocol.version); run 'fob lock' and stop the old agent"
        case .unknownCode(let c): return "unknown message code \(c)"
        case .badField(let why): return "bad field: \(why)"
        }
    }
}

/// What a client asks the agent.
public enum AgentRequest: Sendable {
    /// State, vault, socket, pid and time left; never restarts the idle timer.
    case status
    /// Unlock with the master password; the two timeouts in seconds (0 = never).
    case unlock(password: SecretBytes, idleSeconds: UInt32, maxSeconds: UInt32)
    /// Apply an import plan in one transaction (``Vault/applyImport(_:progress:)``);
    /// answers `.count` (the changes applied).
    case applyImport([ImportChange])
    /// Unlock with the 32-byte vault key of a client that has just unlocked
    /// the vault with the master password, so that the key derivation runs
    /// once (``Vault/unlock(vaultKey:)``); idle and maximum seconds as `.unlock`.
    case unlockWithKey(vaultKey: SecretBytes, idleSeconds: UInt32, maxSeconds: UInt32)
    /// Lock fully (every key, every class).
    case lock
    /// One item with its secret.
    case get(service: String, account: String)
    /// Every item (or those of one service), without secrets.
    case list(service: String?)
    /// Add an item; `.duplicateItem` when it exists.
    case add(Item)
    /// Add or update; every attribute of `changes` travels.
    case save(service: String, account: String, secret: SecretBytes, changes: ItemChanges)
    /// Replace the secret of an existing item and the attributes of `changes`.
    case update(service: String, account: String, secret: SecretBytes, changes: ItemChanges)
    /// Delete one item; `.itemNotFound` when missing.
    case delete(service: String, account: String)
    /// The items matching a query (`SecItemCopyMatching`), with their secrets when asked.
    case query(ItemQuery, limitOne: Bool, withSecrets: Bool)
    /// Change every item matching a query (`SecItemUpdate`); answers `.count`.
    case updateMatching(ItemQuery, ItemChanges)
    /// Delete every item matching a query (`SecItemDelete`); answers `.count`.
    case deleteMatching(ItemQuery)
    /// Save with every attribute of `changes` (the terminal UI's store); answers `.count` 1 when added, 0 when updated.
    case saveItem(service: String, account: String, secret: SecretBytes, changes: ItemChanges)

    /// Whether the request uses items (and so restarts the idle timer).
    public var isItemOperation: Bool {
        switch self {
        case .status, .unlock, .unlockWithKey, .lock: return false
        default: return true
        }
    }

    /// The code of ``applyImport(_:)``, the one request that may be larger
    /// than ``AgentProtocol/maxMessageBytes``.
    static let importCode: UInt8 = 15

    var code: UInt8 {
        switch self {
        case .status: return 1
        case .unlock: return 2
        case .lock: return 3
        case .get: return 4
        case .list: return 5
        case .add: return 6
        case .save: return 7
        case .update: return 8
        case .delete: return 9
        case .query: return 10
        case .updateMatching: return 11
        case .deleteMatching: return 12
        case .saveItem: return 13
        case .unlockWithKey: return 14
        case .applyImport: return AgentRequest.importCode
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
    /// One item (with its secret for `get`).
    case item(Item)
    /// Items without secrets.
    case items([Item])
    /// The state.
    case status(AgentStatus)
    /// How many items changed (or 1 = added, 0 = updated for `.saveItem`).
    case count(Int)
    /// The error direct use of the vault would have thrown.
    case failure(KeychainError)
}
