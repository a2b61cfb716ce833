import FobSystem

/// Message numbers of the SSH agent protocol (RFC 9987 §6.1).
public enum SSHAgentMessage {
    public static let failure: UInt8 = 5
    public static let success: UInt8 = 6
    public static let requestIdentities: UInt8 = 11
    public static let identitiesAnswer: UInt8 = 12
    public static let signRequest: UInt8 = 13
    public static let signResponse: UInt8 = 14
    public static let addIdentity: UInt8 = 17
    public static let removeIdentity: UInt8 = 18
    public static let removeAllIdentities: UInt8 = 19
    public static let addSmartcardKey: UInt8 = 20
    public static let removeSmartcardKey: UInt8 = 21
    public static let lock: UInt8 = 22
    public static let unlock: UInt8 = 23
    public static let addIdConstrained: UInt8 = 25
    public static let addSmartcardKeyConstrained: UInt8 = 26
    public static let extensionRequest: UInt8 = 27
    public static let extensionFailure: UInt8 = 28
    /// The largest message Fob reads, as OpenSSH's agent: 256 KiB.
    public static let maxLength = 256 * 1024
}

/// One hop of a `restrict-destination-v00@openssh.com` constraint: a user
/// (empty for any), a host name, and the host keys that identify it.
/// Made only by reading an ADD_ID_CONSTRAINED message.
public struct SSHDestinationHop: Equatable, Sendable {
    /// The user name; empty for any (always empty on a `from` hop).
    public var user: String
    /// The host name as `ssh-add -h` was given it; empty on the first hop's `from`.
    public var hostname: String
    /// The host's keys, each with whether it is a certificate authority.
    public var keys: [SSHHopKey]
}

/// A host key named by a destination constraint.
/// Made only by reading an ADD_ID_CONSTRAINED message.
public struct SSHHopKey: Equatable, Sendable {
    /// The key.
    public var key: SSHPublicKey
    /// Whether it is a certificate authority's key (never matched as a host key by Fob).
    public var isCA: Bool
}

/// One `restrict-destination-v00@openssh.com` constraint (OpenSSH's PROTOCOL.agent §2): from one hop to another.
public struct SSHDestinationConstraint: Equatable, Sendable {
    /// Where the connection comes from: an empty hostname is the machine the agent runs on.
    public var from: SSHDestinationHop
    /// Where it goes.
    public var to: SSHDestinationHop
}

/// The constraints of an ADD_ID_CONSTRAINED (RFC 9987 §3.2.7).
public struct SSHKeyConstraints: Equatable, Sendable {
    /// SSH_AGENT_CONSTRAIN_LIFETIME: seconds the key may be used; `nil` for no limit.
    public var lifetime: UInt32?
    /// SSH_AGENT_CONSTRAIN_CONFIRM (`ssh-add -c`): every use must be confirmed.
    public var confirm: Bool
    /// `restrict-destination-v00@openssh.com` (`ssh-add -h`); empty for none.
    public var destinations: [SSHDestinationConstraint]

    /// Constraints; none by default.
    public init(lifetime: UInt32? = nil, confirm: Bool = false, destinations: [SSHDestinationConstraint] = []) {
        self.lifetime = lifetime
        self.confirm = confirm
        self.destinations = destinations
    }

    /// The destination constraints in their wire encoding (the extension's
    /// contents), for storing with the key; empty bytes for none.
    public var destinationsWire: [UInt8] {
        guard !destinations.isEmpty else { return [] }
        var outer = SSHWriter()
        for constraint in destinations {
            outer.string(SSHKeyConstraints.encode(hop: constraint.from))
            outer.string(SSHKeyConstraints.encode(hop: constraint.to))
            outer.string([UInt8]())
        }
        return outer.bytes
    }

