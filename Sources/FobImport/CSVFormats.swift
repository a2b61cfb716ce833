import FobStore
import FobSystem
import FoundationEssentials

/// Readers of the CSV exports. Each is a pure function from the file's
/// bytes to the entries and a report (a fuzz target); columns are found by
/// their header names, so extra and reordered columns are fine, but every
/// column the format's exporter always writes is required: a file without
/// one is another format (or damaged) and is refused, naming the column.
public enum CSVFormats {
    /// KeePassXC's CSV (`keepassxc-cli export -f csv`, KeePassXC 2.7):
    /// `"Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"`.
    /// - Throws: ``ImportError`` from decoding, CSV parsing or a missing column.
    public static func keepassxc(_ bytes: [UInt8], encoding: String? = nil) throws(ImportError) -> ImportRead {
        try entries(
            bytes, encoding: encoding, required: ["Group", "Title", "Username", "Password", "URL", "Notes"],
            optional: ["TOTP", "Last Modified", "Created"],
            texts: [
                \.title: "Title", \.username: "Username", \.password: "Password", \.url: "URL", \.notes: "Notes",
                \.totp: "TOTP",
            ]
        ) { f, b in
            b.label = f["Group"].map(groupPath)
            b.created = f["Created"].flatMap(ImportDates.iso8601)
            b.modified = f["Last Modified"].flatMap(ImportDates.iso8601)
            return nil
        }
    }

