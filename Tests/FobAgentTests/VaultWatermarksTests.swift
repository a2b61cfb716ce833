import FobAgent
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@Suite struct VaultWatermarksTests {
    @Test func aStateHomeThatDoesNotExistYetIsMadeAndTheCounterKept() throws {
        let directory = TemporaryDirectory(prefix: "fob-watermarks")
        let state = directory.file("not-yet/state").path
        let marks = VaultWatermarks(environment: ["XDG_STATE_HOME": state, "HOME": directory.url.path])
        marks.set(7, of: "0123456789abcdef0123456789abcdef")
        #expect(marks.counter(of: "0123456789abcdef0123456789abcdef") == 7)
        var st = stat()
        #expect(stat(state, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700)
        #expect(stat(marks.directory, &st) == 0 && st.st_mode & 0o777 == 0o700)
    }

    @Test func aHomeThatDoesNotExistIsNeverMade() throws {
        let directory = TemporaryDirectory(prefix: "fob-watermarks")
        let home = directory.file("no-home").path
        let marks = VaultWatermarks(environment: ["HOME": home])
        marks.set(7, of: "0123456789abcdef0123456789abcdef")
        #expect(marks.counter(of: "0123456789abcdef0123456789abcdef") == nil)
        #expect(!FileManager.default.fileExists(atPath: home))
    }
}
