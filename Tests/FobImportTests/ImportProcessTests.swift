import FobImport
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

private func fixturePath(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
}

/// `fob import`, `export` and `backup` run as processes.
@Suite struct ImportProcessTests {
    @Test func importPrintsTheSummaryAndWhatWasNotKept() throws {
        let v = try ProcessTestVault()
        let result = try v.run(["import", "keepassxc-xml", fixturePath("keepassxc.xml")])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.contains("3 added, 0 renamed, 0 replaced, 0 skipped"))
        #expect(result.stdoutText.contains("not kept: entry 1 (\"Bank\"): 1 attachment"))
        #expect(try v.run(["get", "Mail", "ana@example.com", "--raw"]).stdoutText == "s3cr3t, \"quoted\"")
        let again = try v.run(["import", "keepassxc-csv", fixturePath("keepassxc.csv"), "--on-duplicate", "skip"])
        #expect(again.stdoutText.contains("0 added, 0 renamed, 0 replaced, 3 skipped"))
    }

    @Test(arguments: [
        ("chrome-csv", "name,url,username,password\nx,\"unclosed,y,z\n", "line 2: a quoted field is not closed"),
        ("firefox-csv", "\"url\",\"username\",\"password\"\n\"a\"b,c,d\n", "line 2: text after a closing quote"),
        (
            "bitwarden-json", "{\"encrypted\":false,\"items\":[{\"type\":\"login\"}]}",
            "items[0].type: expected a number"
        ),
        ("fob-json", "{\"format\":\"fob-json\",\"version\":1,\"items\":[", "not JSON, or a truncated file"),
        ("keepassxc-xml", "<KeePassFile><Root><Group><Entry>", "not well-formed XML"),
        ("1password-csv", "", ""),
    ])
    func badFilesGiveClearErrorsAndLeaveTheVaultUnchanged(format: String, content: String, message: String) throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "keep", "me"], stdin: Array("pw".utf8)).status == 0)
        let file = v.directory.file("bad")
        var bytes = Array(content.utf8)
        if message.isEmpty {
            bytes =
                Array("Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\ncaf".utf8) + [0xE9]
                + Array(",,u,p,,,,,\n".utf8)
        }
        try Data(bytes).write(to: file)
        let before = try Data(contentsOf: URL(fileURLWithPath: v.path))
        let result = try v.run(["import", format, file.path])
        #expect(result.status == 1)
        #expect(
            result.stderrText.contains(message.isEmpty ? "line 2: the text is not valid UTF-8" : message),
            "\(result.stderrText)")
        #expect(result.stderrText.contains("nothing was changed"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: v.path)) == before)
        if message.isEmpty {
            let latin = try v.run(["import", format, file.path, "--encoding", "latin1"])
            #expect(latin.status == 0, "\(latin.stderrText)")
            #expect(try v.run(["get", "café", "u"]).stdoutText == "p\n")
        }
    }

    @Test func encryptedExportsSayExportUnencrypted() throws {
        let v = try ProcessTestVault()
        let result = try v.run(["import", "bitwarden-json", fixturePath("bitwarden-encrypted.json")])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("export it unencrypted"))
        #expect(!result.stderrText.contains("wrong password"))
    }

    @Test func usageErrors() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["import", "lastpass-csv", "x"]).status == 2)
        #expect(try v.run(["import", "chrome-csv", "x", "--on-duplicate", "merge"]).status == 2)
        #expect(try v.run(["import", "chrome-csv", "x", "--encoding", "klingon"]).status == 2)
        #expect(try v.run(["import", "fob-json", "x", "--encoding", "latin1"]).status == 2)
        #expect(try v.run(["import", "chrome-csv", "x", "--source-password-file", v.passwordFile]).status == 2)
        #expect(try v.run(["export", "--format", "xml"]).status == 2)
    }

    @Test func nothingImportableExitsNonZero() throws {
        let v = try ProcessTestVault()
        let file = v.directory.file("empty.csv")
        try Data("name,url,username,password\n,,,\n".utf8).write(to: file)
        let result = try v.run(["import", "chrome-csv", file.path])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("nothing could be imported"))
        #expect(result.stderrText.contains("not imported: line 2"))
    }

    @Test func dryRunChangesNothing() throws {
        let v = try ProcessTestVault()
        let before = try Data(contentsOf: URL(fileURLWithPath: v.path))
        let result = try v.run(["import", "bitwarden-json", fixturePath("bitwarden.json"), "--dry-run"])
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("Dry run, nothing changed: 4 entries"))
        #expect(result.stdoutText.contains("4 added"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: v.path)) == before)
    }

    @Test func exportIsPrivatePlaintextWithAWarningAndReimportsExactly() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["import", "bitwarden-json", fixturePath("bitwarden.json")]).status == 0)
        let out = v.directory.file("export.json")
        let export = try v.run(["export", "--output", out.path])
        #expect(export.status == 0, "\(export.stderrText)")
        #expect(export.stderrText.contains("plaintext"))
        var info = stat()
        #expect(stat(out.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try v.run(["export", "--output", out.path]).status == 1)
        let target = try ProcessTestVault()
        let imported = try target.run(["import", "fob-json", out.path])
        #expect(imported.stdoutText.contains("4 added"), "\(imported.stderrText)")
        let again = v.directory.file("again.json")
        #expect(try target.run(["export", "--output", again.path]).status == 0)
        #expect(try Data(contentsOf: again) == Data(contentsOf: out))
    }

    /// An entry in the reserved access group `fob.sync` (sync's state) is
    /// refused with exit 2 before anything is written.
    @Test func anEntryInTheReservedGroupIsRefused() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], input: "pw").status == 0)
        let out = v.directory.file("export.json")
        #expect(try v.run(["export", "--output", out.path]).status == 0)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any])
        var items = try #require(object["items"] as? [[String: Any]])
        items[0]["service"] = "other"
        items[0]["accessGroup"] = "fob.sync"
        object["items"] = items
        try JSONSerialization.data(withJSONObject: object).write(to: out)
        let refused = try v.run(["import", "fob-json", out.path])
        #expect(refused.status == 2, "\(refused.stderrText)")
        #expect(refused.stderrText.contains("\"fob.sync\" is reserved"), "\(refused.stderrText)")
        #expect(try v.run(["ls"]).stdoutText.contains("other") == false)
    }

    /// A failed export (a wrong password, no way to ask one) leaves no file
    /// behind, so the retry is not refused as "exists"; and without a
    /// terminal it says that export always asks the password.
    @Test func aFailedExportLeavesNoFileBehind() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], input: "pw").status == 0)
        let out = v.directory.file("export.json")
        let wrong = v.directory.file("wrong")
        try Data("not the password\n".utf8).write(to: wrong)
        #expect(
            try v.run(["export", "--output", out.path], environment: ["FOB_PASSWORD_FILE": wrong.path]).status == 51)
        #expect(!FileManager.default.fileExists(atPath: out.path))
        let asked = try v.run(["export", "--output", out.path], environment: ["FOB_PASSWORD_FILE": ""])
        #expect(asked.status == 36)
        #expect(
            asked.stderrText.contains("export asks the master password every time, even while the agent is unlocked"))
        #expect(!FileManager.default.fileExists(atPath: out.path))
        #expect(try v.run(["export", "--output", out.path]).status == 0)
        // A file that was there before a failed --force export stays.
        #expect(
            try v.run(["export", "--output", out.path, "--force"], environment: ["FOB_PASSWORD_FILE": wrong.path])
                .status == 51)
        #expect(FileManager.default.fileExists(atPath: out.path))
    }

    @Test func exportRefusesATerminalWithoutForce() throws {
        let v = try ProcessTestVault()
        let session = try FobProcess.startInTerminal(["export"], environment: v.environment)
        #expect(session.wait() == 1)
        #expect(session.outputText.contains("refusing to write every secret in plaintext to a terminal"))
    }

    @Test func fobVaultMergesWithNewerWinning() throws {
        let a = try ProcessTestVault()
        let b = try ProcessTestVault(password: "other pw")
        #expect(try a.run(["add", "mail", "ana"], stdin: Array("old".utf8)).status == 0)
        #expect(try a.run(["add", "only-a", "x"], stdin: Array("a".utf8)).status == 0)
        usleep(20_000)
        #expect(try b.run(["add", "mail", "ana"], stdin: Array("new".utf8)).status == 0)
        #expect(try b.run(["add", "only-b", "y"], stdin: Array("b".utf8)).status == 0)
        let merged = try a.run([
            "import", "fob-vault", b.path, "--source-password-file", b.passwordFile, "--on-duplicate", "newer",
        ])
        #expect(merged.status == 0, "\(merged.stderrText)")
        #expect(merged.stdoutText.contains("1 added, 0 renamed, 1 replaced, 0 skipped"))
        #expect(try a.run(["get", "mail", "ana", "--raw"]).stdoutText == "new")
        #expect(try a.run(["get", "only-b", "y", "--raw"]).stdoutText == "b")
        let back = try b.run([
            "import", "fob-vault", a.path, "--source-password-file", a.passwordFile, "--on-duplicate", "newer",
        ])
        #expect(back.stdoutText.contains("1 added, 0 renamed, 0 replaced, 2 skipped"), "\(back.stdoutText)")
        let wrong = try a.run(["import", "fob-vault", b.path, "--source-password-file", a.passwordFile])
        #expect(wrong.status == 51)
    }

    @Test func fobVaultRoundTripKeepsEveryAttribute() throws {
        let a = try ProcessTestVault()
        let b = try ProcessTestVault(password: "second")
        let source = try Vault(url: URL(fileURLWithPath: a.path))
        try source.unlock(password: .text(a.password))
        try source.applyImport((0..<5).map { .add(fullItem($0)) })
        source.lock()
        let merged = try b.run(["import", "fob-vault", a.path, "--source-password-file", a.passwordFile])
        #expect(merged.stdoutText.contains("5 added"), "\(merged.stderrText)")
        let fromA = try a.run(["export"])
        let fromB = try b.run(["export"])
        #expect(fromA.status == 0 && fromB.status == 0)
        #expect(fromA.stdout == fromB.stdout)
        #expect(fromA.stdoutText.contains("\"secretBase64\""))
    }

    @Test func backupWritesACopyThatOpensWithTheSamePassword() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], stdin: Array("pw".utf8)).status == 0)
        let copy = v.directory.file("copy.db")
        #expect(try v.run(["backup", copy.path]).status == 0)
        var info = stat()
        #expect(stat(copy.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try v.run(["get", "mail", "ana", "--raw"], environment: ["FOB_VAULT": copy.path]).stdoutText == "pw")
        #expect(try v.run(["backup", copy.path]).status == 1)
    }

    @Test func largeImportsShowProgressOnATerminal() throws {
        let v = try ProcessTestVault()
        let items = (0..<1_200).map { Item(service: "s\($0)", account: "a", secret: SecretBytes(utf8: "p\($0)")) }
        let file = v.directory.file("many.json")
        try Data(FobJSON.write(items)).write(to: file)
        let session = try FobProcess.startInTerminal(["import", "fob-json", file.path], environment: v.environment)
        #expect(session.wait() == 0)
        #expect(session.outputText.contains("fob: writing 1000/1200"))
        #expect(session.outputText.contains("1200 added"))
        let quiet = try ProcessTestVault()
        let piped = try quiet.run(["import", "fob-json", file.path])
        #expect(piped.status == 0)
        #expect(piped.stderrText.isEmpty)
    }

    @Test func anEntryOverALimitIsNamedAndNothingIsWritten() throws {
        let v = try ProcessTestVault()
        let file = v.directory.file("big.csv")
        let longName = String(repeating: "x", count: 65_537)
        try Data("name,url,username,password\nok,,u,p\n\(longName),,u,p\n".utf8).write(to: file)
        let result = try v.run(["import", "chrome-csv", file.path])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("line 3"), "\(result.stderrText)")
        #expect(try v.run(["get", "ok", "u"]).status == 44)
    }

    @Test func passStoreMadeWithPassAndGpg() throws {
        guard
            let pass = ["/usr/bin/pass", "/usr/local/bin/pass"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            }),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/gpg")
        else {
            print(
                "ImportProcessTests: skipping the pass import test: pass or gpg is not installed (scripts/setup --test)"
            )
            return
        }
        let v = try ProcessTestVault()
        let home = v.directory.file("gnupg")
        let store = v.directory.file("store")
        try FileManager.default.createDirectory(
            at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let env = FobProcess.baseEnvironment.merging(["GNUPGHOME": home.path, "PASSWORD_STORE_DIR": store.path]) { $1 }
        defer {
            _ = try? ChildProcess.run(
                executable: "/usr/bin/gpgconf", arguments: ["--kill", "gpg-agent"], environment: env)
        }
        func run(_ exe: String, _ args: [String], _ input: String = "") throws -> ProcessResult {
            try ChildProcess(executable: exe, arguments: args, environment: env, stdin: Array(input.utf8)).wait(
                timeout: 60)
        }
        #expect(
            try run(
                "/usr/bin/gpg",
                [
                    "--batch", "--passphrase", "", "--quick-gen-key", "Fob Test <fob@example.invalid>",
                    "default", "default", "never",
                ]
            ).status == 0)
        #expect(try run(pass, ["init", "fob@example.invalid"]).status == 0)
        #expect(
            try run(
                pass, ["insert", "-m", "email/gmail.com"],
                "g-pass, \"q\"\nuser: ana@gmail.com\nurl: https://mail.google.com\notpauth://totp/G:ana?secret=JBSWY3DPEHPK3PXP\nrecovery: 1234\nfree text\n"
            ).status == 0)
        #expect(try run(pass, ["insert", "-m", "bank/bob"], "b4nk\n").status == 0)
        let result = try v.run(["import", "pass", store.path], environment: ["GNUPGHOME": home.path])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.contains("2 added"))
        #expect(try v.run(["get", "email/gmail.com", "ana@gmail.com", "--raw"]).stdoutText == "g-pass, \"q\"")
        let exported = try v.run(["export"]).stdoutText
        #expect(exported.contains(#""url":"https://mail.google.com""#))
        #expect(exported.contains(#""oneTimePassword":"otpauth://totp/G:ana?secret=JBSWY3DPEHPK3PXP""#))
        #expect(exported.contains(#""name":"recovery","value":"1234""#))
        #expect(exported.contains(#""notes":"free text""#))
        #expect(try v.run(["get", "bank", "bob", "--raw"]).stdoutText == "b4nk")
        let missing = try v.run(
            ["import", "pass", store.path], environment: ["GNUPGHOME": v.directory.file("nokeys").path])
        #expect(missing.status == 1)
        #expect(missing.stderrText.contains("gpg could not decrypt"))
    }
}
