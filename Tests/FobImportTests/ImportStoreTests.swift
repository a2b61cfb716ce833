import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobImport

/// An item with every attribute set, and dates with fractions of a second.
func fullItem(_ n: Int) -> Item {
    var item = Item(
        itemClass: n % 2 == 0 ? .genericPassword : .internetPassword, service: "svc \(n) ü", account: "acc\"\(n)",
        accessGroup: "group.\(n)", label: "Label \(n)", comment: "notes\nline 2 \u{1}", kind: .token,
        accessible: .afterFirstUnlock, generic: [0, 0xFF, UInt8(n & 0xFF)],
        created: Date(timeIntervalSince1970: 1_600_000_000.123_456 + Double(n)),
        modified: Date(timeIntervalSince1970: 1_700_000_000.987_654_3 + Double(n)),
        url: "https://example.com/\(n)",
        oneTimePassword: SecretBytes(utf8: "otpauth://totp/x:y?secret=JBSWY3DPEHPK3PXP"),
        customFields: [
            CustomField(name: "PIN", text: "12\(n)", isHidden: true),
            CustomField(name: "raw", value: SecretBytes([0xC3, 0x28, 0x00, 0xFF]), isHidden: false),
        ],
        secret: n % 3 == 0 ? SecretBytes([0xFF, 0xFE, 0x00, 0x80]) : SecretBytes(utf8: "pw \(n) \"q\"\\\n"))
    item.synchronizable = n % 2 == 1
    if item.itemClass == .internetPassword {
        item.internetProtocol = "htps"
        item.authenticationType = "dflt"
        item.port = 8443
        item.path = "/login"
        item.securityDomain = "realm"
    }
    item.itemDescription = "desc"
    item.itemType = 0x6162_6364
    item.creator = 42
    item.isInvisible = true
    item.isNegative = n % 2 == 0
    item.accessControlFlags = 1 << 30
    return item
}

@Suite struct ImportStoreTests {
    @Test func fobJSONExportThenImportReproducesEveryItemExactly() throws {
        let source = try TestVault()
        let items = (0..<6).map(fullItem)
        try source.vault.applyImport(items.map { .add($0) })
        let stored = try source.vault.allItemsWithSecrets()
        #expect(stored.count == 6)
        var json = FobJSON.write(stored)
        defer { json.wipe() }
        let read = try FobJSON.read(json)
        let target = try TestVault()
        let plan = ImportPlan(
            entries: read.entries, existing: try target.vault.allItems(), policy: .rename, now: Date())
        try target.vault.applyImport(plan.changes)
        let copied = try target.vault.allItemsWithSecrets()
        #expect(copied == stored)
        for (a, b) in zip(copied, items.sorted { $0.service < $1.service }) {
            #expect(a.created == b.created)
            #expect(a.modified == b.modified)
            #expect(a.secret == b.secret)
            #expect(a.persistentID == b.persistentID)
        }
    }

