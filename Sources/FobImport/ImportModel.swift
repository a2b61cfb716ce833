import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// The formats `fob import` reads (the command line's `FORMAT` words).
public enum ImportFormat: String, Sendable, CaseIterable {
    case pass
    case keepassxcCSV = "keepassxc-csv"
    case keepassxcXML = "keepassxc-xml"
    case bitwardenJSON = "bitwarden-json"
    case bitwardenCSV = "bitwarden-csv"
    case chromeCSV = "chrome-csv"
    case firefoxCSV = "firefox-csv"
    case onePasswordCSV = "1password-csv"
    case fobCSV = "fob-csv"
    case fobJSON = "fob-json"
    case fobVault = "fob-vault"
}

/// One entry read from an export: the item it becomes and where it came from.
public struct ImportEntry: Sendable {
    /// The item, with its secret. Its dates are the source's when
    /// ``datesKnown``, otherwise they are set when the import is planned.
    public var item: Item
    /// Whether the source gave the creation and modification dates.
    public var datesKnown: Bool
    /// Where the entry is in the source, for messages: `line 4`, `entry 2`, `mail/ana.gpg`.
    public var origin: String

    /// - Parameters:
    ///   - item: the item with its secret.
    ///   - datesKnown: whether the item's dates are the source's.
    ///   - origin: where the entry is in the source.
    public init(item: Item, datesKnown: Bool, origin: String) {
        self.item = item
        self.datesKnown = datesKnown
        self.origin = origin
    }
}

/// What a reader found in an export.
public struct ImportRead: Sendable {
    /// The entries that can be imported, in the source's order.
    public var entries: [ImportEntry] = []
    /// What the source held that Fob does not keep (attachments, passkeys,
    /// password history …), one line per entry and thing: `line 4 ("mail"): 1 attachment`.
    public var notKept: [String] = []
    /// Entries that could not be imported at all, with the reason.
    public var unusable: [String] = []

    /// - Parameters: as the properties (empty by default).
    public init(entries: [ImportEntry] = [], notKept: [String] = [], unusable: [String] = []) {
        self.entries = entries
        self.notKept = notKept
        self.unusable = unusable
    }
}

extension ImportRead {
    /// The hidden custom field that keeps a counter-based (HOTP) seed.
    public static let counterSeedField = "HOTP"

    /// Moves every counter-based (`otpauth://hotp/`) seed out of the
    /// one-time seed into the hidden custom field ``counterSeedField``, and
    /// says so in ``notKept``. Fob shows time-based codes only (as `fob totp
    /// set` refuses HOTP): an HOTP seed kept as the one-time seed would show
    /// the same code for ever.
    public mutating func keepCounterBasedSeedsAsFields() {
        for index in entries.indices {
            guard let seed = entries[index].item.oneTimePassword, let text = seed.unsafeString,
                let parsed = try? OneTimePassword(parsing: text.trimmingSpacesAndNewlines()),
                case .hotp = parsed.kind
            else { continue }
            entries[index].item.oneTimePassword = nil
            entries[index].item.customFields.append(
                CustomField(name: ImportRead.counterSeedField, value: seed, isHidden: true))
            notKept.append(
                "\(ImportText.place(entries[index].origin, entries[index].item.service)): a counter-based (HOTP) "
                    + "one-time seed, which Fob does not show codes for, kept as the hidden field \"\(ImportRead.counterSeedField)\""
            )
        }
    }
}

/// Why an export cannot be read. Messages name the place (line, entry) and
/// the cause, never a secret.
public enum ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not in the expected encoding: the line and the encoding.
    case encoding(line: Int, String)
    /// The file is not well formed (CSV quoting, XML, JSON, a truncated file …).
    case malformed(String)
    /// The export is password-protected (encrypted).
    case encrypted(String)
    /// A CSV header lacks columns the format needs.
    case missingColumns([String])
    /// A value has the wrong type or is out of range: where and what.
    case wrongType(String)
    /// Nothing in the source can be imported.
    case nothingToImport(String)
    /// Reading the source failed (a file, a directory, `gpg`).
    case io(String)

    public var description: String {
        switch self {
        case .encoding(let line, let text): return "line \(line): \(text)"
        case .malformed(let text): return text
        case .encrypted(let text):
            return "\(text) is encrypted (password-protected); export it unencrypted and import that file"
        case .missingColumns(let names):
            return "the header lacks the column\(names.count == 1 ? "" : "s") "
                + names.map { "\"\($0)\"" }.joined(separator: ", ")
        case .wrongType(let text): return text
        case .nothingToImport(let text): return "nothing could be imported: \(text)"
        case .io(let text): return text
        }
    }
}

/// Helpers the readers share.
enum ImportText {
    /// `value` with surrounding whitespace removed, or `nil` when that leaves nothing.
    static func nonEmpty(_ value: String?) -> String? {
        guard let value else { return nil }
        return value.trimmingSpacesAndNewlines().isEmpty ? nil : value
    }

    /// The host of a URL (`https://mail.example.com/x` → `mail.example.com`),
    /// or the text itself when it has none.
    static func host(of url: String) -> String {
        if let host = URLComponents(string: url)?.host, !host.isEmpty { return host }
        if let host = URLComponents(string: "https://" + url)?.host, !host.isEmpty, !url.contains("://") { return host }
        return url
    }

    /// `entry 3 ("name")` for messages.
    static func place(_ origin: String, _ name: String) -> String {
        name.isEmpty ? origin : "\(origin) (\"\(displaySafe(name))\")"
    }
}
