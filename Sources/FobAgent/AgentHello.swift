import CLinux
import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// The first exchange of every connection: the client names the vault it
/// means, and the agent answers `ok` only when that is its own vault.
///
/// The hello is a message (``AgentProtocol``'s header, code ``code``) of
/// three fields: the vault's canonical path (UTF-8), and the file's device
/// and inode numbers (8 bytes each, big-endian; 0 when the file is
/// missing). The agent compares them with its own vault's and answers the
/// `ok` response, or code ``wrongVaultCode`` with one field, the reason; only
/// after `ok` does the client send its request. So a socket shared by two
/// vaults (a hash collision, a `FOB_AGENT_SOCKET` set for another vault)
/// never serves one vault's request from the other.
public enum AgentHello {
    /// The hello's message code.
    static let code: UInt8 = 0x48
    /// The response code of a refused hello: another vault.
    static let wrongVaultCode: UInt8 = 0xFE
    /// The largest hello, in bytes: a path of `PATH_MAX` and room for the rest.
    static let maxBytes = 8 << 10

    /// The hello of a client of the vault at `canonicalPath`.
    /// - Parameter canonicalPath: as ``AgentEndpoint/vault``.
    /// - Returns: the message (no secret in it).
    public static func encoded(vault canonicalPath: String) -> [UInt8] {
        let (device, inode) = identity(of: canonicalPath)
        var w = MessageWriter(code: code)
        w.field(canonicalPath)
        w.field(bigEndian(device))
        w.field(bigEndian(inode))
        return w.bytes
    }

    /// The device and inode of the file at `path`, or zeros when it is missing.
    static func identity(of path: String) -> (UInt64, UInt64) {
        var st = stat()
        guard stat(path, &st) == 0 else { return (0, 0) }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    /// What the agent makes of a hello.
    enum Verdict: Equatable {
        /// The client means this vault.
        case accepted
        /// Another vault, or no hello: the reason.
        case refused(String)
        /// Another protocol version.
        case versionMismatch
    }

    /// Checks a hello against the vault the agent serves.
    /// - Parameters:
    ///   - bytes: the first frame's payload.
    ///   - served: the agent's vault, canonical path.
    static func verdict(_ bytes: [UInt8], served: String) -> Verdict {
        let parsed = bytes.withUnsafeBytes { raw -> Result<(String, UInt64, UInt64), AgentProtocolError> in
            Result { () throws(AgentProtocolError) in
                let r = try MessageReader(raw, limit: maxBytes)
                guard r.version == AgentProtocol.version else { throw .versionMismatch(r.version) }
                guard r.code == code else { throw .unknownCode(r.code) }
                try r.expect(3)
                guard r.raw(1).count == 8, r.raw(2).count == 8 else { throw .badField("device or inode") }
                let number = { (i: Int) in r.raw(i).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
                guard let path = String(checkingUTF8: r.raw(0)) else { throw .badField("vault path") }
                return (path, number(1), number(2))
            }
        }
        switch parsed {
        case .failure(.versionMismatch): return .versionMismatch
        case .failure(let error): return .refused("the connection did not start with a hello: \(error)")
        case .success(let (path, device, inode)):
            let (ownDevice, ownInode) = identity(of: served)
            guard path == served, device == ownDevice, inode == ownInode else {
                return .refused(
                    "this agent serves \(served), not \(path); it refused the request (stop it, or unset FOB_AGENT_SOCKET)"
                )
            }
            return .accepted
        }
    }

    /// The agent's answer to a refused hello.
    static func refusal(_ reason: String) -> [UInt8] {
        var w = MessageWriter(code: wrongVaultCode)
        w.field(reason)
        return w.bytes
    }

    /// What a client makes of the agent's answer to its hello.
    /// - Throws: `.unsafe` naming the other vault; `.protocolError` for another
    ///   version or garbage.
    static func check(answer bytes: [UInt8]) throws(AgentClientError) {
        let outcome = bytes.withUnsafeBytes { raw -> Result<String?, AgentProtocolError> in
            Result { () throws(AgentProtocolError) in
                let r = try MessageReader(raw, limit: maxBytes)
                guard r.version == AgentProtocol.version else { throw .versionMismatch(r.version) }
                if r.code == 0 { return nil }
                guard r.code == wrongVaultCode else { throw .unknownCode(r.code) }
                try r.expect(1)
                return try r.text(0, "reason")
            }
        }
        switch outcome {
        case .success(nil): return
        case .success(let reason?): throw .unsafe("agent: \(reason)")
        case .failure(let error): throw .protocolError(error)
        }
    }
}
