import FobStore
import FobTokens
import FoundationEssentials

/// Bitwarden's unencrypted JSON export (Bitwarden Help Center, "Export Vault
/// Data" and "Condition a Bitwarden .json file"):
/// `{"encrypted":false,"folders":[{"id","name"}],"items":[…]}`; each item has
/// `type` (1 login, 2 secure note, 3 card, 4 identity, 5 SSH key), `name`,
/// `notes`, `folderId`, `fields` (`name`, `value`, `type` 0 text, 1 hidden,
/// 2 boolean, 3 linked), `creationDate`, `revisionDate`, and `login`
/// (`uris[].uri`, `username`, `password`, `totp`, `fido2Credentials`),
/// `card` or `identity`.
public enum BitwardenJSON {
    /// Reads a Bitwarden JSON export.
    ///
    /// A pure function (a fuzz target).
    /// - Parameter bytes: UTF-8 text.
    /// - Throws: `.encrypted` for a password-protected or account-encrypted
    ///   export; `.malformed` for text that is not JSON or not a Bitwarden
    ///   export; `.wrongType` naming the item and member with a value of the wrong type.
    public static func read(_ bytes: [UInt8]) throws(ImportError) -> ImportRead {
        let (items, folders) = try contents(bytes)
        var read = ImportRead()
        for (i, value) in items.enumerated() {
            try readItem(value, index: i, folders: folders, into: &read)
        }
        return read
    }

    /// The export's items and its folders' names by id.
    /// - Throws: as ``read(_:)``.
    static func contents(_ bytes: [UInt8]) throws(ImportError) -> (items: [JSONValue], folders: [String: String]) {
        let root: JSONValue
        do {
            root = try JSONText.parse(bytes)
        } catch {
            throw .malformed("not JSON, or a truncated file")
        }
        guard let top = root.object else {
            throw .malformed("not a Bitwarden export: the top level is not an object")
        }
        if Self.isTrue(top["encrypted"]) {
            throw .encrypted("this Bitwarden export")
        }
        if top["encKeyValidation_DO_NOT_EDIT"] != nil || Self.isTrue(top["passwordProtected"]) {
            throw .encrypted("this Bitwarden export")
        }
        guard let itemsValue = top["items"] else { throw .malformed("not a Bitwarden export: no \"items\"") }
        guard let items = itemsValue.array else { throw .wrongType("items: expected an array") }
        var folders: [String: String] = [:]
        if let list = top["folders"] {
            guard let list = list.array else { throw .wrongType("folders: expected an array") }
            for (i, value) in list.enumerated() {
                let folder = try object(value, "folders[\(i)]")
                if let id = try string(folder, "id", "folders[\(i)]"),
                    let name = try string(folder, "name", "folders[\(i)]")
                {
                    folders[id] = name
                }
            }
        }
        return (items, folders)
    }

    /// Reads `items[index]` into `read`: an entry, or a line saying why it is unusable.
    static func readItem(
        _ value: JSONValue, index i: Int, folders: [String: String], into read: inout ImportRead
    ) throws(ImportError) {
        let at = "items[\(i)]"
        let item = try object(value, at)
        var b = EntryBuilder(origin: "entry \(i + 1)")
        b.title = try string(item, "name", at)
        b.notes = try string(item, "notes", at)
        b.label = try string(item, "folderId", at).flatMap { folders[$0] }
        b.created = try string(item, "creationDate", at).flatMap(ImportDates.iso8601)
        b.modified = try string(item, "revisionDate", at).flatMap(ImportDates.iso8601)
        let place = ImportText.place(b.origin, b.title ?? "")
        try readFields(item, at: at, place: place, into: &b, notKept: &read.notKept)
        if let history = item["passwordHistory"]?.array, !history.isEmpty {
            read.notKept.append("\(place): the password history (\(history.count))")
        }
        if let attachments = item["attachments"]?.array, !attachments.isEmpty {
            read.notKept.append("\(place): \(attachments.count) attachment\(attachments.count == 1 ? "" : "s")")
        }
        guard let type = try number(item, "type", at) else { throw .wrongType("\(at).type: missing") }
        switch type {
        case 1:
            try readLogin(item, at: at, place: place, into: &b, notKept: &read.notKept)
        case 2:
            b.kind = .note
            b.password = b.notes
            b.notes = nil
        case 3, 4:
            let (member, hidden): (String, Set<String>) =
                type == 3
                ? ("card", ["number", "code"]) : ("identity", ["ssn", "passportNumber", "licenseNumber"])
            b.kind = .note
            b.password = b.notes
            b.notes = nil
            let details = try optionalObject(item[member], "\(at).\(member)")
            for key in details.keys.sorted() {
                guard let value = try string(details, key, "\(at).\(member)"), !value.isEmpty else { continue }
                b.fields.append(CustomField(name: key, text: value, isHidden: hidden.contains(key)))
            }
        default:
            read.unusable.append("\(place): item type \(type) (such as an SSH key) is not imported")
            return
        }
        b.build(into: &read)
    }

