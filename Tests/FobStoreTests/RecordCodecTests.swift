import FobTestSupport
import Foundation
import Testing

@testable import FobStore

/// The item record layout: every attribute round-trips, records of the first
/// release decode unchanged, unknown fields survive a rewrite, and every size
/// read from a record is bounded.
@Suite struct RecordCodecTests {
    /// An item with every attribute set to a value other than its default.
    static func fullItem() -> Item {
        var item = Item(
            itemClass: .internetPassword, service: "example.com", account: "ana",
            accessGroup: "team.shared", label: "Example", comment: "line 1\nline 2\n",
            kind: .token, accessible: .afterFirstUnlock, generic: [0, 1, 255],
            created: Date(timeIntervalSince1970: 1_700_000_000.25),
            modified: Date(timeIntervalSince1970: 1_700_000_100.5),
            url: "https://example.com/login",
            oneTimePassword: .text("otpauth://totp/Example:ana?secret=JBSWY3DPEHPK3PXP&issuer=Example"),
            customFields: [
                CustomField(name: "PIN", text: "1234", isHidden: true),
                CustomField(name: "Recovery email", text: "ana@example.org"),
                CustomField(name: "PIN", text: "", isHidden: false),
            ],
            secret: .text("hunter2"))
        item.internetProtocol = "htps"
        item.authenticationType = "dflt"
        item.port = 8443
        item.path = "/login"
        item.securityDomain = "realm"
        item.itemDescription = "Web form password"
        item.itemType = 0x6170_706C
        item.creator = 0x6143_7274
        item.isInvisible = true
        item.isNegative = true
        item.synchronizable = true
        item.accessControlFlags = 1 << 30
        return item
    }

    static func roundTrip(_ item: Item, withSecret: Bool = true) throws -> Item {
        let encoded = RecordCodec.encode(item)
        return try encoded.withUnsafeBytes { raw throws(KeychainError) in
            try RecordCodec.decode(raw, withSecret: withSecret)
        }
    }

    static func decode(_ bytes: [UInt8]) throws -> Item {
        try bytes.withUnsafeBytes { raw throws(KeychainError) in try RecordCodec.decode(raw, withSecret: true) }
    }

