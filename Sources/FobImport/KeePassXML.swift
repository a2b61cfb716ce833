import FobStore
import FoundationEssentials

/// KeePassXC's XML export (`keepassxc-cli export -f xml`): the KeePass 2
/// XML document (<https://keepass.info/help/kb/kdbx_4.html>), read from
/// the events of an ``XMLEventParser`` (Foundation's `XMLParser`, in the
/// `fob-xml` helper when `fob` runs it).
///
/// Each `Entry` of a `Group` (not those under `History`, nor the recycle
/// bin's) becomes an item: `Title`, `UserName`, `Password`, `URL`, `Notes`,
/// `otp` (an `otpauth://` URI), every other `String` a custom field (hidden
/// when `ProtectInMemory="True"`), `Times/CreationTime` and
/// `LastModificationTime` the dates, the group path below the root the label.
public enum KeePassXML {
    /// Reads a KeePass XML export.
    /// - Throws: `.encoding` for text that is not UTF-8; `.malformed` naming
    ///   the line of an XML error (or a truncated file), or a document that is
    ///   not a KeePass export or declares a document type or entities; `.encrypted` when values are `Protected="True"`
    ///   (encrypted with the database's inner stream, as KeePass 2's own XML
    ///   export without decryption writes them).
    ///
    /// A pure function of the bytes and the parser's events (a fuzz target).
    /// - Parameters:
    ///   - bytes: the export file.
    ///   - parser: turns the document into events: ``HelperXMLParser`` in
    ///     `fob`, FobXML's in-process parser in tests and fuzzing.
    /// - Throws: also `.io` when the parser could not run.
    public static func read(_ bytes: [UInt8], parser: XMLEventParser) throws(ImportError) -> ImportRead {
        let text = try utf8Document(bytes)
        // KeePass exports declare no entities; refusing them rules out entity expansion attacks.
        if text.firstRange(of: Array("<!ENTITY".utf8)) != nil || text.firstRange(of: Array("<!DOCTYPE".utf8)) != nil {
            throw .malformed("not a KeePass XML export: it declares a document type or entities")
        }
        try refuseBrokenDeclaration(text)
        let parsed = try parser(text)
        let handler = Handler()
        for event in parsed.events {
            switch event {
            case .start(let name, let attributes): handler.start(name, attributes: attributes)
            case .text(let piece): handler.text += piece
            case .end(let name): handler.end(name)
            }
            if handler.failure != nil { break }
        }
        if let error = handler.failure { throw error }
        if let line = parsed.errorLine {
            let sawElement = parsed.events.contains { if case .start = $0 { return true } else { return false } }
            if !sawElement {
                throw .malformed("line \(line): not an XML document; is it a KeePassXC XML export?")
            }
            throw .malformed("line \(line): not well-formed XML (is the file truncated?)")
        }
        guard handler.sawKeePassFile else { throw .malformed("not a KeePass XML export: no KeePassFile element") }
        return handler.read
    }