    /// Bitwarden's CSV export (Bitwarden Help Center, "Condition a Bitwarden
    /// .csv file"): `folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp`;
    /// `type` is `login` or `note`; `fields` holds `name: value` lines; `login_uri`
    /// may hold several URIs separated by commas.
    /// - Throws: ``ImportError``.
    public static func bitwarden(_ bytes: [UInt8], encoding: String? = nil) throws(ImportError) -> ImportRead {
        try entries(
            bytes, encoding: encoding,
            required: [
                "folder", "type", "name", "notes", "fields", "login_uri", "login_username", "login_password",
                "login_totp",
            ],
            optional: [],
            texts: [
                \.title: "name", \.username: "login_username", \.password: "login_password", \.notes: "notes",
                \.totp: "login_totp", \.label: "folder",
            ]
        ) { f, b in
            let uris = (f["login_uri"] ?? "").split(separator: ",").map { $0.trimmingSpaces() }
                .filter { !$0.isEmpty }
            b.url = uris.first
            for (i, uri) in uris.dropFirst().enumerated() {
                b.fields.append(CustomField(name: "URI \(i + 2)", text: uri))
            }
            for line in (f["fields"] ?? "").split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard let name = parts.first.map(String.init), !name.isEmpty else { continue }
                let value = parts.count > 1 ? String(parts[1].drop { $0 == " " }) : ""
                b.fields.append(CustomField(name: name, text: value))
            }
            switch f["type"]?.lowercased() {
            case "note":
                b.kind = .note
                b.password = b.notes
                b.notes = nil
            case "login", nil, "": break
            case let other?:
                return "type \"\(displaySafe(other))\" is neither login nor note"
            }
            return nil
        }
    }

    /// Chrome's password CSV (Settings › Passwords › Export; also Edge and
    /// Brave, which share Chromium's exporter): `name,url,username,password,note`
    /// (`note` since Chrome 119).
    /// - Throws: ``ImportError``.
    public static func chrome(_ bytes: [UInt8], encoding: String? = nil) throws(ImportError) -> ImportRead {
        try entries(
            bytes, encoding: encoding, required: ["name", "url", "username", "password"], optional: ["note"],
            texts: [\.title: "name", \.url: "url", \.username: "username", \.password: "password", \.notes: "note"])
    }

    /// Firefox's logins CSV (about:logins › Export Logins):
    /// `"url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed","timePasswordChanged"`,
    /// times in milliseconds since 1970.
    /// - Throws: ``ImportError``.
    public static func firefox(_ bytes: [UInt8], encoding: String? = nil) throws(ImportError) -> ImportRead {
        try entries(
            bytes, encoding: encoding,
            required: [
                "url", "username", "password", "httpRealm", "formActionOrigin", "timeCreated", "timePasswordChanged",
            ],
            optional: [],
            texts: [\.url: "url", \.username: "username", \.password: "password"]
        ) { f, b in
            if let realm = ImportText.nonEmpty(f["httpRealm"]) {
                b.fields.append(CustomField(name: "httpRealm", text: realm))
            }
            if let form = ImportText.nonEmpty(f["formActionOrigin"]) {
                b.fields.append(CustomField(name: "formActionOrigin", text: form))
            }
            b.created = f["timeCreated"].flatMap(ImportDates.milliseconds)
            b.modified = f["timePasswordChanged"].flatMap(ImportDates.milliseconds)
            return nil
        }
    }

    /// 1Password 8's CSV export (File › Export, CSV):
    /// `Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes`.
    /// - Throws: ``ImportError``.
    public static func onePassword(_ bytes: [UInt8], encoding: String? = nil) throws(ImportError) -> ImportRead {
        try entries(
            bytes, encoding: encoding, required: ["Title", "Url", "Username", "Password", "OTPAuth", "Tags", "Notes"],
            optional: [],
            texts: [
                \.title: "Title", \.username: "Username", \.password: "Password", \.totp: "OTPAuth", \.notes: "Notes",
                \.label: "Tags",
            ]
        ) { f, b in
            b.url = f["Url"]
            return nil
        }
    }

    /// Fob's own CSV (`fob export --format csv`, ``CSVExport``), read back
    /// as it was written: every column of ``CSVExport/columns`` is
    /// required; the `'` the export puts before a cell that could start a
    /// formula is removed; a `base64:` secret is decoded; the kind, seed,
    /// label and dates are kept. CSV holds no custom fields or Keychain
    /// attributes (the export warns), so the items are generic passwords.
    /// - Throws: ``ImportError`` from decoding, CSV parsing or a missing column.
    public static func fob(_ bytes: [UInt8], encoding: String? = nil) throws(ImportError) -> ImportRead {
        let table = try CSVReader.table(TextDecoding.utf8(bytes, encoding: encoding))
        let c = try table.columns(required: CSVExport.columns)
        var read = ImportRead()
        read.entries.reserveCapacity(table.records.count)
        for record in table.records {
            let f = Fields(record.fields, c)
            let text = { (name: String) in unmarked(f[name] ?? "") }
            let optional = { (name: String) -> String? in text(name).isEmpty ? nil : text(name) }
            let origin = "line \(record.line)"
            let place = ImportText.place(origin, text("service"))
            guard let kind = ItemKind(rawValue: text("kind")) else {
                read.unusable.append(
                    "\(place): kind \"\(displaySafe(text("kind")))\" is not password, token, oauth or note")
                continue
            }
            guard let created = ImportDates.iso8601(text("created")),
                let modified = ImportDates.iso8601(text("modified"))
            else {
                read.unusable.append("\(place): created and modified must be ISO 8601 dates")
                continue
            }
            guard let secret = secret(text("password")) else {
                read.unusable.append("\(place): the password after \"\(CSVExport.base64Prefix)\" is not base64")
                continue
            }
            let item = Item(
                service: text("service"), account: text("account"), label: optional("label"),
                comment: optional("notes"), kind: kind, created: created, modified: modified, url: optional("url"),
                oneTimePassword: optional("totp").map { SecretBytes(utf8: $0) }, secret: secret)
            read.entries.append(ImportEntry(item: item, datesKnown: true, origin: origin))
        }
        return read
    }

    /// A cell without the `'` ``CSVExport`` puts before text that could
    /// start a formula (or that begins with `'`): exactly one is removed.
    static func unmarked(_ cell: String) -> String {
        cell.hasPrefix("'") ? String(cell.dropFirst()) : cell
    }

    /// The secret of a `password` cell: the bytes after `base64:`, decoded,
    /// or the text's UTF-8; `nil` for bad base64.
    static func secret(_ cell: String) -> SecretBytes? {
        guard cell.hasPrefix(CSVExport.base64Prefix) else { return SecretBytes(utf8: cell) }
        guard var data = Data(base64Encoded: String(cell.dropFirst(CSVExport.base64Prefix.count))) else { return nil }
        defer { data.resetBytes(in: 0..<data.count) }
        return SecretBytes(data)
    }

    /// Reads `bytes` as CSV (see ``CSVReader``) whose header has the
    /// `required` columns, and makes one entry a record.
    /// - Parameters:
    ///   - texts: the entry's text members each set from the named column.
    ///   - fill: then sets the rest of the entry from the record's fields,
    ///     or returns why the record is unusable (reported with its line).
    /// - Throws: ``ImportError`` from decoding, CSV parsing or a missing column.
    private static func entries(
        _ bytes: [UInt8], encoding: String?, required: [String], optional: [String],
        texts: KeyValuePairs<WritableKeyPath<EntryBuilder, String?>, String>,
        _ fill: (Fields, inout EntryBuilder) -> String? = { _, _ in nil }
    ) throws(ImportError) -> ImportRead {
        let table = try CSVReader.table(TextDecoding.utf8(bytes, encoding: encoding))
        let columns = try table.columns(required: required, optional: optional)
        var read = ImportRead()
        read.entries.reserveCapacity(table.records.count)
        for record in table.records {
            var builder = EntryBuilder(origin: "line \(record.line)")
            let fields = Fields(record.fields, columns)
            for (member, column) in texts { builder[keyPath: member] = fields[column] }
            if let unusable = fill(fields, &builder) {
                read.unusable.append("line \(record.line): \(unusable)")
            } else {
                builder.build(into: &read)
            }
        }
        return read
    }

    /// KeePassXC writes the group path from the root group (named `Root` or
    /// `Passwords`), such as `Passwords/Email`; the label is the path below it.
    static func groupPath(_ path: String) -> String {
        guard let slash = path.firstIndex(of: "/") else { return "" }
        return String(path[path.index(after: slash)...])
    }

    /// One record's fields by column name; a short record's missing fields are empty.
    struct Fields {
        let values: [String]
        let columns: [String: Int]
        init(_ values: [String], _ columns: [String: Int]) {
            self.values = values
            self.columns = columns
        }
        subscript(name: String) -> String? {
            guard let i = columns[name] else { return nil }
            return i < values.count ? values[i] : ""
        }
    }
}