    /// Reads destination constraints from their wire encoding (``destinationsWire``).
    /// - Throws: ``SSHAgentProtocolError``.
    public static func destinations(wire: [UInt8]) throws(SSHAgentProtocolError) -> [SSHDestinationConstraint] {
        var reader = SSHReader(wire)
        var result: [SSHDestinationConstraint] = []
        do {
            while !reader.isAtEnd {
                guard result.count < 64 else { throw SSHAgentProtocolError.badConstraint("too many destinations") }
                let from = try hop(try reader.string("from hop"))
                let to = try hop(try reader.string("to hop"))
                guard try reader.string("reserved").isEmpty else {
                    throw SSHAgentProtocolError.badConstraint("unsupported destination extension")
                }
                guard from.user.isEmpty, from.hostname.isEmpty == from.keys.isEmpty else {
                    throw SSHAgentProtocolError.badConstraint("inconsistent \"from\" hop")
                }
                guard !to.hostname.isEmpty, !to.keys.isEmpty else {
                    throw SSHAgentProtocolError.badConstraint("incomplete \"to\" hop")
                }
                result.append(SSHDestinationConstraint(from: from, to: to))
            }
        } catch let error as SSHWireError {
            throw .wire(error)
        } catch let error as SSHAgentProtocolError {
            throw error
        } catch {
            throw .badConstraint("unreadable")
        }
        return result
    }

    private static func hop(_ bytes: [UInt8]) throws -> SSHDestinationHop {
        var reader = SSHReader(bytes)
        let user = try reader.text("user", limit: 1024)
        let hostname = try reader.text("hostname", limit: 1024)
        guard try reader.string("reserved").isEmpty else {
            throw SSHAgentProtocolError.badConstraint("unsupported hop extension")
        }
        var keys: [SSHHopKey] = []
        while !reader.isAtEnd {
            guard keys.count < 64 else { throw SSHAgentProtocolError.badConstraint("too many host keys") }
            let key = try SSHPublicKey(blob: try reader.string("host key", limit: 16_384))
            keys.append(SSHHopKey(key: key, isCA: try reader.byte("is_ca") != 0))
        }
        return SSHDestinationHop(user: user, hostname: hostname, keys: keys)
    }

    private static func encode(hop: SSHDestinationHop) -> [UInt8] {
        var writer = SSHWriter()
        writer.string(hop.user)
        writer.string(hop.hostname)
        writer.string([UInt8]())
        for key in hop.keys {
            writer.string(key.key.blob)
            writer.boolean(key.isCA)
        }
        return writer.bytes
    }
}

/// Why an agent request could not be read.
public enum SSHAgentProtocolError: Error, Equatable, Sendable {
    /// A field was damaged.
    case wire(SSHWireError)
    /// The key in an ADD_IDENTITY could not be used.
    case key(SSHKeyError)
    /// A constraint Fob does not know (RFC 9987: the agent must refuse the key) or a damaged one.
    case badConstraint(String)
    /// An empty message.
    case empty
}

/// A request from an SSH agent client (RFC 9987 §3, OpenSSH's PROTOCOL.agent).
public enum SSHAgentRequest {
    /// SSH_AGENTC_REQUEST_IDENTITIES.
    case requestIdentities
    /// SSH_AGENTC_SIGN_REQUEST: the key's blob, the data, the flags.
    case sign(key: [UInt8], data: [UInt8], flags: UInt32)
    /// SSH_AGENTC_ADD_IDENTITY or ADD_ID_CONSTRAINED.
    case add(key: SSHPrivateKey, comment: String, constraints: SSHKeyConstraints)
    /// SSH_AGENTC_REMOVE_IDENTITY: the key's blob.
    case remove(key: [UInt8])
    /// SSH_AGENTC_REMOVE_ALL_IDENTITIES.
    case removeAll
    /// SSH_AGENTC_LOCK or UNLOCK (the passphrase is read and dropped).
    case lockOrUnlock
    /// `session-bind@openssh.com`.
    case sessionBind(SessionBind)
    /// The `query` extension.
    case query
    /// An extension Fob does not implement: its name.
    case unknownExtension(String)
    /// Any other message number (smartcard keys, the SSH1 messages …).
    case unsupported(UInt8)

