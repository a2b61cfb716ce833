import FobStore
import FobTestSupport
import Foundation
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
}
