import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

/// Command-line cases of a review: each refused clearly rather than done wrong.
@Suite struct RoundFourCaseTests {
    @Test func mvToAnEmptyServiceIsRefusedByTheRulesOfAdd() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let result = h.run(["mv", "mail", "ana", "", "ana"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("the service cannot be empty (an empty user ID is allowed)"), "\(result.stderr)")
        #expect(try h.secret("mail", "ana") == Array("pw".utf8))
    }

    @Test func backupToADirectorySaysSo() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let directory = h.directory.file("backups").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for given in [directory, directory + "/"] {
            let result = h.run(["backup", given])
            #expect(result.status == 1)
            #expect(
                result.stderr.contains(
                    "\(directory) is a directory; name the file to write, such as \(directory)/vault-backup.db"),
                "\(result.stderr)")
        }
    }

    @Test func theGitAnswerIsWrittenIntoOneBufferOfItsExactSize() throws {
        var message = GitCredentialMessage()
        message.username = "ana"
        message.password = SecretBytes(utf8: String(repeating: "p", count: 5000))
        message.passwordExpiry = 1_900_000_000
        message.oauthRefreshToken = SecretBytes(utf8: String(repeating: "r", count: 3000))
        let answer = try #require(message.answer())
        // Reserved at this length, the buffer never grew (no unwiped copy left behind).
        #expect(message.answerLength == answer.count)
        #expect(answer.starts(with: Array("username=ana\npassword=ppp".utf8)))
    }
}
