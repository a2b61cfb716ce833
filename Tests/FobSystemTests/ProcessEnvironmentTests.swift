import FobSystem
import FoundationEssentials
import Glibc
import Testing

/// `ProcessEnvironment` reads the environment as FoundationEssentials does.
@Suite struct ProcessEnvironmentTests {
    @Test func currentEqualsProcessInfo() {
        #expect(ProcessEnvironment.current() == ProcessInfo.processInfo.environment)
    }

    @Test func splitsAtTheFirstEqualsSkipsEntriesWithoutOneAndTheLaterNameWins() {
        let texts: [[UInt8]] = [
            Array("A=1".utf8), Array("A=2".utf8), Array("B".utf8), Array("=x".utf8), Array("C=a=b".utf8),
            Array("D=".utf8), [0x45, 0x3D, 0x66, 0xFF],
        ]
        var entries: [UnsafeMutablePointer<CChar>?] = texts.map { bytes in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
            pointer[bytes.count] = 0
            return pointer
        }
        entries.append(nil)
        defer { entries.forEach { $0?.deallocate() } }
        let result = entries.withUnsafeMutableBufferPointer { ProcessEnvironment.dictionary(of: $0.baseAddress) }
        #expect(result == ["A": "2", "": "x", "C": "a=b", "D": "", "E": "f\u{FFFD}"])
        #expect(ProcessEnvironment.dictionary(of: nil) == [:])
    }
}
