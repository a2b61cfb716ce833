import CSodium
import FobSystem

/// Proof Key for Code Exchange (RFC 7636): a code verifier and its S256
/// code challenge.
public struct PKCE: Sendable, Equatable {
    /// The code verifier (RFC 7636 §4.1): 43 to 128 characters of
    /// `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
    public let verifier: String
    /// `BASE64URL(SHA256(ASCII(verifier)))` without padding (RFC 7636 §4.2).
    public let challenge: String
    /// The challenge method; always `S256` (RFC 7636 §4.2; `plain` is never sent).
    public let method = "S256"

    /// The shortest verifier allowed (RFC 7636 §4.1).
    public static let minimumLength = 43
    /// The longest verifier allowed (RFC 7636 §4.1).
    public static let maximumLength = 128
    /// The length of generated verifiers: 64 characters, about 386 bits.
    public static let defaultLength = 64
    /// The unreserved characters (RFC 3986 §2.3) a verifier is made of.
    public static let unreserved = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    /// A fresh verifier from libsodium's CSPRNG (`randombytes_uniform` over
    /// the 66 unreserved characters, so every character is uniform) and its challenge.
    /// - Parameter length: characters, 43 to 128 (default ``defaultLength``).
    /// - Throws: ``PKCEError/length(_:)`` for a length out of range.
    public static func generate(length: Int = defaultLength) throws(PKCEError) -> PKCE {
        guard (minimumLength...maximumLength).contains(length) else { throw .length(length) }
        Sodium.ensureInitialised()
        let chars = (0..<length).map { _ in unreserved[Int(randombytes_uniform(UInt32(unreserved.count)))] }
        return try PKCE(verifier: String(decoding: chars, as: UTF8.self))
    }

    /// The challenge for a given verifier.
    /// - Parameter verifier: 43 to 128 unreserved characters.
    /// - Throws: ``PKCEError/length(_:)`` or ``PKCEError/character(_:)``
    ///   (for example `+`, `/` or `=` from standard base64).
    public init(verifier: String) throws(PKCEError) {
        let bytes = Array(verifier.utf8)
        if let bad = verifier.unicodeScalars.first(where: { !$0.isASCII || !PKCE.unreserved.contains(UInt8($0.value)) })
        {
            throw .character(Character(bad))
        }
        guard (PKCE.minimumLength...PKCE.maximumLength).contains(bytes.count) else { throw .length(bytes.count) }
        self.verifier = verifier
        challenge = Base64URL.encode(LibSodium.sha256(bytes))
    }
}

/// Why a code verifier was refused.
public enum PKCEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The verifier is not 43 to 128 characters long.
    case length(Int)
    /// The verifier contains a character outside the unreserved set.
    case character(Character)

    /// One line naming the rule broken.
    public var description: String {
        switch self {
        case .length(let n):
            return
                "a PKCE code verifier is \(PKCE.minimumLength) to \(PKCE.maximumLength) characters, not \(n) (RFC 7636 §4.1)"
        case .character(let c):
            let shown =
                c.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value < 0x7F })
                ? "'\(c)'" : "U+" + String(c.unicodeScalars.first!.value, radix: 16, uppercase: true)
            return "a PKCE code verifier may contain only A-Z a-z 0-9 - . _ ~, not \(shown) (RFC 7636 §4.1)"
        }
    }
}

/// The libsodium calls FobTokens makes beyond FobSystem's ``Sodium``.
enum LibSodium {
    /// SHA-256 (`crypto_hash_sha256`): 32 bytes.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialised()
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }
}
