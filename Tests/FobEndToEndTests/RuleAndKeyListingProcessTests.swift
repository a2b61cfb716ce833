import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// What `fob access show` and `fob ssh ls` print, through the built `fob`:
/// rules in columns padded with spaces under a line naming the vault's
/// default; an empty key list said on standard error with how to add a key.
@Suite struct RuleAndKeyListingProcessTests {
    let vault: ProcessTestVault

    init() throws {
        vault = try ProcessTestVault()
    }

    /// `path` with its symbolic links resolved, as `fob access grant` stores it.
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    @Test func accessShowPadsItsColumnsAndNamesTheVaultsDefault() throws {
        #expect(try vault.run(["add", "svc", "acct"], input: "s3cret").status == 0)
        #expect(try vault.run(["add", "mail.example.com", "ana"], input: "0ther").status == 0)
        #expect(try vault.run(["access", "set", "mail.example.com", "ana", "deny"]).status == 0)
        #expect(try vault.run(["access", "grant", "svc", "acct", "--program", "/bin/sh"]).status == 0)
        let shown = try vault.run(["access", "show"])
        #expect(shown.status == 0, "\(shown.stderrText)")
        #expect(
            shown.stdoutText == """
                Default rule: any (stored in the vault; 'fob access default any|ask' changes it)
                SERVICE           ACCOUNT  RULE
                mail.example.com  ana      deny
                svc               acct     default (any)
                  trusted \(Self.resolved("/bin/sh"))

                """)
        #expect(!shown.stdoutText.contains("\t"))
        #expect(try vault.run(["access", "default", "ask"]).status == 0)
        let one = try vault.run(["access", "show", "svc", "acct"])
        #expect(
            one.stdoutText.hasPrefix(
                """
                Default rule: ask (stored in the vault; 'fob access default any|ask' changes it)
                SERVICE  ACCOUNT  RULE
                svc      acct     default (ask)

                """), "\(one.stdoutText)")
    }

    @Test func aVaultMadeBeforeAccessRulesSaysWhereItsDefaultComesFrom() throws {
        let old = try ProcessTestVault(password: V1Fixture.password, create: false)
        try V1Fixture.write(to: old.directory.file("vault.db"))
        let shown = try old.run(["access", "show", "mail", "ana"])
        #expect(shown.status == 0, "\(shown.stderrText)")
        #expect(
            shown.stdoutText == """
                Default rule: any (the vault predates access rules; 'fob access default ask' makes Fob ask)
                SERVICE  ACCOUNT  RULE
                mail     ana      default (any)

                """)
    }

    @Test func sshLsWithNoKeysSaysSoAndHowToAddOne() throws {
        let empty = try vault.run(["ssh", "ls"])
        #expect(empty.status == 0)
        #expect(empty.stdout.isEmpty)
        #expect(
            empty.stderrText
                == "fob: the vault has no SSH keys; add one with 'fob ssh keygen NAME' or 'fob ssh import FILE'\n")
        // The commands it names are the real ones: after keygen, ls lists the key and says nothing else.
        #expect(try vault.run(["ssh", "keygen", "work"]).status == 0)
        let listed = try vault.run(["ssh", "ls"])
        #expect(listed.status == 0)
        #expect(listed.stdoutText.hasPrefix("work\twork\ted25519 256\tSHA256:"), "\(listed.stdoutText)")
        #expect(listed.stderr.isEmpty)
    }
}
