import FobStore
import FobTokens
import FobXML
import Foundation
import Testing

@testable import FobImport

private func field(_ item: Item, _ name: String) -> CustomField? { item.customFields.first { $0.name == name } }
private func text(_ secret: SecretBytes?) -> String? { secret?.unsafeString }

@Suite struct FormatReaderTests {
    @Test func keepassxcCSVAsKeePassXCWritesIt() throws {
        let read = try CSVFormats.keepassxc(fixture("keepassxc.csv"))
        #expect(read.entries.map(\.item.service) == ["Bank", "Unicode ünïcode", "Mail"])
        let mail = read.entries[2].item
        #expect(mail.account == "ana@example.com")
        #expect(text(mail.secret) == "s3cr3t, \"quoted\"")
        #expect(mail.url == "https://mail.example.com")
        #expect(mail.notes == "line one\nline two, with comma")
        #expect(mail.label == "Email")
        #expect(mail.created == ImportDates.iso8601("2026-12-01T12:45:46Z"))
        #expect(read.entries[2].datesKnown)
        let bank = read.entries[0].item
        #expect(
            text(bank.oneTimePassword)
                == "otpauth://totp/Bank:bob?secret=JBSWY3DPEHPK3PXP&period=30&digits=6&issuer=Bank")
        #expect(bank.label == nil)
        #expect(text(read.entries[1].item.secret) == "päss wörd")
    }

    @Test func keepassxcXMLKeepsCustomAttributesGroupsAndReportsAttachments() throws {
        let read = try KeePassXML.read(fixture("keepassxc.xml"), parser: LibXMLEvents.parser)
        #expect(read.entries.map(\.item.service) == ["Bank", "Unicode ünïcode", "Mail"])
        let bank = read.entries[0].item
        #expect(text(bank.secret) == "hunter2")
        #expect(bank.account == "bob")
        #expect(field(bank, "PIN")?.isHidden == true)
        #expect(text(field(bank, "PIN")?.value) == "4321")
        #expect(field(bank, "Security question")?.isHidden == false)
        #expect(text(field(bank, "Security question")?.value) == "First pet, \"Rex\"")
        #expect(text(bank.oneTimePassword)?.hasPrefix("otpauth://totp/Bank:bob?secret=JBSWY3DPEHPK3PXP") == true)
        #expect(read.notKept == ["entry 1 (\"Bank\"): 1 attachment"])
        #expect(read.entries[2].item.label == "Email")
        #expect(read.entries[2].item.notes == "line one\nline two, with comma")
    }

    @Test func bitwardenJSONLoginsNotesCardsAndIdentities() throws {
        let read = try BitwardenJSON.read(fixture("bitwarden.json"))
        #expect(read.entries.map(\.item.service) == ["Mail", "Door code", "Visa", "Me"])
        let mail = read.entries[0].item
        #expect(mail.account == "ana")
        #expect(text(mail.secret) == "m@il \"pw\"")
        #expect(mail.url == "https://mail.example.com")
        #expect(text(field(mail, "URI 2")?.value) == "https://webmail.example.com")
        #expect(field(mail, "PIN")?.isHidden == true)
        #expect(field(mail, "Plan")?.isHidden == false)
        #expect(text(field(mail, "Beta")?.value) == "true")
        #expect(mail.label == "Work")
        #expect(mail.notes == "note with\nnew line")
        let seed = try OneTimePassword(parsing: try #require(text(mail.oneTimePassword)))
        #expect(seed.secret == (try Base32.decode("JBSWY3DPEHPK3PXP")))
        #expect(mail.created == ImportDates.iso8601("2023-01-02T03:04:05.000Z"))
        #expect(mail.modified.timeIntervalSince1970 == 1_709_374_830.123)
        #expect(read.notKept.contains("entry 1 (\"Mail\"): the linked field \"Username\""))
        #expect(read.notKept.contains("entry 1 (\"Mail\"): 1 passkey"))
        #expect(read.notKept.contains("entry 1 (\"Mail\"): the password history (1)"))
        let note = read.entries[1].item
        #expect(note.kind == .note)
        #expect(text(note.secret) == "4711#")
        let card = read.entries[2].item
        #expect(card.kind == .note)
        #expect(field(card, "number")?.isHidden == true)
        #expect(text(field(card, "number")?.value) == "4111111111111111")
        #expect(field(card, "brand")?.isHidden == false)
        let me = read.entries[3].item
        #expect(field(me, "ssn")?.isHidden == true)
        #expect(text(field(me, "email")?.value) == "ana@example.com")
    }

    @Test func encryptedBitwardenExportsAreRefusedAsEncrypted() throws {
        #expect(throws: ImportError.encrypted("this Bitwarden export")) {
            try BitwardenJSON.read(fixture("bitwarden-encrypted.json"))
        }
        #expect(ImportError.encrypted("this Bitwarden export").description.contains("export it unencrypted"))
        #expect(!ImportError.encrypted("x").description.contains("wrong password"))
    }

    @Test func bitwardenJSONWithWrongTypesNamesThePlace() {
        #expect(throws: ImportError.wrongType("items[0].login.password: expected text")) {
            try BitwardenJSON.read(
                Array(#"{"encrypted":false,"items":[{"type":1,"name":"x","login":{"password":5}}]}"#.utf8))
        }
        #expect(throws: ImportError.wrongType("items: expected an array")) {
            try BitwardenJSON.read(Array(#"{"items":{}}"#.utf8))
        }
        #expect(throws: ImportError.malformed("not JSON, or a truncated file")) {
            try BitwardenJSON.read(Array(#"{"encrypted":false,"items":[{"type":1,"#.utf8))
        }
    }

    @Test func bitwardenCSV() throws {
        let read = try CSVFormats.bitwarden(fixture("bitwarden.csv"))
        #expect(read.entries.count == 2)
        let mail = read.entries[0].item
        #expect(text(mail.secret) == "m@il \"pw\"")
        #expect(mail.notes == "note, with comma")
        #expect(mail.url == "https://mail.example.com")
        #expect(text(field(mail, "URI 2")?.value) == "https://webmail.example.com")
        #expect(text(field(mail, "PIN")?.value) == "1234")
        #expect(text(field(mail, "Plan")?.value) == "family")
        #expect(mail.label == "Work")
        #expect(mail.oneTimePassword != nil)
        #expect(read.entries[1].item.kind == .note)
        #expect(text(read.entries[1].item.secret) == "4711#")
    }

    @Test func chromeCSV() throws {
        let read = try CSVFormats.chrome(fixture("chrome.csv"))
        #expect(read.entries.map(\.item.service) == ["accounts.google.com", "example.com", "nameless.example.org"])
        #expect(text(read.entries[0].item.secret) == "pa,ss\"word")
        #expect(read.entries[1].item.notes == "line one\nline two")
        #expect(read.entries[2].item.account == "carol")
        #expect(!read.entries[0].datesKnown)
    }

    @Test func firefoxCSV() throws {
        let read = try CSVFormats.firefox(fixture("firefox.csv"))
        #expect(read.entries.map(\.item.service) == ["www.mozilla.org", "intranet.example.com"])
        let first = read.entries[0].item
        #expect(text(first.secret) == "fire,fox\"pw")
        #expect(first.created == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(first.modified == Date(timeIntervalSince1970: 1_700_000_400))
        #expect(text(field(first, "formActionOrigin")?.value) == "https://www.mozilla.org")
        #expect(text(field(read.entries[1].item, "httpRealm")?.value) == "Intranet")
    }

    @Test func onePasswordCSV() throws {
        let read = try CSVFormats.onePassword(fixture("1password.csv"))
        #expect(read.entries.map(\.item.service) == ["GitHub", "Wi-Fi"])
        #expect(read.entries[0].item.label == "Work")
        #expect(read.entries[0].item.notes == "Recovery codes in the safe")
        #expect(text(read.entries[0].item.oneTimePassword)?.hasPrefix("otpauth://totp/GitHub:ana") == true)
        #expect(text(read.entries[1].item.secret) == "wifi \"home\" pass")
    }

    @Test func passEntries() throws {
        let read = try PassStore.parse(
            Array(
                "pw line\nuser: ana\nurl: https://x.example\notpauth://totp/x?secret=JBSWY3DPEHPK3PXP\nPIN: 12\nfree text\nmore\n"
                    .utf8),
            name: "web/x.example")
        let item = try #require(read.entries.first?.item)
        #expect(item.service == "web/x.example")
        #expect(item.account == "ana")
        #expect(text(item.secret) == "pw line")
        #expect(item.url == "https://x.example")
        #expect(text(item.oneTimePassword) == "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        #expect(text(field(item, "PIN")?.value) == "12")
        #expect(item.notes == "free text\nmore")
        let byPath = try PassStore.parse(Array("s3cret\n".utf8), name: "email/gmail.com/ana")
        #expect(byPath.entries.first?.item.service == "email/gmail.com")
        #expect(byPath.entries.first?.item.account == "ana")
        #expect(
            throws: ImportError.encoding(
                line: 1,
                "bad.gpg: the text is not valid UTF-8; name its encoding with --encoding (such as windows-1252)")
        ) {
            try PassStore.parse([0xFF, 0x0A], name: "bad")
        }
    }

    @Test func rowsWithNothingAreReportedNotImported() throws {
        let read = try CSVFormats.chrome(Array("name,url,username,password\n,,,\nx,,,\n".utf8))
        #expect(read.entries.count == 1)
        #expect(read.unusable == ["line 2: no name, user, password, URL or notes"])
    }

    @Test func truncatedAndMalformedFilesOfEachKind() {
        #expect(throws: ImportError.malformed("line 1: not well-formed XML (is the file truncated?)")) {
            try KeePassXML.read(Array("<KeePassFile><Root><Group>".utf8), parser: LibXMLEvents.parser)
        }
        #expect(throws: ImportError.malformed("line 1: not an XML document; is it a KeePassXC XML export?")) {
            try KeePassXML.read(
                Array("name,url,username,password\nmail,,ana,pw\n".utf8), parser: LibXMLEvents.parser)
        }
        #expect(throws: ImportError.malformed("not a KeePass XML export: the document is <html>")) {
            try KeePassXML.read(Array("<html></html>".utf8), parser: LibXMLEvents.parser)
        }
        #expect(throws: ImportError.encrypted("this KeePass XML export (its protected values are encrypted)")) {
            try KeePassXML.read(
                Array(
                    #"<KeePassFile><Root><Group><Entry><String><Key>Password</Key><Value Protected="True">aGk=</Value></String></Entry></Group></Root></KeePassFile>"#
                        .utf8), parser: LibXMLEvents.parser)
        }
        #expect(throws: ImportError.malformed("not a KeePass XML export: it declares a document type or entities")) {
            try KeePassXML.read(
                Array(#"<?xml version="1.0"?><!DOCTYPE k [<!ENTITY a "aaaa">]><KeePassFile>&a;</KeePassFile>"#.utf8),
                parser: LibXMLEvents.parser)
        }
        #expect(throws: ImportError.missingColumns(["password"])) {
            try CSVFormats.chrome(Array("name,url,username\nx,y,z\n".utf8))
        }
    }

    @Test func fuzzedBytesNeverCrashAReader() {
        var generator = SystemRandomNumberGenerator()
        let seeds: [[UInt8]] = [
            Array("a,\"b\"\"c\",d\r\n".utf8), Array(#"{"items":[{"type":1}]}"#.utf8),
            Array("<KeePassFile><Root/>".utf8),
        ]
        for seed in seeds {
            for _ in 0..<200 {
                var bytes = seed
                for _ in 0..<3 {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                _ = try? CSVFormats.keepassxc(bytes)
                _ = try? BitwardenJSON.read(bytes)
                _ = try? KeePassXML.read(bytes, parser: LibXMLEvents.parser)
                _ = try? FobJSON.read(bytes)
            }
        }
    }
}
