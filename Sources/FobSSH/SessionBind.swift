/// OpenSSH's `session-bind@openssh.com` extension (PROTOCOL.agent §1):
/// the client tells the agent which server its connection is for, proved
/// by the server's own signature over the session identifier.
public struct SessionBind: Equatable, Sendable {
    /// The extension's name.
    public static let extensionName = "session-bind@openssh.com"

    /// The server's host key.
    public var hostKey: SSHPublicKey
    /// The session identifier: the exchange hash H of the first key exchange (RFC 4253 §7.2).
    public var sessionID: [UInt8]
    /// The server's signature over ``sessionID`` with ``hostKey`` (an SSH signature blob).
    public var signature: [UInt8]
    /// Whether the connection is bound for forwarding the agent (`true`) or for user authentication.
    public var isForwarding: Bool

    /// A binding.
    public init(hostKey: SSHPublicKey, sessionID: [UInt8], signature: [UInt8], isForwarding: Bool) {
        self.hostKey = hostKey
        self.sessionID = sessionID
        self.signature = signature
        self.isForwarding = isForwarding
    }

    /// Reads the extension's contents: `string hostkey, string session
    /// identifier, string signature, bool is_forwarding`.
    static func read(_ reader: inout SSHReader) throws -> SessionBind {
        let key = try SSHPublicKey(blob: try reader.string("host key", limit: 16_384))
        let sessionID = try reader.string("session identifier", limit: 128)
        let signature = try reader.string("signature", limit: 16_384)
        let forwarding = try reader.boolean("is_forwarding")
        return SessionBind(hostKey: key, sessionID: sessionID, signature: signature, isForwarding: forwarding)
    }

    /// The extension as a client sends it (the message after the frame's length), for tests and tools.
    public var message: [UInt8] {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessage.extensionRequest)
        writer.string(SessionBind.extensionName)
        writer.string(hostKey.blob)
        writer.string(sessionID)
        writer.string(signature)
        writer.boolean(isForwarding)
        return writer.bytes
    }

    /// Whether the server's signature over the session identifier verifies with the host key.
    public var verifies: Bool { !sessionID.isEmpty && hostKey.verify(signature: signature, over: sessionID) }
}