    /// An item's custom `fields` (linked ones are reported as not kept).
    static func readFields(
        _ item: [String: JSONValue], at: String, place: String, into b: inout EntryBuilder, notKept: inout [String]
    ) throws(ImportError) {
        if let fields = item["fields"], !fields.isNull {
            guard let fields = fields.array else { throw .wrongType("\(at).fields: expected an array") }
            for (j, f) in fields.enumerated() {
                let field = try object(f, "\(at).fields[\(j)]")
                let name = try string(field, "name", "\(at).fields[\(j)]") ?? ""
                let value = try string(field, "value", "\(at).fields[\(j)]") ?? ""
                let type = try number(field, "type", "\(at).fields[\(j)]") ?? 0
                if type == 3 {
                    notKept.append("\(place): the linked field \"\(displaySafe(name))\"")
                    continue
                }
                b.fields.append(
                    CustomField(name: name.isEmpty ? "Field \(j + 1)" : name, text: value, isHidden: type == 1))
            }
        }
    }

    /// A login item's `login`: user name, password, one-time seed, URIs
    /// (the first is the URL, the others custom fields); passkeys are reported as not kept.
    static func readLogin(
        _ item: [String: JSONValue], at: String, place: String, into b: inout EntryBuilder, notKept: inout [String]
    ) throws(ImportError) {
        let login = try optionalObject(item["login"], "\(at).login")
        b.username = try string(login, "username", "\(at).login")
        b.password = try string(login, "password", "\(at).login")
        b.totp = try string(login, "totp", "\(at).login")
        if let uris = login["uris"], !uris.isNull {
            guard let uris = uris.array else { throw .wrongType("\(at).login.uris: expected an array") }
            for (j, u) in uris.enumerated() {
                guard let uri = try string(object(u, "\(at).login.uris[\(j)]"), "uri", "\(at).login.uris[\(j)]")
                else { continue }
                if b.url == nil {
                    b.url = uri
                } else {
                    b.fields.append(CustomField(name: "URI \(j + 1)", text: uri))
                }
            }
        }
        if let passkeys = login["fido2Credentials"]?.array, !passkeys.isEmpty {
            notKept.append("\(place): \(passkeys.count) passkey\(passkeys.count == 1 ? "" : "s")")
        }
    }

    static func object(_ value: JSONValue, _ at: String) throws(ImportError) -> [String: JSONValue] {
        guard let object = value.object else { throw .wrongType("\(at): expected an object") }
        return object
    }

    /// Whether a flag is set: `true`, or the number 1 as some writers put it.
    static func isTrue(_ value: JSONValue?) -> Bool {
        value?.bool == true || value?.number == 1
    }

    static func optionalObject(_ value: JSONValue?, _ at: String) throws(ImportError) -> [String: JSONValue] {
        guard let value, !value.isNull else { return [:] }
        return try object(value, at)
    }

    static func string(_ object: [String: JSONValue], _ key: String, _ at: String) throws(ImportError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.string else { throw .wrongType("\(at).\(key): expected text") }
        return text
    }

    static func number(_ object: [String: JSONValue], _ key: String, _ at: String) throws(ImportError) -> Int? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let number = value.number, let int = Int(exactly: number) else {
            throw .wrongType("\(at).\(key): expected a number")
        }
        return int
    }
}