    /// A record in the first release's layout: version 1, then tag ‖ UInt32 LE length ‖ bytes.
    static func record(_ fields: [(UInt8, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = [1]
        for (tag, bytes) in fields {
            out.append(tag)
            out += (0..<4).map { UInt8(truncatingIfNeeded: UInt32(bytes.count) >> (8 * UInt32($0))) }
            out += bytes
        }
        return out
    }

    static func le64(_ date: Date) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: date.timeIntervalSince1970.bitPattern >> (8 * UInt64($0))) }
    }

    static let created = Date(timeIntervalSince1970: 1_600_000_000)

    /// Exactly the bytes the first release wrote for service "mail", account "ana", label "Mail", comment "note".
    static func firstReleaseRecord(extra: [(UInt8, [UInt8])] = []) -> [UInt8] {
        record(
            [
                (1, Array("genp".utf8)), (2, Array("mail".utf8)), (3, Array("ana".utf8)), (4, []),
                (7, Array("password".utf8)), (8, Array("afterFirstUnlock".utf8)),
                (10, le64(created)), (11, le64(created.addingTimeInterval(60))),
                (5, Array("Mail".utf8)), (6, Array("note".utf8)), (9, [7, 8]),
            ] + extra
                + [(12, Array("s3cret".utf8))])
    }

    // MARK: - Round trips

    @Test func everyAttributeRoundTrips() throws {
        let item = Self.fullItem()
        let decoded = try Self.roundTrip(item)
        #expect(decoded == item)
        #expect(decoded.customFields.map(\.name) == ["PIN", "Recovery email", "PIN"])
        #expect(decoded.customFields.map(\.isHidden) == [true, false, false])
        #expect(decoded.customFields[0].unsafeText == "1234")
        #expect(decoded.oneTimePassword?.unsafeString?.hasPrefix("otpauth://totp/") == true)
        #expect(decoded.notes == "line 1\nline 2\n")
        #expect(decoded.port == 8443 && decoded.itemType == 0x6170_706C && decoded.creator == 0x6143_7274)
    }

    @Test func listingsLeaveOutOnlyTheSecret() throws {
        let decoded = try Self.roundTrip(Self.fullItem(), withSecret: false)
        #expect(decoded.secret == nil)
        #expect(decoded.oneTimePassword != nil)
        #expect(decoded.customFields.count == 3)
    }

    @Test func defaultsRoundTripAndAreNotWritten() throws {
        // Dates at whole seconds: a Date's seconds since 1970 are not exact for every instant.
        let item = Item(service: "s", account: "a", created: Self.created, modified: Self.created, secret: .text("x"))
        #expect(try Self.roundTrip(item) == item)
        let raw = RecordCodec.encode(item).unsafeArray
        // Only the first release's tags and the persistent ID (28).
        var tags: [UInt8] = []
        var i = 1
        while i < raw.count {
            tags.append(raw[i])
            let n = (0..<4).reduce(0) { $0 | Int(raw[i + 1 + $1]) << (8 * $1) }
            i += 5 + n
        }
        #expect(Set(tags).isSubset(of: Set(1...12).union([28])))
    }

    @Test func notesAreTheComment() {
        var item = Item(service: "s", account: "a", comment: "old", secret: nil)
        #expect(item.notes == "old")
        item.notes = "new\nlines"
        #expect(item.comment == "new\nlines")
        var changes = ItemChanges(comment: "c")
        #expect(changes.notes == .some("c"))
        changes.notes = .some(nil)
        #expect(changes.comment == .some(nil))
    }

    // MARK: - Records of the first release

    @Test func firstReleaseRecordDecodesUnchanged() throws {
        let item = try Self.decode(Self.firstReleaseRecord())
        #expect(item.itemClass == .genericPassword)
        #expect(item.service == "mail" && item.account == "ana" && item.accessGroup == "")
        #expect(item.label == "Mail" && item.comment == "note" && item.generic == [7, 8])
        #expect(item.kind == .password && item.accessible == .afterFirstUnlock)
        #expect(item.created == Self.created && item.modified == Self.created.addingTimeInterval(60))
        #expect(item.secret?.unsafeString == "s3cret")
        #expect(item.url == nil && item.oneTimePassword == nil && item.customFields.isEmpty)
        #expect(item.internetProtocol == "" && item.port == 0 && !item.synchronizable && item.accessControlFlags == nil)
        #expect(item.unknownFields.isEmpty)
    }

    @Test func firstReleasePersistentIDIsStableAndKeptOnRewrite() throws {
        let first = try Self.decode(Self.firstReleaseRecord())
        let second = try Self.decode(Self.firstReleaseRecord())
        #expect(first.persistentID == second.persistentID)
        #expect(first.persistentID != RecordCodec.nilUUID)
        var changed = first
        changed.service = "mail2"
        #expect(try Self.roundTrip(changed).persistentID == first.persistentID)
    }

    @Test func primaryKeyOfFirstReleaseItemsIsUnchanged() throws {
        func lengthPrefixed(_ parts: [String]) -> [UInt8] {
            parts.flatMap { s -> [UInt8] in
                let b = Array(s.utf8)
                return (0..<4).map { UInt8(truncatingIfNeeded: UInt32(b.count) >> (8 * UInt32($0))) } + b
            }
        }
        let generic = Item(service: "mail", account: "ana", accessGroup: "g", secret: nil)
        #expect(RecordCodec.primaryKey(of: generic) == lengthPrefixed(["genp", "g", "mail", "ana"]))
        let internet = Item(itemClass: .internetPassword, service: "example.com", account: "ana", secret: nil)
        #expect(RecordCodec.primaryKey(of: internet) == lengthPrefixed(["inet", "", "example.com", "ana"]))
    }

    @Test func primaryKeyOfLaterAttributesIsSpelledAsDocumented() {
        func field(_ bytes: [UInt8]) -> [UInt8] {
            let n = UInt32(bytes.count)
            return [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)] + bytes
        }
        func text(_ s: String) -> [UInt8] { field(Array(s.utf8)) }
        var generic = Item(service: "mail", account: "ana", accessGroup: "g", secret: nil)
        generic.synchronizable = true
        #expect(
            RecordCodec.primaryKey(of: generic) == text("genp") + text("g") + text("mail") + text("ana") + field([1]))
        var internet = Item(itemClass: .internetPassword, service: "example.com", account: "ana", secret: nil)
        internet.internetProtocol = "htps"
        internet.authenticationType = "dflt"
        internet.port = 0x0102_0304
        internet.path = "/ü"
        internet.securityDomain = "d"
        let expected =
            text("inet") + text("") + text("example.com") + text("ana") + text("htps") + text("dflt")
            + field([0x04, 0x03, 0x02, 0x01]) + text("/ü") + text("d") + field([0])
        #expect(RecordCodec.primaryKey(of: internet) == expected)
    }

    @Test func newKeyAttributesMakeDistinctKeys() {
        var base = Item(itemClass: .internetPassword, service: "example.com", account: "ana", secret: nil)
        var keys: Set<[UInt8]> = [RecordCodec.primaryKey(of: base)]
        base.internetProtocol = "htps"
        keys.insert(RecordCodec.primaryKey(of: base))
        base.port = 443
        keys.insert(RecordCodec.primaryKey(of: base))
        base.path = "/"
        keys.insert(RecordCodec.primaryKey(of: base))
        base.securityDomain = "d"
        keys.insert(RecordCodec.primaryKey(of: base))
        base.authenticationType = "dflt"
        keys.insert(RecordCodec.primaryKey(of: base))
        base.synchronizable = true
        keys.insert(RecordCodec.primaryKey(of: base))
        #expect(keys.count == 7)
        var generic = Item(service: "s", account: "a", secret: nil)
        let local = RecordCodec.primaryKey(of: generic)
        generic.synchronizable = true
        #expect(RecordCodec.primaryKey(of: generic) != local)
        // Attributes outside the primary key leave it alone.
        generic.port = 80
        generic.label = "x"
        generic.synchronizable = false
        #expect(RecordCodec.primaryKey(of: generic) == local)
    }

    // MARK: - Unknown fields

    @Test func unknownFieldsSurviveARewrite() throws {
        let future: [(UInt8, [UInt8])] = [(200, Array("from a later fob".utf8)), (99, [])]
        var item = try Self.decode(Self.firstReleaseRecord(extra: future))
        #expect(item.unknownFields.map(\.tag) == [200, 99])
        item.label = "changed"
        let again = try Self.roundTrip(item)
        #expect(again.unknownFields == item.unknownFields)
        #expect(again.unknownFields[0].bytes.unsafeString == "from a later fob")
        #expect(again.label == "changed")
    }

    // MARK: - Bounds

    @Test func fieldsOverTheirLimitAreDecodeErrors() {
        let cases: [(UInt8, [UInt8])] = [
            (13, [UInt8](repeating: 0x61, count: Item.maxTextBytes + 1)), // url
            (2, [UInt8](repeating: 0x61, count: Item.maxSecretBytes + 1)), // service
            (6, [UInt8](repeating: 0x61, count: Item.maxSecretBytes + 1)), // comment
            (12, [UInt8](repeating: 0x61, count: Item.maxSecretBytes + 1)), // secret
            (14, [UInt8](repeating: 0x61, count: Item.maxOneTimePasswordBytes + 1)),
            (18, [0xFF, 0xFF, 0x01, 0x00]), // port 131071
            (18, [1, 0]), // port of 2 bytes
            (22, [1, 2, 3]), // type of 3 bytes
            (24, [2]), // flag not 0/1
            (27, [1, 2, 3, 4]), // access control of 4 bytes
            (28, [1, 2, 3]), // short persistent ID
            (15, [0, 0xFF, 0xFF, 0xFF, 0xFF, 0x61]), // custom field name length past the field
            (15, [0, 0, 0, 0, 0]), // empty custom field name
            (15, [2, 1, 0, 0, 0, 0x61]), // unknown custom field flags
            (15, [0, 2, 0, 0, 0, 0xFF, 0xFE]), // name not UTF-8
            (15, [0, 1, 0, 0, 0, 0x61] + [UInt8](repeating: 0, count: Item.maxFieldValueBytes + 1)),
            (16, [0xC3]), // protocol not UTF-8
        ]
        for (tag, bytes) in cases {
            let error = #expect(throws: KeychainError.self, "tag \(tag)") {
                try Self.decode(Self.firstReleaseRecord(extra: [(tag, bytes)]))
            }
            guard case .decode? = error else {
                Issue.record("tag \(tag): not errSecDecode: \(String(describing: error))")
                continue
            }
        }
    }

    @Test func firstReleaseFieldsOverTodaysWriteLimitStillRead() throws {
        let label = String(repeating: "l", count: Item.maxTextBytes + 1)
        let item = try Self.decode(Self.firstReleaseRecord(extra: [(5, Array(label.utf8))]))
        #expect(item.label == label)
        #expect(thrownKeychainError { try item.checkLimits() }?.statusName == "errSecParam")
    }

    @Test func tooManyCustomFieldsOrUnknownFieldsAreDecodeErrors() {
        let field: (UInt8, [UInt8]) = (15, [0, 1, 0, 0, 0, 0x61, 0x62])
        let ok = [(UInt8, [UInt8])](repeating: field, count: Item.maxCustomFields)
        #expect((try? Self.decode(Self.firstReleaseRecord(extra: ok)))?.customFields.count == Item.maxCustomFields)
        #expect(
            thrownKeychainError { try Self.decode(Self.firstReleaseRecord(extra: ok + [field])) }?.statusName
                == "errSecDecode")
        let unknown = [(UInt8, [UInt8])](repeating: (250, [1]), count: RecordCodec.maxUnknownFields + 1)
        #expect(
            thrownKeychainError { try Self.decode(Self.firstReleaseRecord(extra: unknown)) }?.statusName
                == "errSecDecode")
    }

    @Test func hugeDeclaredLengthsAreDecodeErrorsWithoutAllocation() {
        // A length of 4 GiB - 1 in a 20-byte record: refused before any copy.
        var bytes = Self.record([(1, Array("genp".utf8))])
        bytes += [13, 0xFF, 0xFF, 0xFF, 0xFF, 0x61]
        #expect(thrownKeychainError { try Self.decode(bytes) }?.statusName == "errSecDecode")
        #expect(thrownKeychainError { try Self.decode([1, 2, 0xFF]) }?.statusName == "errSecDecode")
        #expect(thrownKeychainError { try Self.decode([]) }?.statusName == "errSecDecode")
        #expect(thrownKeychainError { try Self.decode([2]) }?.statusName == "errSecDecode")
    }

    @Test func limitsAreCheckedOnWrite() throws {
        let t = try TestVault()
        var tooLong = Item(
            service: "s", account: "a", url: String(repeating: "u", count: Item.maxTextBytes + 1), secret: .text("x"))
        #expect(thrownKeychainError { try t.vault.add(tooLong) }?.statusName == "errSecParam")
        tooLong.url = nil
        tooLong.port = Item.maxPort + 1
        #expect(thrownKeychainError { try t.vault.add(tooLong) }?.statusName == "errSecParam")
        tooLong.port = 0
        tooLong.customFields = [CustomField(name: "", text: "x")]
        #expect(thrownKeychainError { try t.vault.add(tooLong) }?.statusName == "errSecParam")
        tooLong.customFields = Array(repeating: CustomField(name: "n", text: "v"), count: Item.maxCustomFields + 1)
        #expect(thrownKeychainError { try t.vault.add(tooLong) }?.statusName == "errSecParam")
        tooLong.customFields = []
        tooLong.oneTimePassword = SecretBytes([UInt8](repeating: 0x61, count: Item.maxOneTimePasswordBytes + 1))
        #expect(thrownKeychainError { try t.vault.add(tooLong) }?.statusName == "errSecParam")
        #expect(throws: KeychainError.itemNotFound("any item")) {
            try t.vault.items(matching: ItemQuery(itemClass: nil))
        }
    }

    // MARK: - Secrets stay out of descriptions

    @Test func descriptionsNeverShowSecrets() {
        let item = Self.fullItem()
        for text in [String(describing: item), String(reflecting: item), "\(item.customFields)"] {
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("JBSWY3DPEHPK3PXP"))
            #expect(!text.contains("1234"))
            #expect(!text.contains("ana@example.org"))
        }
        #expect(item.customFields[0].description == "CustomField(\"PIN\", hidden, 4 bytes)")
    }
}

