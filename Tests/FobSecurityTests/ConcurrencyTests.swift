import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

/// A value shared by test threads behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

extension SecItemTests {
    @Test func callsFromManyThreadsAtOnce() throws {
        try Self.withVault { test in
            let threads = 8
            let rounds = 15
            let failures = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                let keychain = KeychainManager(service: "threads")
                func check(_ what: String, _ ok: Bool) {
                    if !ok {
                        failures.withLock { $0.append("thread \(thread): \(what) (status \(keychain.lastStatus))") }
                    }
                }
                for round in 0..<rounds {
                    let account = "t\(thread)-r\(round)"
                    let token = "token \(thread) \(round)"
                    do {
                        try keychain.saveToken(token, for: account)
                        check("save", keychain.lastStatus == errSecSuccess)
                        check("read", try keychain.token(for: account) == token)
                        try keychain.saveToken(token + "!", for: account)
                        check("update", try keychain.token(for: account) == token + "!")
                        if round % 2 == 0 {
                            try keychain.deleteToken(for: account)
                            check("delete", keychain.lastStatus == errSecSuccess)
                        }
                    } catch {
                        check("\(error)", false)
                    }
                }
            }
            let problems = failures.withLock { $0 }
            #expect(problems.isEmpty)
            let left = try test.vault.allItems().map(\.account).sorted()
            let expected = (0..<threads).flatMap { t in stride(from: 1, to: rounds, by: 2).map { "t\(t)-r\($0)" } }
                .sorted()
            #expect(left == expected)
        }
    }

    @Test func racingAddsOfOneItemGiveOneSuccess() throws {
        try Self.withVault { _ in
            let statuses = Locked<[OSStatus]>([])
            DispatchQueue.concurrentPerform(iterations: 12) { index in
                let status = SecItemAdd(
                    SecItemTests.genericPassword("race", "one", "writer \(index)") as CFDictionary, nil)
                statuses.withLock { $0.append(status) }
            }
            let all = statuses.withLock { $0 }
            #expect(all.filter { $0 == errSecSuccess }.count == 1)
            #expect(all.filter { $0 == errSecDuplicateItem }.count == 11)
        }
    }
}
