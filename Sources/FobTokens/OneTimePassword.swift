import FoundationEssentials

/// A one-time password generator: HOTP (RFC 4226) or TOTP (RFC 6238), with
/// its secret, hash, number of digits and the names it is shown under.
///
/// Build one from an `otpauth://` URI or a bare base32 secret with
/// ``init(parsing:)``, or from its parts with
/// ``init(secret:kind:algorithm:digits:issuer:account:)``. Codes are
/// strings of exactly ``digits`` decimal digits, leading zeros kept.
///
/// ```swift
/// let otp = try OneTimePassword(parsing: "otpauth://totp/Example:ana?secret=JBSWY3DPEHPK3PXP&issuer=Example")
/// let now = Date()
/// let code = otp.code(at: now)             // six digits, such as "062753"
/// let left = otp.secondsLeft(at: now)      // 1...30, or nil for HOTP
/// ```
///
/// - Important: ``secret`` is the key itself. `description`,
///   `debugDescription` and `dump` leave it out, and so do the errors of
///   this module; keep it out of logs and argv, and keep a stored seed in
///   the vault.
public struct OneTimePassword: Sendable {
    /// HOTP or TOTP, with what moves the code on.
    public enum Kind: Sendable, Equatable {
        /// Time-based (RFC 6238 §4): the counter is `floor(unixTime / period)`
        /// (T0 = 0); `period` in seconds, 1 or more (30 by default).
        case totp(period: Int)
        /// Counter-based (RFC 4226): `counter` is the moving factor of the
        /// next code.
        case hotp(counter: UInt64)
    }

    /// The shared secret (the HMAC key): the decoded base32 bytes, never empty.
    public let secret: [UInt8]
    /// TOTP with its period, or HOTP with its counter.
    public let kind: Kind
    /// The HMAC's hash: SHA1 (the default), SHA256 or SHA512.
    public let algorithm: OTPAlgorithm
    /// The number of digits of a code: 6, 7 or 8.
    public let digits: Int
    /// Who issued the secret (`issuer=` or the label's prefix), if known.
    public let issuer: String?
    /// The account name from the label (after the issuer prefix); may be empty.
    public let account: String

    /// The numbers of digits accepted (RFC 4226 §5.3 asks for at least 6;
    /// `otpauth://` URIs use 6 to 8).
    public static let digitRange = 6...8
    /// The default TOTP period: 30 seconds (RFC 6238 §5.2).
    public static let defaultPeriod = 30
    /// The default number of digits: 6.
    public static let defaultDigits = 6

    /// A generator from its parts.
    /// - Parameters:
    ///   - secret: the HMAC key, 1 byte or more.
    ///   - kind: `.totp(period:)` with the period in seconds (default 30), or `.hotp(counter:)`.
    ///   - algorithm: the HMAC's hash (default SHA1).
    ///   - digits: 6, 7 or 8 (default 6).
    ///   - issuer: who issued the secret.
    ///   - account: the account name.
    /// - Throws: ``OTPError/missingSecret`` for an empty secret,
    ///   ``OTPError/badDigits`` for digits outside 6...8, ``OTPError/badPeriod``
    ///   for a period under 1 second.
    public init(
        secret: [UInt8], kind: Kind = .totp(period: OneTimePassword.defaultPeriod),
        algorithm: OTPAlgorithm = .sha1, digits: Int = OneTimePassword.defaultDigits,
        issuer: String? = nil, account: String = ""
    ) throws(OTPError) {
        guard !secret.isEmpty else { throw .missingSecret }
        guard Self.digitRange.contains(digits) else { throw .badDigits }
        if case .totp(let period) = kind, period < 1 { throw .badPeriod }
        self.secret = secret
        self.kind = kind
        self.algorithm = algorithm
        self.digits = digits
        self.issuer = issuer
        self.account = account
    }

    /// The TOTP period in seconds, or `nil` for HOTP.
    public var period: Int? {
        if case .totp(let period) = kind { return period }
        return nil
    }

    /// The code for a given moving factor (RFC 4226 §5.3): HMAC of the
    /// 8-byte big-endian counter, dynamic truncation, modulo 10^digits.
    /// - Parameter counter: the counter (for TOTP, the time step).
    /// - Returns: ``digits`` decimal digits, leading zeros kept.
    public func code(counter: UInt64) -> String {
        Self.hotp(secret: secret, counter: counter, digits: digits, algorithm: algorithm)
    }