    /// Reads one message (the bytes after the frame's length).
    /// - Throws: ``SSHAgentProtocolError``.
    public static func decode(_ message: [UInt8]) throws(SSHAgentProtocolError) -> SSHAgentRequest {
        guard let type = message.first else { throw .empty }
        var reader = SSHReader(Array(message.dropFirst()))
        do {
            let request: SSHAgentRequest
            switch type {
            case SSHAgentMessage.requestIdentities: request = .requestIdentities
            case SSHAgentMessage.signRequest:
                request = .sign(
                    key: try reader.string("key blob", limit: 16_384), data: try reader.string("data"),
                    flags: try reader.uint32("flags"))
            case SSHAgentMessage.addIdentity, SSHAgentMessage.addIdConstrained:
                let key = try SSHPrivateKey.read(privateWire: &reader)
                let comment = try reader.text("comment", limit: 4096)
                let constraints = try readConstraints(&reader, allowed: type == SSHAgentMessage.addIdConstrained)
                request = .add(key: key, comment: comment, constraints: constraints)
            case SSHAgentMessage.removeIdentity: request = .remove(key: try reader.string("key blob", limit: 16_384))
            case SSHAgentMessage.removeAllIdentities: request = .removeAll
            case SSHAgentMessage.lock, SSHAgentMessage.unlock:
                var passphrase = try reader.string("passphrase", limit: 4096)
                passphrase.wipe()
                request = .lockOrUnlock
            case SSHAgentMessage.extensionRequest:
                let name = try reader.text("extension name", limit: 256)
                switch name {
                case SessionBind.extensionName: request = .sessionBind(try SessionBind.read(&reader))
                case "query": request = .query
                default: return .unknownExtension(name)
                }
            default:
                return .unsupported(type)
            }
            try reader.expectEnd()
            return request
        } catch let error as SSHWireError {
            throw .wire(error)
        } catch let error as SSHKeyError {
            throw .key(error)
        } catch let error as SSHAgentProtocolError {
            throw error
        } catch {
            throw .empty
        }
    }

    private static func readConstraints(_ reader: inout SSHReader, allowed: Bool) throws -> SSHKeyConstraints {
        var constraints = SSHKeyConstraints()
        var seen = Set<UInt8>()
        while !reader.isAtEnd {
            guard allowed else { throw SSHWireError.trailingBytes(reader.remaining) }
            let type = try reader.byte("constraint")
            guard seen.insert(type).inserted else { throw SSHAgentProtocolError.badConstraint("repeated constraint") }
            switch type {
            case 1: constraints.lifetime = try reader.uint32("lifetime")
            case 2: constraints.confirm = true
            case 255:
                let name = try reader.text("constraint name", limit: 256)
                guard name == "restrict-destination-v00@openssh.com" else {
                    throw SSHAgentProtocolError.badConstraint("unsupported constraint \(name)")
                }
                constraints.destinations = try SSHKeyConstraints.destinations(wire: try reader.string("destinations"))
            default:
                throw SSHAgentProtocolError.badConstraint("unsupported constraint \(type)")
            }
        }
        return constraints
    }
}

/// An identity as REQUEST_IDENTITIES answers it.
public struct SSHIdentity: Equatable, Sendable {
    /// The public key.
    public var key: SSHPublicKey
    /// Its comment.
    public var comment: String
}

/// Answers of the agent, encoded as whole frames (uint32 length ‖ message).
public enum SSHAgentResponse {
    /// SSH_AGENT_FAILURE.
    public static var failure: [UInt8] { frame([SSHAgentMessage.failure]) }
    /// SSH_AGENT_SUCCESS.
    public static var success: [UInt8] { frame([SSHAgentMessage.success]) }

    /// SSH_AGENT_IDENTITIES_ANSWER.
    public static func identities(_ identities: [SSHIdentity]) -> [UInt8] {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessage.identitiesAnswer)
        writer.uint32(UInt32(identities.count))
        for identity in identities {
            writer.string(identity.key.blob)
            writer.string(identity.comment)
        }
        return frame(writer.bytes)
    }

    /// SSH_AGENT_SIGN_RESPONSE with a signature blob.
    public static func signature(_ blob: [UInt8]) -> [UInt8] {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessage.signResponse)
        writer.string(blob)
        return frame(writer.bytes)
    }

    /// The `query` extension's answer: SSH_AGENT_SUCCESS, then each supported extension's name.
    public static func query(_ names: [String]) -> [UInt8] {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessage.success)
        for name in names { writer.string(name) }
        return frame(writer.bytes)
    }

    /// A message with its uint32 length in front.
    public static func frame(_ message: [UInt8]) -> [UInt8] {
        var writer = SSHWriter()
        writer.string(message)
        return writer.bytes
    }
}
