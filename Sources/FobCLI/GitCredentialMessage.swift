import FobStore
import FobSystem
import FoundationEssentials

/// Why git's credential input was refused.
public enum GitCredentialError: Error, Equatable, Sendable {
    /// The input is longer than ``GitCredentialMessage/maxInputBytes``.
    case tooLong
    /// A line without `=` (the line number, from 1).
    case missingEquals(line: Int)
    /// A value or key that is not UTF-8, or holds a NUL byte (the line number).
    case invalidText(line: Int)
    /// `password_expiry_utc` that is not a whole number of seconds.
    case invalidExpiry
    /// A `url=` git could not have sent, or a `host` whose port is not 0 to 65,535.
    case invalidURL
}

/// One credential as git's credential-helper protocol describes it
/// (gitcredentials(7), git-credential(1) "INPUT/OUTPUT FORMAT"): `key=value`
/// lines ending at a blank line or the end of the input.
///
/// Keys Fob knows: `protocol`, `host` (with `:port`), `path`, `username`,
/// `password`, `password_expiry_utc`, `oauth_refresh_token`, `url` (taken
/// apart into the others) and `capability[]`. Other keys (`wwwauth[]`,
/// `state[]`, …) are read and ignored, as the protocol asks of helpers.
/// The password and refresh token are held in ``SecretBytes``.
public struct GitCredentialMessage: Sendable, Equatable {
    /// `https`, `http`, …; `nil` when not given.
    public var `protocol`: String?
    /// The host name without its port.
    public var host: String?
    /// The port of `host=NAME:PORT`; `nil` when none.
    public var port: Int?
    /// The repository path (sent when `credential.useHttpPath` is set).
    public var path: String?
    /// The user name.
    public var username: String?
    /// The password.
    public var password: SecretBytes?
    /// When the password expires, seconds since 1970 UTC.
    public var passwordExpiry: Int64?
    /// An OAuth refresh token stored beside the password.
    public var oauthRefreshToken: SecretBytes?
    /// The `capability[]` values git announced (`authtype`, `state`).
    public var capabilities: [String] = []

    /// The largest input read: 1 MiB (a password is at most ``Item/maxSecretBytes``).
    public static let maxInputBytes = 1 << 20 + 64 << 10

    public init() {}

    /// Parses git's input. A pure function of the bytes (a fuzz target calls it):
    /// lines end with `\n` (a `\r` before it is kept, as git keeps it); a
    /// blank line ends the message; a key given twice keeps its last value,
    /// except `capability[]`, which collects; an empty `capability[]` or
    /// other `key[]=` value clears the list, as git does.
    /// - Parameter input: the bytes on the helper's standard input.
    /// - Returns: the credential.
    /// - Throws: ``GitCredentialError``: `.tooLong`, `.missingEquals`,
    ///   `.invalidText`, `.invalidExpiry`, `.invalidURL`.
    public static func parse(_ input: UnsafeRawBufferPointer) throws(GitCredentialError) -> GitCredentialMessage {
        guard input.count <= maxInputBytes else { throw .tooLong }
        var message = GitCredentialMessage()
        var start = 0
        var lineNumber = 0
        while start < input.count {
            lineNumber += 1
            var end = start
            while end < input.count && input[end] != 0x0A { end += 1 }
            let line = UnsafeRawBufferPointer(rebasing: input[start..<end])
            start = end + 1
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { throw .missingEquals(line: lineNumber) }
            let keyBytes = UnsafeRawBufferPointer(rebasing: line[..<equals])
            let valueBytes = UnsafeRawBufferPointer(rebasing: line[(equals + 1)...])
            guard !keyBytes.contains(0), !valueBytes.contains(0),
                let key = String(validating: keyBytes, as: UTF8.self)
            else { throw .invalidText(line: lineNumber) }
            switch key {
            case "password":
                message.password = SecretBytes(valueBytes)
                continue
            case "oauth_refresh_token":
                message.oauthRefreshToken = SecretBytes(valueBytes)
                continue
            default:
                break
            }
            guard let value = String(validating: valueBytes, as: UTF8.self) else {
                throw .invalidText(line: lineNumber)
            }
            switch key {
            case "protocol": message.protocol = value
            case "host": try message.setHost(value)
            case "path": message.path = value
            case "username": message.username = value
            case "password_expiry_utc":
                guard let seconds = Int64(value) else { throw .invalidExpiry }
                message.passwordExpiry = seconds
            case "url": try message.setURL(value)
            case "capability[]":
                if value.isEmpty { message.capabilities = [] } else { message.capabilities.append(value) }
            default: break
            }
        }
        return message
    }

    /// Parses a `String` (tests and callers holding no secret).
    public static func parse(_ text: String) throws(GitCredentialError) -> GitCredentialMessage {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { raw in Result { () throws(GitCredentialError) in try parse(raw) } }.get()
    }