    /// The code at an instant: for TOTP the code of the time step holding
    /// `date` (RFC 6238 §4.2); for HOTP the code of ``Kind/hotp(counter:)``,
    /// whatever the time.
    /// - Parameter date: the instant; whole seconds count (instants before
    ///   1970 give the code of step 0).
    /// - Returns: ``digits`` decimal digits, leading zeros kept.
    public func code(at date: Date) -> String {
        code(atUnixTime: Self.unixSeconds(date))
    }

    /// The code at an instant given in seconds since 1970-01-01 UTC; as
    /// ``code(at:)``.
    /// - Parameter unixTime: seconds since the Unix epoch (negative counts as 0).
    /// - Returns: ``digits`` decimal digits, leading zeros kept.
    public func code(atUnixTime unixTime: Int64) -> String {
        switch kind {
        case .hotp(let counter): return code(counter: counter)
        case .totp(let period): return code(counter: Self.timeStep(atUnixTime: unixTime, period: period))
        }
    }

    /// Seconds until the TOTP code changes: 1 to ``period`` (a code is
    /// valid for the rest of its step, RFC 6238 §5.2); `nil` for HOTP.
    /// - Parameter date: the instant (whole seconds count).
    public func secondsLeft(at date: Date) -> Int? {
        secondsLeft(atUnixTime: Self.unixSeconds(date))
    }

    /// ``secondsLeft(at:)`` for seconds since 1970-01-01 UTC.
    /// - Parameter unixTime: seconds since the Unix epoch (negative counts as 0).
    public func secondsLeft(atUnixTime unixTime: Int64) -> Int? {
        guard case .totp(let period) = kind else { return nil }
        let elapsed = max(0, unixTime) % Int64(period)
        return period - Int(elapsed)
    }

    /// The TOTP time step `T = floor((unixTime - T0) / period)` with T0 = 0
    /// (RFC 6238 §4.2).
    /// - Parameters:
    ///   - unixTime: seconds since the Unix epoch (negative counts as 0).
    ///   - period: the step in seconds, 1 or more.
    public static func timeStep(atUnixTime unixTime: Int64, period: Int) -> UInt64 {
        precondition(period >= 1, "a TOTP period is 1 second or more")
        return UInt64(max(0, unixTime) / Int64(period))
    }

    /// An HOTP value (RFC 4226 §5.3).
    /// - Parameters:
    ///   - secret: the HMAC key, any length.
    ///   - counter: the moving factor, hashed as 8 bytes big-endian.
    ///   - digits: 6 to 8 (at most 9 is meaningful: the truncated value has 31 bits).
    ///   - algorithm: the HMAC's hash.
    /// - Returns: `digits` decimal digits, leading zeros kept.
    public static func hotp(secret: [UInt8], counter: UInt64, digits: Int, algorithm: OTPAlgorithm) -> String {
        precondition((1...9).contains(digits), "an HOTP value has 1 to 9 digits")
        let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
        var mac = algorithm.mac(key: secret, message: message)
        // Dynamic truncation: the low 4 bits of the last byte pick 4 bytes; drop the top bit.
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        mac.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    private static func unixSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds >= Double(Int64.max) ? Int64.max : Int64(seconds)
    }
}

extension OneTimePassword: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `TOTP SHA1 6 digits 30 s, issuer "Example", account "ana"`: every
    /// setting but the secret.
    public var description: String {
        var text: String
        switch kind {
        case .totp(let period): text = "TOTP \(algorithm.rawValue) \(digits) digits \(period) s"
        case .hotp(let counter): text = "HOTP \(algorithm.rawValue) \(digits) digits counter \(counter)"
        }
        if let issuer { text += ", issuer \(String(reflecting: issuer))" }
        text += ", account \(String(reflecting: account))"
        return text
    }

    /// As ``description``: the secret is left out.
    public var debugDescription: String { "OneTimePassword(\(description))" }

    /// Every setting but the secret, so `dump` never prints it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "kind": kind, "algorithm": algorithm, "digits": digits,
                "issuer": issuer as Any, "account": account, "secret": "(\(secret.count) bytes, hidden)",
            ])
    }
}
