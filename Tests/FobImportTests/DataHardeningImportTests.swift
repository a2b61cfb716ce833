import FobImport
import FobStore
import FobTestSupport
import Foundation
import Testing

/// The CSV export is safe to open in a spreadsheet and reads back; each
/// CSV format requires its columns; imports keep persistent IDs unique and
/// never keep a counter-based seed as a one-time seed.
@Suite struct DataHardeningImportTests {
    static let formulaStarts: [Character] = ["=", "+", "-", "@", "\t", "\r"]

    /// OWASP "CSV Injection": a cell that begins with `=`, `+`, `-`, `@`, a
    /// tab or a carriage return is written with a `'` in front, so no
    /// spreadsheet reads it as a formula; so is one beginning with `'`.
    /// The export is measured, then written into one buffer of that size:
    /// it never grows, so no copy of the secrets stays in freed memory.
    @Test func csvExportIsWrittenIntoOneBufferOfItsExactSize() throws {
        var items = (0..<200).map { i in
            Item(service: "svc,\(i)", account: "=a\"\(i)", secret: .text(String(repeating: "s", count: 300)))
        }
        items.append(Item(service: "bin", account: "b", secret: SecretBytes([0xFF, 0xFE, 0x00])))
        let csv = CSVExport.write(items)
        #expect(CSVExport.byteCount(items) == csv.count)
        #expect(try CSVFormats.fob(csv).entries.count == 201)
    }

    @Test func csvExportNeutralisesFormulaCells() throws {
        var item = Item(
            service: #"=HYPERLINK("https://evil.example","x")"#, account: "+1", label: "@SUM(A1)",
            comment: "\tnote", url: "\rhttps://x", secret: .text("-2+3"))
        item.oneTimePassword = SecretBytes(utf8: "'quoted")
        let plain = Item(service: "mail", account: "ana", secret: .text("pw"))
        let csv = CSVExport.write([item, plain])
        let records = try CSVReader.records(csv)
        #expect(records.count == 3)
        for field in records[1].fields.prefix(7) {
            #expect(field.first == "'", "\(field.debugDescription) is not marked")
        }
        for record in records {
            for field in record.fields {
                #expect(!Self.formulaStarts.contains(field.first ?? "a"), "\(field.debugDescription)")
            }
        }
        #expect(records[1].fields[0] == #"'=HYPERLINK("https://evil.example","x")"#)
        #expect(records[2].fields.prefix(3) == ["mail", "ana", "pw"])
        #expect(String(decoding: csv, as: UTF8.self).contains(#""'=HYPERLINK(""https://evil.example"",""x"")""#))
    }

