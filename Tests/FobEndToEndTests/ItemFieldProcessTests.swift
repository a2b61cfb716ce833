import FobStore
import FobTestSupport
import Foundation
import Testing

/// `fob add/save/update` with URL, notes and custom fields, `get --field`,
/// `ls --json` and `fob totp`, run as processes.
@Suite struct ItemFieldProcessTests {
    static let uri = "otpauth://totp/Example:ana?secret=JBSWY3DPEHPK3PXP&issuer=Example"

    @Test func fieldsURLAndNotesRoundTrip() throws {
        let v = try ProcessTestVault()
        let notes = v.directory.file("notes")
        try Data("first line\nsecond line\n".utf8).write(to: notes)
        // The hidden value is the first line of stdin; the secret is the rest.
        let add = try v.run(
            [
                "add", "mail", "ana", "--url", "https://mail.example", "--notes-file", notes.path,
                "--field", "question=a=b", "--hidden-field", "pin",
            ], input: "4321\npw\n")
        #expect(add.status == 0, "\(add.stderrText)")
        #expect(try v.run(["get", "mail", "ana"]).stdoutText == "pw\n")
        #expect(try v.run(["get", "--field", "pin", "mail", "ana"]).stdoutText == "4321\n")
        #expect(try v.run(["get", "--field", "question", "mail", "ana"]).stdoutText == "a=b\n")
        #expect(try v.run(["get", "--field", "url", "mail", "ana", "--raw"]).stdoutText == "https://mail.example")
        #expect(try v.run(["get", "--field", "user", "mail", "ana"]).stdoutText == "ana\n")
        #expect(try v.run(["get", "--field", "notes", "mail", "ana"]).stdoutText == "first line\nsecond line\n")
        let missing = try v.run(["get", "--field", "nothing", "mail", "ana"])
        #expect(missing.status == 44)
        #expect(missing.stderrText.contains("field \"nothing\""))
        #expect(try v.run(["get", "--field", "totp", "mail", "ana"]).status == 44)

        // update replaces a field in place, removes another, keeps the rest.
        let update = try v.run(
            ["update", "mail", "ana", "--field", "question=new", "--rm-field", "pin", "--url", ""], input: "pw2")
        #expect(update.status == 0, "\(update.stderrText)")
        #expect(try v.run(["get", "--field", "question", "mail", "ana"]).stdoutText == "new\n")
        #expect(try v.run(["get", "--field", "pin", "mail", "ana"]).status == 44)
        #expect(try v.run(["get", "--field", "url", "mail", "ana"]).status == 44)
        #expect(try v.run(["get", "--field", "notes", "mail", "ana"]).stdoutText == "first line\nsecond line\n")

        // save on an existing item merges fields too.
        #expect(try v.run(["save", "mail", "ana", "--hidden-field", "pin"], input: "9999\npw3").status == 0)
        #expect(try v.run(["get", "--field", "pin", "mail", "ana"]).stdoutText == "9999\n")
        #expect(try v.run(["get", "--field", "question", "mail", "ana"]).stdoutText == "new\n")
    }

