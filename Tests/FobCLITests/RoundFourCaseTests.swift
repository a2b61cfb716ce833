import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

/// Command-line cases of a review: each refused clearly rather than done wrong.
@Suite struct RoundFourCaseTests {
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
