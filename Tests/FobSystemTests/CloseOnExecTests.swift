import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Every descriptor Fob makes is close-on-exec from the start.
@Suite struct CloseOnExecTests {
    @Test func pipesAreCloseOnExecFromTheStart() throws {
        let plain = try #require(CloseOnExec.pipe())
        let polled = try #require(CloseOnExec.pipe(nonBlocking: true))
        defer { [plain.read, plain.write, polled.read, polled.write].forEach { close($0) } }
        for fd in [plain.read, plain.write, polled.read, polled.write] {
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        }
        #expect(fcntl(plain.read, F_GETFL) & O_NONBLOCK == 0)
        #expect(fcntl(polled.read, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(polled.write, F_GETFL) & O_NONBLOCK != 0)
    }

    /// The whole kind, not one call site: no source file under Sources/
    /// makes a descriptor that is inheritable, even for a moment.
    @Test func noSourceMakesAnInheritableDescriptor() throws {
        let root = FobProcess.packageRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        var offenders: [String] = []
        for file in files {
            let text = try String(contentsOfFile: root.appendingPathComponent(file).path, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code =
                    line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
                    ?? ""
                let bad =
                    code.contains(" pipe(") || code.contains("(pipe(") || code.contains(" accept(")
                    || code.contains("= accept(")
                    || (code.contains(" socket(") && !code.contains("SOCK_CLOEXEC"))
                    || (code.range(of: #"(^|[ (=.])open\("#, options: .regularExpression) != nil
                        && code.contains("O_") && !code.contains("O_CLOEXEC"))
                if bad && !code.contains("func ") {
                    offenders.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }
}
