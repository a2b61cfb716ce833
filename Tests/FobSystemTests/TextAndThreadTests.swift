import FobSystem
import FoundationEssentials
import Synchronization
import Testing

/// The helpers that stand in for Foundation proper: each gives what the
/// Foundation call it replaced gave for the same input.
@Suite struct TextFunctionTests {
    @Test func trimmingSpacesKeepsLineBreaks() {
        #expect(" \t a b \u{00A0}".trimmingSpaces() == "a b")
        #expect("\n a \n".trimmingSpaces() == "\n a \n")
        #expect("   ".trimmingSpaces() == "")
    }

    @Test func trimmingSpacesAndNewlines() {
        #expect("\r\n\t 42 \u{2028}\u{85}".trimmingSpacesAndNewlines() == "42")
        #expect("\n\n".trimmingSpacesAndNewlines() == "")
        #expect("e\u{301} ".trimmingSpacesAndNewlines() == "e\u{301}")
    }

    @Test func percentEncodingKeepsLettersMarksAndDigitsOfAnyScript() {
        #expect("a b:c/é1".percentEncoded(allowing: TextScalars.isAlphanumeric) == "a%20b%3Ac%2Fé1")
        #expect("🔑".percentEncoded(allowing: TextScalars.isAlphanumeric) == "%F0%9F%94%91")
    }

    @Test func percentDecoding() {
        #expect("a%20b%3a%C3%A9".percentDecoded() == "a b:é")
        #expect("100%".percentDecoded() == nil)
        #expect("%zz".percentDecoded() == nil)
        #expect("%FF".percentDecoded() == nil)
    }

    @Test func hex() {
        #expect(HexText.bytes([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
        #expect(HexText.byte(0xAB, uppercase: true) == "AB")
        #expect(HexText.value(UInt8(ascii: "F")) == 15)
        #expect(HexText.value(UInt8(ascii: "g")) == nil)
    }

    @Test(arguments: [
        ("/a/b", "/a"), ("/a/b/", "/a"), ("/a", "/"), ("/", "/"), ("a", ""), ("", ""), ("a/b", "a"), ("//a//b", "//a"),
    ])
    func deletingLastPathComponent(path: String, parent: String) {
        #expect(PathText.deletingLastComponent(path) == parent)
    }

    @Test func homeDirectoryPrefersHOME() {
        #expect(PathText.homeDirectory(environment: ["HOME": "/home/ana"]) == "/home/ana")
        #expect(PathText.homeDirectory(environment: [:]).hasPrefix("/"))
    }

    @Test func fixedDecimalsRoundAsPrintf() {
        #expect(NumberText.fixed(77.54, places: 1) == "77.5")
        #expect(NumberText.fixed(2.25, places: 1) == "2.2")
        #expect(NumberText.fixed(2.35, places: 1) == "2.4")
        #expect(NumberText.fixed(128, places: 1) == "128.0")
    }

    @Test func datesInUTCAndAGivenZone() {
        let date = Date(timeIntervalSince1970: 1_459_872_074.9)
        #expect(DateText.utc(date, "%Y-%m-%dT%H:%M:%SZ") == "2016-04-05T16:01:14Z")
        #expect(DateText.local(date, "%Y-%m-%d %H:%M:%S %Z", zone: "Europe/Berlin") == "2016-04-05 18:01:14 CEST")
        #expect(DateText.local(date, "%H:%M", zone: "UTC") == "16:01")
    }
}

@Suite struct LockAndThreadTests {
    @Test func detachedThreadsRunAndTheLockSerialisesThem() {
        let lock = Lock()
        let done = Condition()
        final class Counter: @unchecked Sendable { var value = 0 }
        let counter = Counter()
        for _ in 0..<8 {
            #expect(
                DetachedThread.start(stackSize: 1 << 16) {
                    for _ in 0..<1000 { lock.withLock { counter.value += 1 } }
                    done.lock()
                    done.broadcast()
                    done.unlock()
                })
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        done.lock()
        while lock.withLock({ counter.value }) < 8000 && done.wait(until: deadline) {}
        done.unlock()
        #expect(lock.withLock { counter.value } == 8000)
    }

    @Test func aConditionWaitEndsAtItsDeadline() {
        let condition = Condition()
        condition.lock()
        let start = Date()
        let woken = condition.wait(until: Date(timeIntervalSinceNow: 0.05))
        condition.unlock()
        #expect(!woken)
        #expect(Date().timeIntervalSince(start) >= 0.04)
    }
}