/// The new attributes through the vault: set, match, change and clear each.
@Suite struct ItemAttributeVaultTests {
    @Test func addGetUpdateAndClearEveryAttribute() throws {
        let t = try TestVault()
        var item = RecordCodecTests.fullItem()
        item.itemClass = .genericPassword
        item.synchronizable = false
        try t.vault.add(item)
        let stored = try t.vault.item(service: "example.com", account: "ana", accessGroup: "team.shared")
        #expect(stored.url == item.url && stored.oneTimePassword == item.oneTimePassword)
        #expect(stored.customFields == item.customFields && stored.persistentID == item.persistentID)
        #expect(stored.itemDescription == "Web form password" && stored.isInvisible && stored.isNegative)

        var changes = ItemChanges(
            url: .some("https://new.example.com"),
            oneTimePassword: .some(.text("otpauth://hotp/x?secret=AA&counter=1")),
            customFields: [CustomField(name: "Q", text: "A", isHidden: true)])
        changes.notes = .some("new notes")
        changes.itemDescription = .some(nil)
        changes.itemType = .some(nil)
        changes.creator = .some(nil)
        changes.isInvisible = false
        changes.accessControlFlags = .some(nil)
        let query = ItemQuery(service: "example.com", account: "ana", accessGroup: "team.shared")
        #expect(try t.vault.update(matching: query, with: changes) == 1)
        var now = try t.vault.item(service: "example.com", account: "ana", accessGroup: "team.shared")
        #expect(now.url == "https://new.example.com" && now.notes == "new notes")
        #expect(now.oneTimePassword?.unsafeString == "otpauth://hotp/x?secret=AA&counter=1")
        #expect(now.customFields.map(\.name) == ["Q"] && now.customFields[0].isHidden)
        #expect(
            now.itemDescription == nil && now.itemType == nil && now.creator == nil && !now.isInvisible
                && now.accessControlFlags == nil)
        #expect(now.persistentID == item.persistentID)