    /// The document as UTF-8 without an XML declaration when it was in
    /// another encoding: the encoding its declaration names (`encoding=`,
    /// XML 1.0 §4.3.3), UTF-16 when it starts with a byte-order mark, else
    /// UTF-8. KeePassXC writes UTF-8; another encoding comes from an export
    /// saved again by an editor. The declaration is dropped after
    /// transcoding, since it would name the old encoding.
    /// - Throws: `.encoding` for bytes not valid in that encoding, or an
    ///   encoding Fob does not know (naming it).
    static func utf8Document(_ bytes: [UInt8]) throws(ImportError) -> [UInt8] {
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            return dropDeclaration(try TextDecoding.utf8(bytes, encoding: "utf-16"))
        }
        if let declared = declaredEncoding(bytes), !["utf-8", "utf8"].contains(declared.lowercased()) {
            guard TextDecoding.encodings[declared.lowercased()] != nil else {
                throw .encoding(
                    line: 1,
                    "the XML declares the encoding \"\(TextDecoding.displaySafeName(declared))\", which Fob cannot read; "
                        + "known: " + TextDecoding.encodings.keys.sorted().joined(separator: ", "))
            }
            return dropDeclaration(try TextDecoding.utf8(bytes, encoding: declared))
        }
        do {
            return try TextDecoding.utf8(bytes)
        } catch .encoding(let line, _) {
            throw .encoding(line: line, "the text is not valid UTF-8, and its XML declaration names no other encoding")
        }
    }

    /// What starts a document: no XML declaration, a broken one, or one
    /// whose pseudo-attributes (between `<?xml` and `?>`) hold no `<`, `>`
    /// or `?` (XML 1.0 §2.8), with the index after its `?>`.
    enum Declaration: Equatable {
        case none
        case broken
        case found(attributes: Range<Int>, end: Int)
    }

    /// The XML declaration at `start` of `text`. A `?>` that follows a
    /// `<`, `>` or other `?` belongs to something else, as in
    /// `<?xml version="1.0"?x><?xml?>` (found by the fuzz target): broken.
    static func declaration(in text: [UInt8], at start: Int) -> Declaration {
        guard text.count - start >= 5, text[start..<(start + 5)].elementsEqual("<?xml".utf8) else { return .none }
        var i = start + 5
        while i < text.count {
            switch text[i] {
            case UInt8(ascii: "?"):
                guard i + 1 < text.count, text[i + 1] == UInt8(ascii: ">") else { return .broken }
                return .found(attributes: (start + 5)..<i, end: i + 2)
            case UInt8(ascii: "<"), UInt8(ascii: ">"):
                return .broken
            default:
                i += 1
            }
        }
        return .broken
    }

    /// Where a document's text starts: after a UTF-8 byte-order mark.
    private static func textStart(_ bytes: [UInt8]) -> Int { bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0 }

    /// The `encoding` of an XML declaration at the start of `bytes`, if any
    /// (read as ASCII, which every encoding Fob reads without a byte-order
    /// mark agrees with for the declaration's characters).
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        guard case .found(let attributes, _) = declaration(in: bytes, at: textStart(bytes)) else { return nil }
        let declaration = String(decoding: bytes[attributes].filter { $0 < 0x80 }, as: UTF8.self)
        guard let key = declaration.firstRange(of: "encoding") else { return nil }
        var rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        let value = rest.dropFirst().prefix { $0 != quote }
        return value.isEmpty ? nil : String(value)
    }

    /// `text` without its byte-order mark and a leading well-formed XML
    /// declaration (a broken one stays, for the checks to refuse).
    static func dropDeclaration(_ text: [UInt8]) -> [UInt8] {
        let start = textStart(text)
        if case .found(_, let end) = declaration(in: text, at: start) { return Array(text[end...]) }
        return Array(text[start...])
    }

    /// Refuses a broken XML declaration at the start (one whose `?>` is not
    /// where it belongs, such as `<?xml version="1.0"?x><?xml?>`), and one
    /// without its version (XML 1.0 §2.8; `<?xml?>`), before libxml2 sees
    /// the document: found by the `import-keepassxc-xml` fuzz target.
    /// Processing instructions elsewhere are libxml2's to read (KeePassXC
    /// writes none; the parser hands them to no one).
    /// - Throws: `.malformed` naming line 1.
    static func refuseBrokenDeclaration(_ text: [UInt8]) throws(ImportError) {
        var i = 0
        while i < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[i]) { i += 1 }
        switch declaration(in: text, at: i) {
        case .none:
            return
        case .broken:
            throw .malformed("line 1: a broken XML declaration")
        case .found(let attributes, _):
            guard text[attributes].firstRange(of: Array("version".utf8)) != nil else {
                throw .malformed("line 1: an XML declaration without a version")
            }
        }
    }

    /// Builds entries from the events, in document order.
    final class Handler {
        var read = ImportRead()
        var failure: ImportError?
        var sawKeePassFile = false
        var path: [String] = []
        var text = ""
        var groups: [(uuid: String, name: String)] = []
        var recycleBin = ""
        var historyDepth = 0
        var entry: EntryState?
        var entryCount = 0

        struct EntryState {
            var strings: [(key: String, value: String, hidden: Bool)] = []
            var key = ""
            var hidden = false
            var attachments = 0
            var created: Date?
            var modified: Date?
            var inRecycleBin = false
        }

        func start(_ name: String, attributes: [String: String]) {
            if path.isEmpty {
                guard name == "KeePassFile" else {
                    failure = .malformed("not a KeePass XML export: the document is <\(name.prefix(40))>")
                    return
                }
                sawKeePassFile = true
            }
            let parent = path.last
            path.append(name)
            text = ""
            switch name {
            case "History": historyDepth += 1
            case "Group" where historyDepth == 0: groups.append(("", ""))
            case "Entry" where historyDepth == 0 && parent == "Group":
                entry = EntryState()
                entry?.inRecycleBin = !recycleBin.isEmpty && groups.contains { $0.uuid == recycleBin }
            case "Value" where entry != nil && historyDepth == 0 && parent == "String":
                if attributes["Protected"]?.lowercased() == "true" {
                    failure = .encrypted("this KeePass XML export (its protected values are encrypted)")
                }
                entry?.hidden = attributes["ProtectInMemory"]?.lowercased() == "true"
            default: break
            }
        }

        func end(_ name: String) {
            guard !path.isEmpty else { return }
            path.removeLast()
            let parent = path.last
            defer { text = "" }
            if name == "History" {
                historyDepth -= 1
                return
            }
            guard historyDepth == 0 else { return }
            switch (name, parent) {
            case ("RecycleBinUUID", "Meta"):
                recycleBin = text == "AAAAAAAAAAAAAAAAAAAAAA==" ? "" : text
            case ("UUID", "Group"):
                if !groups.isEmpty { groups[groups.count - 1].uuid = text }
            case ("Name", "Group"):
                if !groups.isEmpty { groups[groups.count - 1].name = text }
            case ("Group", _):
                if !groups.isEmpty { groups.removeLast() }
            case ("Key", "String"): entry?.key = text
            case ("Value", "String"):
                if let key = entry?.key, let hidden = entry?.hidden { entry?.strings.append((key, text, hidden)) }
            case ("Key", "Binary"): entry?.attachments += 1
            case ("CreationTime", "Times") where path.dropLast().last == "Entry":
                entry?.created = KeePassXML.date(text)
            case ("LastModificationTime", "Times") where path.dropLast().last == "Entry":
                entry?.modified = KeePassXML.date(text)
            case ("Entry", "Group"):
                if let state = entry { finish(state) }
                entry = nil
            default: break
            }
        }

        func finish(_ state: EntryState) {
            entryCount += 1
            let origin = "entry \(entryCount)"
            guard !state.inRecycleBin else { return }
            var b = EntryBuilder(origin: origin)
            for (key, value, hidden) in state.strings {
                switch key {
                case "Title": b.title = value
                case "UserName": b.username = value
                case "Password": b.password = value
                case "URL": b.url = value
                case "Notes": b.notes = value
                case "otp": b.totp = value
                case "TOTP Seed" where b.totp == nil: b.totp = value
                default: b.fields.append(CustomField(name: key.isEmpty ? "Field" : key, text: value, isHidden: hidden))
                }
            }
            b.label = groups.dropFirst().map(\.name).joined(separator: "/")
            b.created = state.created
            b.modified = state.modified
            if state.attachments > 0 {
                read.notKept.append(
                    "\(ImportText.place(origin, b.title ?? "")): \(state.attachments) attachment\(state.attachments == 1 ? "" : "s")"
                )
            }
            b.build(into: &read)
        }

    }

    /// An ISO 8601 date (KDBX 3 XML), or base64 of seconds since 0001-01-01
    /// as a 64-bit little-endian integer (KDBX 4 XML).
    static func date(_ text: String) -> Date? {
        if let date = ImportDates.iso8601(text) { return date }
        guard let data = Data(base64Encoded: text), data.count == 8 else { return nil }
        let seconds = data.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return Date(timeIntervalSince1970: Double(seconds - 62_135_596_800))
    }
}
