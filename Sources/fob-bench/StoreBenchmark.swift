import FobStore
import Foundation
@preconcurrency import Glibc

/// Store figures: KDF presets, adds, lookups, listing, bytes per item.
enum StoreBenchmark {
    static func run(scratch: URL) throws {
        let password = SecretBytes(utf8: "benchmark master password")
        // libsodium's minimum Argon2id costs (1 pass, 8 KiB, well under a
        // millisecond): unlock and passwd then measure everything but the KDF.
        let minimal = BenchFiles.quickKDF
        section("Writes")
        let url10k = scratch.appendingPathComponent("10k/vault.db")
        let vault = try Vault.create(at: url10k, password: password, kdf: minimal, accessDefault: .any)
        let batch = items(0..<10_000)
        let tBatch = try time { try vault.add(contentsOf: batch) }
        report("add 10,000 items in one transaction", seconds: tBatch, per: 10_000)
        let single = items(10_000..<11_000)
        let tSingle = try time { for item in single { try vault.add(item) } }
        report("add 1,000 items one at a time (a durable commit each)", seconds: tSingle, per: 1_000)
        try vault.delete(matching: ItemQuery(service: "svc-10k"))

        section("Reads at 10,000 items")
        try lookups(vault, count: 10_000)
        let reopened = try Vault(url: url10k)
        let tUnlock = try time { try reopened.unlock(password: password) }
        report("unlock beyond the KDF (verifies every row's commitment)", seconds: tUnlock)
        var listed = 0
        let tList = try time { listed = try reopened.allItems().count }
        report("list all \(listed) items after unlock (no secrets)", seconds: tList)
        let tVerify = try time { _ = try Vault.verify(at: url10k, password: password) }
        report("fob verify (every record decrypted, commitment)", seconds: tVerify)
        let size = fileSize(url10k)
        print("  " + pad("vault file") + String(format: "%10d bytes   %8d per item", size, size / 10_000))
        let tPasswd = try time { try reopened.changePassword(to: password, kdf: minimal) }
        report("passwd beyond the KDF (new vault key, 10,000 re-encrypted)", seconds: tPasswd)

        section("Reads at 100,000 items")
        let url100k = scratch.appendingPathComponent("100k/vault.db")
        let big = try Vault.create(at: url100k, password: password, kdf: minimal, accessDefault: .any)
        for start in stride(from: 0, to: 100_000, by: 10_000) {
            try big.add(contentsOf: items(start..<(start + 10_000)))
        }
        try lookups(big, count: 100_000)
        let big2 = try Vault(url: url100k)
        let tUnlockBig = try time { try big2.unlock(password: password) }
        report("unlock beyond the KDF", seconds: tUnlockBig)
        print(
            "\n  " + pad("peak memory before any KDF above 64 MiB (max RSS)")
                + String(format: "%10.1f MiB", peakMemoryMiB()))

        section("Key derivation (Argon2id, crypto_pwhash), one unlock; its memory is the peak below")
        for preset in KDFParameters.Preset.allCases {
            let dir = scratch.appendingPathComponent("kdf-\(preset.rawValue)")
            let url = dir.appendingPathComponent("vault.db")
            _ = try Vault.create(at: url, password: password, kdf: KDFParameters(preset), accessDefault: .any)
            let vault = try Vault(url: url)
            let t = try time { try vault.unlock(password: password) }
            let kdf = KDFParameters(preset)
            report("\(preset.rawValue) (\(kdf.opslimit) passes, \(kdf.memlimit >> 20) MiB)", seconds: t)
        }
    }

    private static func lookups(_ vault: Vault, count: Int) throws {
        var rng = SystemRandomNumberGenerator()
        let keys = (0..<2_000).map { _ in Int.random(in: 0..<count, using: &rng) }
        for k in keys.prefix(50) { _ = try vault.item(service: service(k), account: account(k)) }
        let t = try time {
            for k in keys { _ = try vault.item(service: service(k), account: account(k)) }
        }
        report("get by service and account (random, 2,000 lookups)", seconds: t, per: keys.count)
    }

    private static func service(_ i: Int) -> String { i >= 10_000 && i < 11_000 ? "svc-10k" : "service-\(i % 500)" }
    private static func account(_ i: Int) -> String { "user\(i)@example.com" }

    private static func items(_ range: Range<Int>) -> [Item] {
        range.map { i in
            Item(
                service: service(i), account: account(i), label: "Label \(i)",
                kind: i % 5 == 0 ? .token : .password,
                secret: SecretBytes(utf8: "secret-\(i)-\(String(repeating: "x", count: 24))"))
        }
    }

    private static func fileSize(_ url: URL) -> Int {
        var st = stat()
        return stat(url.path, &st) == 0 ? Int(st.st_size) : 0
    }
}

/// Wall-clock seconds of `body`.
func time(_ body: () throws -> Void) throws -> Double {
    try elapsed(on: CLOCK_MONOTONIC, body)
}

/// The seconds `clock` (`CLOCK_MONOTONIC`, `CLOCK_THREAD_CPUTIME_ID` …) advances while `body` runs.
func elapsed(on clock: clockid_t, _ body: () throws -> Void) rethrows -> Double {
    var start = timespec()
    var end = timespec()
    clock_gettime(clock, &start)
    try body()
    clock_gettime(clock, &end)
    return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
}

func section(_ title: String) { print("\n\(title)") }

/// One line: total, and per operation in µs when `per` is given.
func report(_ what: String, seconds: Double, per: Int? = nil) {
    var line = "  " + pad(what) + String(format: "%10.1f ms", seconds * 1000)
    if let per { line += String(format: "   %8.1f µs each", seconds * 1e6 / Double(per)) }
    print(line)
}

/// `text` padded with spaces to 58 characters.
func pad(_ text: String) -> String {
    text.count >= 58 ? text + " " : text + String(repeating: " ", count: 58 - text.count)
}

/// Peak resident memory of this process in MiB (`getrusage`, `ru_maxrss`).
func peakMemoryMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}