    @Test func fobJSONWithWrongTypesOrTruncatedIsAClearError() throws {
        let good = String(decoding: FobJSON.write([fullItem(1)]), as: UTF8.self)
        #expect(throws: ImportError.wrongType("items[0].port: expected a number")) {
            try FobJSON.read(Array(good.replacingOccurrences(of: "\"port\":8443", with: "\"port\":\"8443\"").utf8))
        }
        #expect(throws: ImportError.wrongType("items[0].service: missing")) {
            try FobJSON.read(Array(good.replacingOccurrences(of: "\"service\":", with: "\"servic\":").utf8))
        }
        #expect(throws: ImportError.malformed("not JSON, or a truncated file")) {
            try FobJSON.read(Array(good.utf8.prefix(good.utf8.count / 2)))
        }
        #expect(throws: ImportError.malformed("not a fob-json export (format \"other\")")) {
            try FobJSON.read(Array(#"{"format":"other","version":1,"items":[]}"#.utf8))
        }
    }

    @Test func anImportIsAllOrNothing() throws {
        let v = try TestVault()
        try v.vault.add(Item(service: "mail", account: "ana", secret: .text("old")))
        let changes: [ImportChange] = [
            .add(Item(service: "a", account: "1", secret: .text("x"))),
            .add(Item(service: "mail", account: "ana", secret: .text("new"))),
        ]
        #expect(throws: KeychainError.duplicateItem("service \"mail\", account \"ana\"")) {
            try v.vault.applyImport(changes)
        }
        #expect(try v.vault.allItems().map(\.service) == ["mail"])
        #expect(try v.vault.item(service: "mail", account: "ana").secret == .text("old"))
    }

    @Test func duplicatePoliciesNeverLoseAnEntrySilently() throws {
        let old = Date(timeIntervalSince1970: 1_000)
        let new = Date(timeIntervalSince1970: 2_000)
        let stored = Item(service: "mail", account: "ana", created: old, modified: old, secret: .text("stored"))
        func entry(_ secret: String, _ date: Date, _ origin: String) -> ImportEntry {
            ImportEntry(
                item: Item(service: "mail", account: "ana", created: date, modified: date, secret: .text(secret)),
                datesKnown: true, origin: origin)
        }
        let entries = [entry("first", new, "line 2"), entry("second", old, "line 3")]
        let rename = ImportPlan(entries: entries, existing: [stored], policy: .rename, now: Date())
        #expect(rename.summary == "0 added, 2 renamed, 0 replaced, 0 skipped")
        let renamedServices = rename.changes.map { change -> String in
            if case .add(let i) = change { return i.service }
            return ""
        }
        #expect(renamedServices == ["mail (2)", "mail (3)"])
        let skip = ImportPlan(entries: entries, existing: [stored], policy: .skip, now: Date())
        #expect(skip.summary == "0 added, 0 renamed, 0 replaced, 2 skipped")
        #expect(skip.changes.isEmpty)
        #expect(skip.details.count == 2)
        let replace = ImportPlan(entries: entries, existing: [stored], policy: .replace, now: Date())
        #expect(replace.summary == "0 added, 0 renamed, 2 replaced, 0 skipped")
        guard case .replace(_, let last)? = replace.changes.first, replace.changes.count == 1 else {
            Issue.record("one replacement")
            return
        }
        #expect(last.secret == .text("second"))
        let newer = ImportPlan(entries: entries, existing: [stored], policy: .newer, now: Date())
        #expect(newer.summary == "0 added, 0 renamed, 1 replaced, 1 skipped")
        guard case .replace(_, let winner)? = newer.changes.first else {
            Issue.record("a replacement")
            return
        }
        #expect(winner.secret == .text("first"))
        let inFile = ImportPlan(entries: entries, existing: [], policy: .rename, now: Date())
        #expect(inFile.summary == "1 added, 1 renamed, 0 replaced, 0 skipped")
    }

    @Test func replacingWritesTheImportedItemInOneTransaction() throws {
        let v = try TestVault()
        try v.vault.add(Item(service: "mail", account: "ana", secret: .text("old")))
        let stored = try v.vault.allItems()
        let entry = ImportEntry(
            item: Item(service: "mail", account: "ana", url: "https://m", secret: .text("new")),
            datesKnown: false, origin: "line 2")
        let plan = ImportPlan(entries: [entry], existing: stored, policy: .replace, now: Date(timeIntervalSince1970: 5))
        try v.vault.applyImport(plan.changes)
        let item = try v.vault.item(service: "mail", account: "ana")
        #expect(item.secret == .text("new"))
        #expect(item.url == "https://m")
        #expect(item.modified == Date(timeIntervalSince1970: 5))
        #expect(try v.vault.allItems().count == 1)
    }

    @Test func backupIsAConsistentEncryptedCopyWithTheSamePassword() throws {
        let v = try TestVault()
        try v.vault.applyImport((0..<50).map { .add(fullItem($0)) })
        let url = v.vault.url
        let password = v.password
        let copy = v.directory.file("backup.db")
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            defer { done.signal() }
            guard let writer = try? Vault(url: url), (try? writer.unlock(password: password)) != nil else { return }
            for i in 0..<20 { try? writer.add(Item(service: "late \(i)", account: "x", secret: .text("s"))) }
        }
        try v.vault.backup(to: copy)
        done.wait()
        var info = stat()
        #expect(stat(copy.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let restored = try Vault(url: copy)
        try restored.unlock(password: v.password)
        let count = try restored.allItems().count
        #expect(count >= 50 && count <= 70)
        #expect(try restored.allItemsWithSecrets().filter { $0.service.hasPrefix("svc") }.count == 50)
        #expect(throws: KeychainError.authFailed) { try Vault(url: copy).unlock(password: .text("wrong")) }
        #expect(throws: KeychainError.io("a file already exists at \(copy.path); not overwriting it")) {
            try v.vault.backup(to: copy)
        }
    }
}