    /// `host=NAME` or `host=NAME:PORT`; an IPv6 literal keeps its brackets.
    private mutating func setHost(_ value: String) throws(GitCredentialError) {
        if let colon = value.lastIndex(of: ":"), !value[colon...].contains("]") {
            let portText = value[value.index(after: colon)...]
            guard let port = Int(portText), (0...Item.maxPort).contains(port) else { throw .invalidURL }
            host = String(value[..<colon])
            self.port = port
        } else {
            host = value
            port = nil
        }
    }

    /// `url=PROTOCOL://[USER[:PASSWORD]@]HOST[:PORT][/PATH]`, taken apart as
    /// git does. A part whose percent-decoding holds a line break or NUL is
    /// refused (git refuses such a URL too): no value this helper stores
    /// or answers can hold one, since each `key=value` is one line.
    private mutating func setURL(_ value: String) throws(GitCredentialError) {
        func decoded(_ part: Substring) throws(GitCredentialError) -> String {
            let text = part.percentDecoded() ?? String(part)
            guard !text.utf8.contains(where: { $0 == 0x0A || $0 == 0 }) else { throw .invalidURL }
            return text
        }
        guard let schemeEnd = value.firstRange(of: "://") else { throw .invalidURL }
        self.protocol = String(value[..<schemeEnd.lowerBound])
        var rest = value[schemeEnd.upperBound...]
        var hostPart = rest
        if let slash = rest.firstIndex(of: "/") {
            hostPart = rest[..<slash]
            let pathText = rest[rest.index(after: slash)...]
            path = pathText.isEmpty ? nil : try decoded(pathText)
            rest = hostPart
        }
        if let at = hostPart.lastIndex(of: "@") {
            let user = hostPart[..<at]
            let name = user.firstIndex(of: ":").map { user[..<$0] } ?? user
            username = try decoded(name)
            if let colon = user.firstIndex(of: ":") {
                password = SecretBytes(utf8: try decoded(user[user.index(after: colon)...]))
            }
            hostPart = hostPart[hostPart.index(after: at)...]
        }
        try setHost(String(hostPart))
    }

    /// The `key=value` lines a `get` answers: only the user name, the
    /// password and what was stored with them (expiry, refresh token),
    /// never the request's own fields.
    ///
    /// git-credential(1), "INPUT/OUTPUT FORMAT": a value "may contain any
    /// bytes except newline or NUL". A value holding either (an item saved
    /// by other means) would inject lines into git's input, so nothing is
    /// answered then.
    /// - Returns: the lines, or `nil` when a value holds a line break or NUL.
    /// - Important: the bytes hold the password; wipe them after writing.
    public func answer() -> [UInt8]? {
        let unsafe: (UnsafeRawBufferPointer) -> Bool = { $0.contains(0x0A) || $0.contains(0) }
        if let username, username.utf8.contains(where: { $0 == 0x0A || $0 == 0 }) { return nil }
        if password?.withUnsafeBytes(unsafe) == true || oauthRefreshToken?.withUnsafeBytes(unsafe) == true {
            return nil
        }
        // Reserved at its exact size: the buffer never grows, so no copy of a
        // secret is left behind in freed memory by a reallocation.
        var out: [UInt8] = []
        out.reserveCapacity(answerLength)
        if let username { out += Array("username=\(username)\n".utf8) }
        if let password {
            out += Array("password=".utf8)
            password.withUnsafeBytes { out += $0 }
            out.append(0x0A)
        }
        if let passwordExpiry { out += Array("password_expiry_utc=\(passwordExpiry)\n".utf8) }
        if let oauthRefreshToken {
            out += Array("oauth_refresh_token=".utf8)
            oauthRefreshToken.withUnsafeBytes { out += $0 }
            out.append(0x0A)
        }
        return out
    }

    /// The length in bytes of ``answer()``'s lines.
    var answerLength: Int {
        var length = 0
        if let username { length += "username=\(username)\n".utf8.count }
        if let password { length += "password=".utf8.count + password.count + 1 }
        if let passwordExpiry { length += "password_expiry_utc=\(passwordExpiry)\n".utf8.count }
        if let oauthRefreshToken { length += "oauth_refresh_token=".utf8.count + oauthRefreshToken.count + 1 }
        return length
    }
}

/// Apple's `kSecAttrProtocol` four-character codes for the protocols git
/// sends; other protocols are stored as git names them.
enum InternetProtocolCode {
    static let codes: [String: String] = [
        "https": "htps", "http": "http", "ftp": "ftp ", "ftps": "ftps", "ssh": "ssh ",
        "smtp": "smtp", "imap": "imap", "imaps": "imps",
    ]

    /// The code stored for git's protocol name.
    static func code(for name: String) -> String { codes[name.lowercased()] ?? name }
}