        try t.vault.update(
            matching: query, with: ItemChanges(url: .some(nil), oneTimePassword: .some(nil), customFields: []))
        now = try t.vault.item(service: "example.com", account: "ana", accessGroup: "team.shared")
        #expect(now.url == nil && now.oneTimePassword == nil && now.customFields.isEmpty)
        #expect(now.secret?.unsafeString == "hunter2")
    }

    @Test func queriesMatchTheNewAttributes() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "a", account: "1", url: "https://a.example", secret: .text("x")))
        try t.vault.add(Item(service: "b", account: "1", secret: .text("y")))
        #expect(try t.vault.items(matching: ItemQuery(url: "https://a.example")).map(\.service) == ["a"])
        #expect(try t.vault.items(matching: ItemQuery(url: "")).map(\.service) == ["b"])
        let id = try t.vault.item(service: "b", account: "1").persistentID
        var byID = ItemQuery()
        byID.persistentID = id
        #expect(try t.vault.items(matching: byID).map(\.service) == ["b"])
    }

    @Test func synchronizableIsPartOfTheKeyAndMatchedByBothValues() throws {
        let t = try TestVault()
        var synced = Item(service: "s", account: "a", secret: .text("synced"))
        synced.synchronizable = true
        try t.vault.add(synced)
        try t.vault.add(Item(service: "s", account: "a", secret: .text("local")))
        #expect(thrownKeychainError { try t.vault.add(synced) }?.statusName == "errSecDuplicateItem")
        // The exact-key lookup finds both when synchronizable is not named.
        #expect(try t.vault.items(matching: .key(service: "s", account: "a")).count == 2)
        #expect(
            try t.vault.items(
                matching: ItemQuery(service: "s", account: "a", accessGroup: "", synchronizable: true),
                withSecrets: true
            ).map { $0.secret?.unsafeString } == ["synced"])
        #expect(
            try t.vault.items(
                matching: ItemQuery(service: "s", account: "a", accessGroup: "", synchronizable: false),
                withSecrets: true
            ).map { $0.secret?.unsafeString } == ["local"])
    }

    @Test func internetPasswordKeyIncludesProtocolPortPathDomainAndAuthType() throws {
        let t = try TestVault()
        func inet(_ port: Int, _ path: String = "") -> Item {
            var item = Item(
                itemClass: .internetPassword, service: "example.com", account: "ana", secret: .text("\(port)\(path)"))
            item.internetProtocol = "htps"
            item.port = port
            item.path = path
            return item
        }
        try t.vault.add(inet(443))
        try t.vault.add(inet(8443))
        try t.vault.add(inet(443, "/admin"))
        #expect(thrownKeychainError { try t.vault.add(inet(443)) }?.statusName == "errSecDuplicateItem")
        var exact = ItemQuery(
            itemClass: .internetPassword, service: "example.com", account: "ana", accessGroup: "", synchronizable: false
        )
        exact.internetProtocol = "htps"
        exact.authenticationType = ""
        exact.port = 443
        exact.path = "/admin"
        exact.securityDomain = ""
        #expect(exact.primaryKeyCandidates?.count == 1)
        #expect(try t.vault.items(matching: exact, withSecrets: true).map { $0.secret?.unsafeString } == ["443/admin"])
        #expect(try t.vault.items(matching: ItemQuery(itemClass: .internetPassword, service: "example.com")).count == 3)
    }
}