    /// `fob export --format csv` read back by `import fob-csv` gives every
    /// value CSV holds, byte for byte: formula cells, line breaks, quotes,
    /// secrets that are not UTF-8 or begin with `base64:`, kinds, seeds,
    /// labels and dates (to the second).
    @Test func fobCSVReadsTheExportBackAsItWas() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_123)
        let items = [
            Item(
                service: "=cmd|' /C calc'!A0", account: "ana, \"the\" user", label: "'label",
                comment: "line 1\r\nline 2",
                kind: .token, created: date, modified: date.addingTimeInterval(60), url: "@https://x",
                secret: .text("-secret\nwith a line")),
            Item(
                service: "bytes", account: "b", created: date, modified: date, secret: SecretBytes([0xFF, 0x00, 0x41])),
            Item(service: "tagged", account: "t", created: date, modified: date, secret: .text("base64:AAAA")),
            Item(
                service: "seeded", account: "s", kind: .note, created: date, modified: date,
                oneTimePassword: SecretBytes(utf8: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"), secret: .text("")),
        ]
        let read = try CSVFormats.fob(CSVExport.write(items))
        #expect(read.unusable.isEmpty, "\(read.unusable)")
        #expect(read.entries.count == items.count)
        for (entry, item) in zip(read.entries, items) {
            let got = entry.item
            #expect(got.service == item.service)
            #expect(got.account == item.account)
            #expect(got.secret == item.secret)
            #expect(got.label == item.label)
            #expect(got.notes == item.notes)
            #expect(got.url == item.url)
            #expect(got.kind == item.kind)
            #expect(got.oneTimePassword == item.oneTimePassword)
            #expect(got.created == item.created)
            #expect(got.modified == item.modified)
            #expect(entry.datesKnown)
        }
    }

    /// What CSV cannot hold is named, with how many items had it.
    @Test func csvExportNamesWhatItCannotHold() {
        var internet = Item(itemClass: .internetPassword, service: "h", account: "a", secret: .text("s"))
        internet.customFields = [CustomField(name: "pin", text: "1", isHidden: true)]
        let fielded = Item(
            service: "x", account: "y", customFields: [CustomField(name: "n", text: "v")], secret: .text("s"))
        let plain = Item(service: "p", account: "q", secret: .text("s"))
        #expect(CSVExport.losses([plain]).isEmpty)
        let losses = CSVExport.losses([internet, fielded, plain])
        #expect(losses.contains("custom fields: 2 items"))
        #expect(losses.contains { $0.hasPrefix("internet-password attributes") && $0.hasSuffix(": 1 item") })
    }

    /// Each format's exporter always writes these columns; a file without
    /// one of them is another format (chrome-csv of a file without `name`
    /// gave items with empty services) and is refused, naming the column.
    @Test(arguments: [
        ("chrome", "name,url,username,password,note", "name"),
        (
            "firefox",
            "url,username,password,httpRealm,formActionOrigin,guid,timeCreated,timeLastUsed,timePasswordChanged",
            "httpRealm"
        ),
        ("keepassxc", "Group,Title,Username,Password,URL,Notes,TOTP,Icon,Last Modified,Created", "Title"),
        (
            "bitwarden",
            "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp",
            "login_uri"
        ),
        ("1password", "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes", "Url"),
        ("fob", CSVExport.columns.joined(separator: ","), "kind"),
    ])
    func eachFormatRequiresItsColumns(format: String, header: String, dropped: String) throws {
        let read: ([UInt8]) throws(ImportError) -> ImportRead = { bytes throws(ImportError) in
            switch format {
            case "chrome": return try CSVFormats.chrome(bytes)
            case "firefox": return try CSVFormats.firefox(bytes)
            case "keepassxc": return try CSVFormats.keepassxc(bytes)
            case "bitwarden": return try CSVFormats.bitwarden(bytes)
            case "1password": return try CSVFormats.onePassword(bytes)
            default: return try CSVFormats.fob(bytes)
            }
        }
        let columns = header.split(separator: ",").map(String.init)
        let row = columns.map { _ in "" }.joined(separator: ",")
        _ = try read(Array("\(header)\n\(row)\n".utf8))
        let without = columns.filter { $0 != dropped }
        let shortRow = without.map { _ in "" }.joined(separator: ",")
        #expect(throws: ImportError.missingColumns([dropped])) {
            try read(Array("\(without.joined(separator: ","))\n\(shortRow)\n".utf8))
        }
    }

    /// Imports copied persistent IDs, so one ID ended on several items (and
    /// a SecItem delete by that reference removed them all). An entry whose
    /// ID is in use gets a new one; a replacement may keep the ID of what it
    /// replaces.
    @Test func persistentIDsStayUniqueInAVault() throws {
        let shared = UUID()
        let stored = Item(service: "mail", account: "ana", persistentID: shared, secret: .text("a"))
        let entries = ["one", "two", "three"].map { name in
            ImportEntry(
                item: Item(service: name, account: "x", persistentID: shared, secret: .text(name)), datesKnown: true,
                origin: name)
        }
        let plan = ImportPlan(entries: entries, existing: [stored], policy: .rename, now: Date())
        let ids = plan.changes.map { change -> UUID in
            switch change {
            case .add(let item), .replace(_, let item), .delete(let item): return item.persistentID
            }
        }
        #expect(Set(ids + [shared]).count == 4)
        #expect(plan.newIdentifiers == 3)
        #expect(plan.details.contains { $0.contains("new persistent ID") })

        // The same file imported twice (renamed) into a real vault: every ID once.
        let t = try TestVault()
        try t.vault.add(stored)
        let again = ImportPlan(
            entries: entries + [ImportEntry(item: stored, datesKnown: true, origin: "mail")],
            existing: try t.vault.allItems(), policy: .rename, now: Date())
        try t.vault.applyImport(again.changes)
        let all = try t.vault.allItems()
        #expect(all.count == 5)
        #expect(Set(all.map(\.persistentID)).count == 5)
        #expect(try t.vault.item(service: "mail", account: "ana").persistentID == shared)

        // A replacement keeps its own ID when that one is free.
        let replacement = ImportEntry(
            item: Item(service: "mail", account: "ana", persistentID: shared, secret: .text("new")), datesKnown: true,
            origin: "r")
        let replace = ImportPlan(entries: [replacement], existing: [stored], policy: .replace, now: Date())
        #expect(replace.newIdentifiers == 0)
    }

    /// An `otpauth://hotp/` seed would show the same code for ever (Fob
    /// shows time-based codes, and `totp set` refuses HOTP): an import keeps
    /// it as the hidden field `HOTP` and says so; a TOTP seed stays.
    @Test func counterBasedSeedsAreKeptAsHiddenFieldsAndReported() throws {
        let header = "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n"
        let hotp = "otpauth://hotp/Bank:ana?secret=JBSWY3DPEHPK3PXP&counter=7"
        let totp = "otpauth://totp/Mail:ana?secret=JBSWY3DPEHPK3PXP"
        var read = try CSVFormats.onePassword(
            Array((header + "Bank,,ana,pw,\(hotp),,,,\nMail,,ana,pw,\(totp),,,,\n").utf8))
        read.keepCounterBasedSeedsAsFields()
        let bank = try #require(read.entries.first { $0.item.service == "Bank" }).item
        #expect(bank.oneTimePassword == nil)
        #expect(bank.customFields == [CustomField(name: "HOTP", text: hotp, isHidden: true)])
        let mail = try #require(read.entries.first { $0.item.service == "Mail" }).item
        #expect(mail.oneTimePassword?.unsafeString == totp)
        #expect(mail.customFields.isEmpty)
        #expect(read.notKept.contains { $0.contains("Bank") && $0.contains("HOTP") }, "\(read.notKept)")
        #expect(!read.notKept.contains { $0.contains("Mail") })
    }
}
