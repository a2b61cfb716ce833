import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// Builds an ``ImportEntry`` from the fields every format has, the same way for all.
struct EntryBuilder {
    var origin: String
    var title: String?
    var username: String?
    var password: String?
    var url: String?
    var notes: String?
    var totp: String?
    var label: String?
    var kind: ItemKind = .password
    var created: Date?
    var modified: Date?
    var fields: [CustomField] = []

    init(origin: String) { self.origin = origin }

    /// The entry, or `nil` (with the reason in `read.unusable`) when it has
    /// nothing to keep; what cannot be kept goes to `read.notKept`.
    func build(into read: inout ImportRead) {
        let url = ImportText.nonEmpty(self.url)
        let service = ImportText.nonEmpty(title) ?? url.map(ImportText.host(of:)) ?? ""
        let account = username ?? ""
        let secretText = password ?? ""
        if service.isEmpty, account.isEmpty, secretText.isEmpty, ImportText.nonEmpty(notes) == nil, fields.isEmpty {
            read.unusable.append("\(origin): no name, user, password, URL or notes")
            return
        }
        var extra = fields
        var seed: SecretBytes?
        if let totp = ImportText.nonEmpty(totp) {
            if let uri = EntryBuilder.seed(totp, account: account, issuer: service) {
                seed = SecretBytes(utf8: uri)
            } else {
                extra.append(CustomField(name: "TOTP", text: totp, isHidden: true))
                read.notKept.append(
                    "\(ImportText.place(origin, service)): a one-time-password seed Fob cannot read, kept as the hidden field \"TOTP\""
                )
            }
        }
        if extra.count > Item.maxCustomFields {
            read.notKept.append(
                "\(ImportText.place(origin, service)): \(extra.count - Item.maxCustomFields) custom fields past \(Item.maxCustomFields)"
            )
            extra = Array(extra.prefix(Item.maxCustomFields))
        }
        let now = Date()
        let item = Item(
            service: service, account: account, label: ImportText.nonEmpty(label), comment: ImportText.nonEmpty(notes),
            kind: kind, created: created ?? modified ?? now, modified: modified ?? created ?? now,
            url: url, oneTimePassword: seed, customFields: extra, secret: SecretBytes(utf8: secretText))
        read.entries.append(ImportEntry(item: item, datesKnown: created != nil || modified != nil, origin: origin))
    }

    /// An `otpauth://` URI for a seed written as a URI or as bare base32
    /// (what Bitwarden, KeePassXC and 1Password write), or `nil` when it is neither.
    static func seed(_ text: String, account: String, issuer: String) -> String? {
        let trimmed = text.trimmingSpacesAndNewlines()
        guard (try? OneTimePassword(parsing: trimmed)) != nil else { return nil }
        if trimmed.lowercased().hasPrefix("otpauth://") { return trimmed }
        let secret = trimmed.uppercased().filter { !$0.isWhitespace && $0 != "=" }
        let enc = { (s: String) in s.percentEncoded(allowing: { $0 != ":" && TextScalars.isAlphanumeric($0) }) }
        let label = issuer.isEmpty ? enc(account) : enc(issuer) + ":" + enc(account)
        return "otpauth://totp/\(label)?secret=\(secret)" + (issuer.isEmpty ? "" : "&issuer=\(enc(issuer))")
    }
}

/// Dates as exports write them.
enum ImportDates {
    /// RFC 3339 / ISO 8601 (`2024-05-01T12:00:00Z`, `…00.123Z`, `…+02:00`,
    /// or a space for the `T`), or `nil`.
    static func iso8601(_ text: String) -> Date? {
        let s = text.trimmingSpaces()
        let b = Array(s.utf8)
        guard b.count >= 19 else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let y = num(0..<4), b[4] == 45, let mo = num(5..<7), b[7] == 45, let d = num(8..<10),
            b[10] == 84 || b[10] == 116 || b[10] == 32, let h = num(11..<13), b[13] == 58, let mi = num(14..<16),
            b[16] == 58, let se = num(17..<19), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, se < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
        }
        var offset = 0
        if i < b.count {
            if b[i] == 90 || b[i] == 122 {
                i += 1
            } else if b[i] == 43 || b[i] == 45, i + 6 <= b.count, let oh = num(i + 1..<i + 3),
                b[i + 3] == 58, let om = num(i + 4..<i + 6)
            {
                offset = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
                i += 6
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = Double(days * 86_400 + h * 3600 + mi * 60 + se - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// Milliseconds since 1970 written as an integer (Firefox), or `nil`.
    static func milliseconds(_ text: String) -> Date? {
        guard let ms = Int64(text.trimmingSpaces()), ms > 0, ms < 32_503_680_000_000 else {
            return nil
        }
        return Date(timeIntervalSince1970: Double(ms) / 1000)
    }
}