extension ItemAttributeVaultTests {
    @Test func outOfRangePortsInQueriesMatchNothingAndNeverTrap() throws {
        let t = try TestVault()
        var item = Item(itemClass: .internetPassword, service: "h", account: "a", secret: .text("x"))
        item.port = 443
        try t.vault.add(item)
        for port in [-1, Item.maxPort + 1, Int.max, Int.min] {
            var query = ItemQuery(
                itemClass: .internetPassword, service: "h", account: "a", accessGroup: "", synchronizable: false)
            query.internetProtocol = ""
            query.authenticationType = ""
            query.path = ""
            query.securityDomain = ""
            query.port = port
            #expect(query.primaryKeyCandidates == nil)
            #expect(thrownKeychainError { try t.vault.items(matching: query) }?.statusName == "errSecItemNotFound")
            item.port = port
            #expect(thrownKeychainError { try t.vault.add(item) }?.statusName == "errSecParam")
        }
    }
}

extension RecordCodecTests {
    /// Every byte of a full record changed, and random truncations: decoding
    /// either succeeds or throws, and never traps or allocates wildly.
    @Test func mutatedRecordsNeverTrap() {
        let bytes = RecordCodec.encode(Self.fullItem()).unsafeArray
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices {
            for value: UInt8 in [0, 0xFF, bytes[index] ^ 0x80, UInt8.random(in: 0...255, using: &generator)] {
                var mutated = bytes
                mutated[index] = value
                _ = try? Self.decode(mutated)
            }
        }
        for length in stride(from: 0, to: bytes.count, by: 7) {
            _ = try? Self.decode(Array(bytes[..<length]))
        }
    }
}

/// ``Swift/String/init(checkingUTF8:)`` answers as `String(validating:as:)`.
@Suite struct CheckingUTF8Tests {
    @Test func agreesWithTheGeneralCheck() {
        let samples: [[UInt8]] = [
            [], Array("svc7".utf8), [0x00, 0x41, 0x7F], Array("café 密码 🔑".utf8), [0xFF], [0x41, 0x80],
            [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98], [0xF4, 0x90, 0x80, 0x80],
        ]
        for bytes in samples {
            #expect(String(checkingUTF8: bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
            #expect(String(checkingUTF8: bytes[...]) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
        #expect(String(checkingUTF8: Array("café".utf8)) == "café")
        #expect(String(checkingUTF8: [0x41, 0x80] as [UInt8]) == nil)
    }
}
