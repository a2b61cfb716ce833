import Foundation
import Testing
import FobStore
import FobTestSupport

@Suite struct CLIProcessTests {
    @Test func versionRuns() throws {
        let result = try FobProcess.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdoutText.hasPrefix("fob "))
    }
}