    @Test func accessibleIsSetAndListed() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "a", "b", "--accessible", "after-first-unlock"], input: "pw").status == 0)
        #expect(try v.run(["save", "c", "d"], input: "pw").status == 0)
        let list = try v.run(["ls", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        #expect(items.map { $0["accessible"] as? String } == ["afterFirstUnlock", "whenUnlocked"])
        #expect(try v.run(["update", "c", "d", "--accessible", "after-first-unlock"], input: "pw").status == 0)
        #expect(try v.run(["update", "c", "d", "--accessible", "always"], input: "pw").status == 2)
    }

    @Test(arguments: [
        ["--field", "novalue"], ["--field", "=v"], ["--field", "url=x"], ["--hidden-field", "totp"],
        ["--hidden-field", "a\u{1B}b"], ["--rm-field", ""], ["--notes-file", "/nonexistent/notes"],
        ["--notes-file", "-"], ["--comment", "c", "--notes-file", "/etc/hostname"],
    ])
    func badFieldInputIsAUsageErrorAndStoresNothing(arguments: [String]) throws {
        let v = try ProcessTestVault()
        let result = try v.run(["add", "svc", "acc"] + arguments, input: "pw")
        #expect(result.status == 2, "\(result.stderrText)")
        #expect(result.stderrText.split(separator: "\n").count == 2)
        #expect(try v.run(["get", "svc", "acc"]).status == 44)
    }

    @Test func notesThatAreNotTextAreRefused() throws {
        let v = try ProcessTestVault()
        let notes = v.directory.file("bin")
        try Data([0x66, 0xFF, 0xFE]).write(to: notes)
        let result = try v.run(["add", "svc", "acc", "--notes-file", notes.path], input: "pw")
        #expect(result.status == 2)
        #expect(result.stderrText.contains("not UTF-8"))
        #expect(try v.run(["get", "svc", "acc"]).status == 44)
    }

    @Test func listJSONHasURLAndHasTotpButNoSecret() throws {
        let v = try ProcessTestVault()
        #expect(
            try v.run(
                ["add", "mail", "ana", "--url", "https://m.example", "--hidden-field", "pin"],
                input: "HIDDENPIN\nSECRETPW"
            ).status == 0)
        #expect(try v.run(["add", "bank", "bo"], input: "pw").status == 0)
        #expect(try v.run(["totp", "set", "mail", "ana"], input: Self.uri + "\n").status == 0)
        let list = try v.run(["ls", "--json"])
        #expect(list.status == 0)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        let mail = try #require(items.first { $0["service"] as? String == "mail" })
        let bank = try #require(items.first { $0["service"] as? String == "bank" })
        #expect(mail["url"] as? String == "https://m.example")
        #expect(mail["hasTotp"] as? Bool == true)
        #expect(bank["url"] is NSNull)
        #expect(bank["hasTotp"] as? Bool == false)
        for forbidden in ["HIDDENPIN", "SECRETPW", "JBSWY3DPEHPK3PXP", "otpauth"] {
            #expect(!list.stdoutText.contains(forbidden), "\(forbidden)")
        }
    }

    @Test func totpSetShowAndRemove() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], input: "pw").status == 0)
        #expect(try v.run(["totp", "mail", "ana"]).status == 44)
        #expect(try v.run(["totp", "set", "mail", "ana"], input: Self.uri).status == 0)
        let before = try oathtool(["--totp", "-b", "JBSWY3DPEHPK3PXP"])
        let json = try v.run(["totp", "mail", "ana", "--json"])
        let after = try oathtool(["--totp", "-b", "JBSWY3DPEHPK3PXP"])
        #expect(json.status == 0, "\(json.stderrText)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        let code = try #require(object["code"] as? String)
        // oathtool, run just before and just after, agrees (a step may end in between).
        #expect(code == before || code == after, "\(code) vs \(before)/\(after)")
        #expect(object["digits"] as? Int == 6)
        #expect(object["period"] as? Int == 30)
        #expect(object["algorithm"] as? String == "SHA1")
        #expect(object["issuer"] as? String == "Example")
        #expect(object["account"] as? String == "ana")
        let left = try #require(object["secondsLeft"] as? Int)
        #expect((1...30).contains(left))
        #expect(try v.run(["get", "--field", "totp", "mail", "ana"]).stdoutText.count == 7)

        // A bare base32 secret, lower case and grouped, is stored as a URI.
        #expect(try v.run(["totp", "set", "mail", "ana"], input: "jbsw y3dp ehpk 3pxp\n").status == 0)
        let first = try oathtool(["--totp", "-b", "JBSWY3DPEHPK3PXP"])
        let again = try v.run(["totp", "mail", "ana"]).stdoutText.trimmingCharacters(in: .newlines)
        let last = try oathtool(["--totp", "-b", "JBSWY3DPEHPK3PXP"])
        #expect(again == first || again == last)

        #expect(try v.run(["totp", "rm", "mail", "ana"]).status == 0)
        #expect(try v.run(["totp", "mail", "ana"]).status == 44)
        #expect(try v.run(["totp", "rm", "mail", "ana"]).status == 44)
        #expect(try v.run(["get", "mail", "ana"]).stdoutText == "pw\n")
    }

    @Test(arguments: [
        "", "not!base32", "otpauth://totp/x?secret=", "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1",
        "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=12", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&algorithm=MD5",
    ])
    func aBadSeedIsExit2AndNothingIsStored(seed: String) throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], input: "pw").status == 0)
        #expect(try v.run(["totp", "set", "mail", "ana"], input: Self.uri).status == 0)
        let result = try v.run(["totp", "set", "mail", "ana"], input: seed)
        #expect(result.status == 2)
        #expect(result.stderrText.contains("nothing was stored"))
        #expect(!result.stderrText.contains("JBSWY3DPEHPK3PXP"))
        // The earlier seed is still there.
        #expect(try v.run(["totp", "mail", "ana"]).status == 0)
    }

    @Test func totpUsageErrors() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["totp", "mail"]).status == 2)
        #expect(try v.run(["totp", "frob", "mail", "ana"]).status == 2)
        #expect(try v.run(["totp", "set", "mail", "ana", "--json"], input: Self.uri).status == 2)
        #expect(try v.run(["totp", "set", "none", "ana"], input: Self.uri).status == 44)
    }
}
