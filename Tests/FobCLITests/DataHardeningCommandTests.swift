import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobCLI

/// Commands that wrote what they were given as it was, or said the wrong
/// thing: credential answers, exports, imports and their messages.
@Suite struct DataHardeningCommandTests {
    /// An internet password saved by other means (FobSecurity) whose user
    /// name or secret holds a line break is never written to git: `get`
    /// answers nothing (git then asks the user) and says why on stderr.
    @Test func gitCredentialGetNeverEmitsALineBreak() throws {
        let h = try CLIHarness()
        let vault = try h.openVault()
        var evil = Item(
            itemClass: .internetPassword, service: "git.example", account: "ana\nusername=root",
            secret: .text("pw"))
        evil.internetProtocol = "htps"
        try vault.add(evil)
        var multi = Item(
            itemClass: .internetPassword, service: "other.example", account: "bo",
            secret: .text("pw\npassword=stolen"))
        multi.internetProtocol = "htps"
        try vault.add(multi)
        for host in ["git.example", "other.example"] {
            let run = h.run(["git-credential", "get"], input: "protocol=https\nhost=\(host)\n")
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.isEmpty, "\(run.stdoutText)")
            #expect(run.stderr.contains("line break"), "\(run.stderr)")
        }
        // store of a URL whose user name decodes to a line break: refused, nothing kept.
        let store = h.run(
            ["git-credential", "store"], input: "url=https://ana%0Ausername=root:pw@new.example/\n")
        #expect(store.status == 1)
        #expect(try vault.allItems().count == 2)
    }

    /// `export --format csv` then `import fob-csv` into another vault gives
    /// the same items (what CSV holds), and the export warns that custom
    /// fields were left out.
    @Test func csvExportImportsBackWithFobCSVAndWarnsWhatItDrops() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "=SUM(A1)", "ana", "--label", "@x", "--field", "team=ops"], input: "+pw").status == 0)
        #expect(h.run(["add", "mail", "bo", "--kind", "token"], input: "s, \"q\"\nline").status == 0)
        let file = h.directory.file("export.csv").path
        let export = h.run(["export", "--format", "csv", "--output", file])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr.contains("csv cannot hold custom fields: 1 item"), "\(export.stderr)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains(#""'=SUM(A1)",ana,"'+pw""#), "\(text)")

        let other = try CLIHarness()
        let imported = other.run(["import", "fob-csv", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdoutText.contains("2 added"), "\(imported.stdoutText)")
        let a = try other.openVault().item(service: "=SUM(A1)", account: "ana")
        #expect(a.secret == .text("+pw"))
        #expect(a.label == "@x")
        let b = try other.openVault().item(service: "mail", account: "bo")
        #expect(b.secret == .text("s, \"q\"\nline"))
        #expect(b.kind == .token)
        let original = try h.openVault().item(service: "mail", account: "bo")
        #expect(Int(b.modified.timeIntervalSince1970) == Int(original.modified.timeIntervalSince1970))
    }

    /// `export --force` over an existing file wrote into it in place (after
    /// truncating it) and ignored fchmod's result. It now writes a new 0600
    /// file and renames it over: another hard link to the old file keeps its
    /// contents, and a failed export (a wrong password) leaves the old file.
    @Test func exportForceReplacesTheFileWithANewPrivateOne() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "s3cret").status == 0)
        let path = h.directory.file("out.json").path
        let link = h.directory.file("link.json").path
        try Data("old contents\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        #expect(Glibc.link(path, link) == 0)

        let wrong = try h.file("wrong", "not the password\n")
        let failed = h.run(
            ["--vault", h.vaultPath, "--password-file", wrong, "export", "--output", path, "--force"], plain: true)
        #expect(failed.status == 51)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old contents\n")

        let done = h.run(["export", "--output", path, "--force"])
        #expect(done.status == 0, "\(done.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("s3cret"))
        #expect(try String(contentsOfFile: link, encoding: .utf8) == "old contents\n")
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: h.directory.url.path)
            .filter { $0.contains("fob-export") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        // Without --force, still refused.
        #expect(h.run(["export", "--output", path]).status == 1)
    }

    /// Messages that misled: a missing pass directory, a wrong source
    /// password, an import where everything was skipped, docker's version.
    @Test func importAndHelperMessagesSayWhatHappened() throws {
        let h = try CLIHarness()
        let pass = h.run(["import", "pass", "/nonexistent/store"])
        #expect(pass.status == 1)
        #expect(pass.stderr.contains("no such directory: /nonexistent/store"), "\(pass.stderr)")

        let source = try CLIHarness()
        #expect(source.run(["add", "mail", "ana"], input: "pw").status == 0)
        let wrong = try h.file("wrong", "not it\n")
        let vault = h.run(["import", "fob-vault", source.vaultPath, "--source-password-file", wrong])
        #expect(vault.status == 51)
        #expect(vault.stderr.contains("source vault \(source.vaultPath)"), "\(vault.stderr)")
        #expect(vault.stderr.contains("--source-password-file"), "\(vault.stderr)")

        let csv = try h.file("c.csv", "name,url,username,password\nmail,,ana,pw\nweb,,bo,pw\n")
        #expect(h.run(["import", "chrome-csv", csv]).status == 0)
        let skipped = h.run(["import", "chrome-csv", csv, "--on-duplicate", "skip"])
        #expect(skipped.status == 0)
        #expect(skipped.stdoutText.contains("Nothing imported from \(csv) (chrome-csv): 2 entries read"))
        #expect(!skipped.stdoutText.contains("Imported"), "\(skipped.stdoutText)")

        let version = h.run(["docker-credential", "version"])
        #expect(version.status == 0)
        #expect(version.stdoutText == "docker-credential-fob (fob) \(FobCLI.version)\n")
    }

    /// An imported counter-based seed is a hidden field, not a one-time seed.
    @Test func importedHOTPSeedIsAHiddenFieldNotASeed() throws {
        let h = try CLIHarness()
        let hotp = "otpauth://hotp/Bank:ana?secret=JBSWY3DPEHPK3PXP&counter=1"
        let csv = try h.file(
            "1p.csv", "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\nBank,,ana,pw,\(hotp),,,,\n")
        let imported = h.run(["import", "1password-csv", csv])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdoutText.contains("HOTP"), "\(imported.stdoutText)")
        #expect(h.run(["totp", "Bank", "ana"]).status == 44)
        #expect(h.run(["get", "Bank", "ana", "--field", "HOTP"]).stdoutText == hotp + "\n")
    }

    /// The `--env-file` example of docs/cli.md parses as the page says:
    /// the `# comment` after an entry is not part of the account.
    @Test func theDocumentedEnvFileExampleParses() throws {
        let page = try String(
            contentsOf: FobProcess.packageRoot.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let start = try #require(page.range(of: "The env file:\n\n```\n"))
        let end = try #require(page.range(of: "\n```", range: start.upperBound..<page.endIndex))
        let example = String(page[start.upperBound..<end.lowerBound]) + "\n"
        let bindings = try EnvBinding.parseFile(Array(example.utf8))
        #expect(
            bindings == [
                EnvBinding(name: "GITHUB_TOKEN", service: "github.com", account: "ci"),
                EnvBinding(name: "API_KEY", service: "api/v2", account: "svc/reader"),
            ])
        #expect(try EnvBinding.parseFile(Array("A=s/a#b\nB=s/x\t# c\n".utf8)).map(\.account) == ["a#b", "x"])
    }
}
