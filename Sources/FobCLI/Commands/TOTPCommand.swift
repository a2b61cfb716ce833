import FobAccess
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// `fob totp SERVICE ACCOUNT [--json]`, `fob totp set SERVICE ACCOUNT`,
/// `fob totp rm SERVICE ACCOUNT`: an item's one-time code (RFC 6238).
enum TOTPCommand: FobCommand {
    static let name = "totp"
    static let summary = "current one-time code; 'set' stores the seed, 'rm' removes it"
    static let positionals = ["set|rm|SERVICE", "SERVICE|ACCOUNT", "ACCOUNT"]
    static let optionalPositionals = 1
    static let options: [OptionSpec] = [
        .flag("--json", help: "print code, secondsLeft, period, digits, algorithm, issuer, account")
    ]
    /// Each form on its own: `--json` goes only with the code.
    static let usageLines = [
        "fob totp SERVICE ACCOUNT [--json]",
        "fob totp set SERVICE ACCOUNT",
        "fob totp rm SERVICE ACCOUNT",
    ]
    static let discussion = """
        fob totp SERVICE ACCOUNT prints the current code. 'fob totp set SERVICE
        ACCOUNT' reads an otpauth://totp/ URI or a bare base32 secret from
        standard input (never the command line), checks it and stores it in
        the item; anything it cannot read is exit 2 and nothing is stored.
        'fob totp rm SERVICE ACCOUNT' removes the seed. A missing item or
        seed is exit 44.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let positionals = invocation.arguments.positionals
        guard positionals.count == 3 else {
            return try show(invocation, service: positionals[0], account: positionals[1])
        }
        let (service, account) = (positionals[1], positionals[2])
        if invocation.arguments.flag("--json") {
            throw UsageError("--json goes with 'fob totp SERVICE ACCOUNT'", command: name)
        }
        switch positionals[0] {
        case "set": return try set(invocation, service: service, account: account)
        case "rm": return try remove(invocation, service: service, account: account)
        default:
            throw UsageError(
                "'fob totp' takes 'set' or 'rm' before SERVICE ACCOUNT, not '\(positionals[0])'", command: name)
        }
    }

    private static func show(_ invocation: Invocation, service: String, account: String) throws -> Int32 {
        let vault = invocation.items()
        let item = try vault.item(service: service, account: account)
        vault.close()
        let otp = try ItemFieldOutput.oneTimePassword(of: item)
        let now = invocation.now
        let code = otp.code(at: now)
        if invocation.arguments.flag("--json") {
            let object: [String: JSONValue] = [
                "code": .string(code), "secondsLeft": otp.secondsLeft(at: now).map { .integer(Int64($0)) } ?? .null,
                "period": otp.period.map { .integer(Int64($0)) } ?? .null,
                "digits": .integer(Int64(otp.digits)), "algorithm": .string(otp.algorithm.rawValue),
                "issuer": otp.issuer.map { .string($0) } ?? .null, "account": .string(otp.account),
            ]
            invocation.standardOutput.write(JSONText.text(object) + "\n")
        } else {
            invocation.standardOutput.write(code + "\n")
        }
        return 0
    }

    private static func set(_ invocation: Invocation, service: String, account: String) throws -> Int32 {
        let vault = invocation.items()
        defer { vault.close() }
        try vault.prepare()
        // Fail before reading a seed that has nowhere to go.
        _ = try vault.item(service: service, account: account)
        let input = try invocation.readItemSecret(
            raw: false, what: "the one-time seed of \(describe(service, account))")
        let seed: SecretBytes
        do { seed = try OneTimeSeed.normalized(input, account: account) } catch {
            throw UsageError("not a one-time seed: \(error.description); nothing was stored", command: name)
        }
        try vault.update(
            matching: .key(service: service, account: account), with: ItemChanges(oneTimePassword: .some(seed)))
        return 0
    }

    private static func remove(_ invocation: Invocation, service: String, account: String) throws -> Int32 {
        let vault = invocation.items()
        defer { vault.close() }
        try vault.prepare()
        let item = try vault.item(service: service, account: account)
        guard item.oneTimePassword != nil else {
            throw KeychainError.itemNotFound("one-time seed of \(describe(service, account))")
        }
        try vault.update(
            matching: .key(service: service, account: account), with: ItemChanges(oneTimePassword: .some(nil)))
        return 0
    }

    private static func describe(_ service: String, _ account: String) -> String {
        Item(service: service, account: account, secret: nil).displayName
    }
}

/// A one-time seed as Fob stores it: always an `otpauth://totp/` URI.
public enum OneTimeSeed {
    /// Why a seed was refused.
    public enum SeedError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The text is neither an `otpauth://` URI nor base32 (the parser's reason).
        case unreadable(OTPError)
        /// A counter-based (HOTP) seed: its counter would have to move on every use.
        case counterBased
        /// Not UTF-8 text, or longer than ``Item/maxOneTimePasswordBytes``.
        case notText

        public var description: String {
            switch self {
            case .unreadable(let error): return error.description
            case .counterBased: return "an otpauth://hotp/ (counter-based) seed is not supported; use a TOTP seed"
            case .notText: return "not UTF-8 text of at most \(Item.maxOneTimePasswordBytes) bytes"
            }
        }
    }

    /// Checks `input` (an `otpauth://totp/` URI, or a bare base32 secret that
    /// may be lower case, padded or grouped with spaces) with ``OneTimePassword``
    /// and returns what to store: the URI as given (surrounding whitespace
    /// trimmed), or for a bare secret `otpauth://totp/ACCOUNT?secret=BASE32`.
    /// A pure function of its input (a fuzz target calls it).
    /// - Parameters:
    ///   - input: the seed's bytes.
    ///   - account: the account name put in a URI made from a bare secret.
    /// - Throws: ``SeedError``.
    public static func normalized(_ input: SecretBytes, account: String) throws(SeedError) -> SecretBytes {
        guard input.count <= Item.maxOneTimePasswordBytes, input.isValidUTF8 else { throw .notText }
        var bytes: [UInt8] = input.withUnsafeBytes { raw in
            var slice = raw[...]
            let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            while let first = slice.first, blank(first) { slice = slice.dropFirst() }
            while let last = slice.last, blank(last) { slice = slice.dropLast() }
            return Array(slice)
        }
        defer { bytes.wipe() }
        let otp: OneTimePassword
        do { otp = try OneTimePassword(parsing: bytes) } catch { throw .unreadable(error) }
        guard otp.period != nil else { throw .counterBased }
        if bytes.starts(with: Array("otpauth://".utf8)) || bytes.starts(with: Array("OTPAUTH://".utf8)) {
            return SecretBytes(bytes)
        }
        var label = account.percentEncoded(allowing: TextScalars.isAlphanumeric)
        if label.isEmpty { label = "fob" }
        var uri =
            Array("otpauth://totp/\(label)?secret=".utf8)
            + Array(Base32.encode(otp.secret).utf8.filter { $0 != UInt8(ascii: "=") })
        defer { uri.wipe() }
        do { _ = try OneTimePassword(parsing: uri) } catch { throw .unreadable(error) }
        guard uri.count <= Item.maxOneTimePasswordBytes else { throw .notText }
        return SecretBytes(uri)
    }
}

/// One field of an item for `fob get --field`.
enum ItemFieldOutput {
    /// The item's one-time-password generator.
    /// - Throws: `.itemNotFound` when it has no seed; `.decode` when the stored seed cannot be read.
    static func oneTimePassword(of item: Item) throws(KeychainError) -> OneTimePassword {
        guard let seed = item.oneTimePassword else { throw .itemNotFound("one-time seed of \(item.displayName)") }
        var bytes = seed.unsafeArray
        defer { bytes.wipe() }
        do {
            return try OneTimePassword(parsing: bytes)
        } catch {
            throw .decode("the one-time seed of \(item.displayName) cannot be read: \(error.description)")
        }
    }

    /// The bytes of field `name` of `item`: `user`, `url`, `notes`, `totp`
    /// (the code at `now`), or the first custom field of that name.
    /// - Important: the result may hold a hidden value; the caller wipes it.
    /// - Throws: `.itemNotFound` naming the field when the item lacks it.
    static func value(of name: String, in item: Item, now: Date) throws(KeychainError) -> [UInt8] {
        func missing() -> KeychainError { .itemNotFound("field \"\(displaySafe(name))\" of \(item.displayName)") }
        switch name {
        case "user": return Array(item.account.utf8)
        case "url":
            guard let url = item.url else { throw missing() }
            return Array(url.utf8)
        case "notes":
            guard let notes = item.notes else { throw missing() }
            return Array(notes.utf8)
        case "totp": return Array(try oneTimePassword(of: item).code(at: now).utf8)
        default:
            guard let field = item.customFields.first(where: { $0.name == name }) else { throw missing() }
            return field.value.withUnsafeBytes { Array($0) }
        }
    }
}
