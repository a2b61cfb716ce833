import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

// End-to-end tests of the vault file under many writers, crashes, full disks
// and damage: each runs the built `fob` as a child process.

// MARK: - Concurrency and crashes

@Suite struct ConcurrentProcessTests {
    @Test func twentyProcessesSaveOneItem() throws {
        let v = try ProcessTestVault()
        let children = try (0..<20).map { index in
            try FobProcess.start(
                ["save", "race", "acct"], environment: v.environment, stdin: Array("secret-\(index)".utf8))
        }
        let results = children.map { $0.wait(timeout: 120) }
        for result in results {
            expectClean(result)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(!result.stderrText.contains("duplicate"))
        }
        let items = try v.open().allItems()
        #expect(items.count == 1)
        let secret = try v.open().item(service: "race", account: "acct").secret?.unsafeString
        #expect((0..<20).map { "secret-\($0)" }.contains(secret ?? ""))
    }

    @Test func processesAddingDifferentItemsAllLand() throws {
        let v = try ProcessTestVault()
        let children = try (0..<8).map { index in
            try FobProcess.start(
                ["add", "svc", "acct-\(index)"], environment: v.environment, stdin: Array("s\(index)".utf8))
        }
        for result in children.map({ $0.wait(timeout: 120) }) {
            #expect(result.status == 0, "\(result.stderrText)")
        }
        let vault = try v.open()
        #expect(try vault.allItems().count == 8)
        for index in 0..<8 {
            #expect(try vault.item(service: "svc", account: "acct-\(index)").secret?.unsafeString == "s\(index)")
        }
    }

    @Test func killNineOfWritersLeavesASoundVaultWithEveryAcknowledgedWrite() throws {
        let v = try ProcessTestVault()
        var acknowledged: [String: String] = [:]
        var killed = 0
        var generator = SystemRandomNumberGenerator()
        for round in 0..<30 {
            let writers = try (0..<3).map { index -> (ChildProcess, String, String) in
                let account = "r\(round)-w\(index)"
                let secret =
                    "secret-\(round)-\(index)-"
                    + String(repeating: "x", count: Int.random(in: 0..<3000, using: &generator))
                let command = index == 0 ? "add" : "save"
                return (
                    try FobProcess.start(
                        [command, "kill", account], environment: v.environment, stdin: Array(secret.utf8)), account,
                    secret
                )
            }
            // Early kills (during start-up or the first write) and late ones alternate;
            // the last writer of a round is left to finish, so there are always acknowledged writes.
            usleep(UInt32.random(in: 0..<(round % 2 == 0 ? 15_000 : 120_000), using: &generator))
            for (child, _, _) in writers.dropLast() { child.send(signal: SIGKILL) }
            for (child, account, secret) in writers {
                let result = child.wait(timeout: 60)
                if result.status == 0 {
                    acknowledged[account] = secret
                } else if result.signal == SIGKILL {
                    killed += 1
                }
            }
            if round % 10 == 9 {
                #expect(VaultFile.integrityCheck(v.path) == "ok", "round \(round)")
            }
        }
        #expect(VaultFile.integrityCheck(v.path) == "ok")
        // Both outcomes happened: some writers finished, some were killed mid-way.
        #expect(!acknowledged.isEmpty)
        #expect(killed > 0)
        let vault = try v.open()
        for (account, secret) in acknowledged {
            #expect(try vault.item(service: "kill", account: account).secret?.unsafeString == secret, "\(account)")
        }
        let listing = try v.run(["ls"])
        #expect(listing.status == 0)
    }

    @Test func aFullDiskIsAClearErrorAndLosesNothing() throws {
        let directory = TemporaryDirectory()
        let mountPoint = directory.file("small")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        let mounted = try ChildProcess.run(
            executable: "/bin/mount", arguments: ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mountPoint.path],
            environment: FobProcess.baseEnvironment)
        defer {
            if mounted.status == 0 {
                _ = try? ChildProcess.run(
                    executable: "/bin/umount", arguments: [mountPoint.path], environment: FobProcess.baseEnvironment)
            }
        }
        let v = try ProcessTestVault(create: false, directory: directory)
        let vaultPath = mountPoint.appendingPathComponent("vault.db").path
        _ = try Vault.create(at: URL(fileURLWithPath: vaultPath), password: .text(v.password), kdf: .testing)
        let environment = ["FOB_VAULT": vaultPath, "FOB_PASSWORD_FILE": v.passwordFile]
        for index in 0..<5 {
            #expect(
                try FobProcess.run(["add", "before", "a\(index)"], environment: environment, input: "s\(index)").status
                    == 0)
        }
        let big = [UInt8](repeating: 0x42, count: 300_000)
        let full: ProcessResult
        if mounted.status == 0 {
            // Fill the small filesystem to the last page.
            let fillerPath = mountPoint.appendingPathComponent("filler").path
            _ = FileManager.default.createFile(atPath: fillerPath, contents: nil)
            let fd = open(fillerPath, O_WRONLY)
            let chunk = [UInt8](repeating: 0, count: 4096)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 4096) }) > 0 {}
            close(fd)
            full = try FobProcess.run(["save", "big", "one", "--raw"], environment: environment, stdin: big)
            unlink(fillerPath)
        } else {
            // No mount rights: a file-size limit (SIGXFSZ ignored) makes writes fail with EFBIG.
            let script = "trap '' XFSZ; ulimit -f 200; exec \"$0\" \"$@\""
            full = try ChildProcess.run(
                executable: "/bin/sh",
                arguments: ["-c", script, FobProcess.binaryURL.path, "save", "big", "one", "--raw"],
                environment: FobProcess.baseEnvironment.merging(environment) { $1 }, stdin: big)
        }
        expectClean(full)
        #expect(full.status == 1, "\(full.stderrText)")
        #expect(full.stderrText.hasPrefix("fob: I/O error: disk full: "), "\(full.stderrText)")
        #expect(full.stderrText.contains("errSecIO"))
        #expect(VaultFile.integrityCheck(vaultPath) == "ok")
        let listing = try FobProcess.run(["ls", "--json"], environment: environment)
        #expect(listing.status == 0)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(listing.stdout)) as? [[String: Any]])
        #expect(items.compactMap { $0["account"] as? String } == (0..<5).map { "a\($0)" })
        for index in 0..<5 {
            #expect(
                try FobProcess.run(["get", "before", "a\(index)"], environment: environment).stdoutText == "s\(index)\n"
            )
        }
        #expect(try FobProcess.run(["get", "big", "one"], environment: environment).status == 44)
    }
}

// MARK: - Damaged and foreign files

@Suite struct DamagedVaultProcessTests {
    /// Runs `get` and `ls`: each either fails cleanly (non-zero, nothing on
    /// stdout) or succeeds with exactly the right data.
    private func expectCleanOrCorrect(_ v: ProcessTestVault, path: String, expected: [String: String], _ note: String)
        throws
    {
        let environment = ["FOB_VAULT": path, "FOB_PASSWORD_FILE": v.passwordFile]
        for (account, secret) in expected.prefix(2) {
            let got = try FobProcess.run(["get", "svc", account], environment: environment)
            expectClean(got, note)
            if got.status == 0 {
                #expect(got.stdoutText == secret + "\n", "wrong data \(note)")
            } else {
                #expect(got.stdout.isEmpty, "\(note)")
            }
        }
        let list = try FobProcess.run(["ls", "--json"], environment: environment)
        expectClean(list, note)
        if list.status == 0 {
            let items = try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]] ?? []
            for item in items {
                #expect(expected[item["account"] as? String ?? "?"] != nil, "unknown item listed \(note)")
            }
        } else {
            #expect(list.stdout.isEmpty, "\(note)")
        }
    }

    private func makeVault(items: Int = 12) throws -> (ProcessTestVault, [String: String]) {
        let v = try ProcessTestVault()
        var expected: [String: String] = [:]
        let vault = try v.open()
        for index in 0..<items {
            let secret = "secret-\(index)-" + String(repeating: "z", count: index * 37)
            try vault.add(
                Item(service: "svc", account: "acct-\(index)", label: "label \(index)", secret: .text(secret)))
            expected["acct-\(index)"] = secret
        }
        return (v, expected)
    }

    @Test func foreignFilesExit93() throws {
        let v = try ProcessTestVault(create: false)
        var generator = SystemRandomNumberGenerator()
        let contents: [[UInt8]] = [
            [],
            Array("hello, this is not a vault\n".utf8),
            (0..<10).map { _ in UInt8.random(in: 0...255, using: &generator) },
            (0..<16384).map { _ in UInt8.random(in: 0...255, using: &generator) },
            Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0, count: 4080),
        ]
        for (index, bytes) in contents.enumerated() {
            try Data(bytes).write(to: URL(fileURLWithPath: v.path))
            for arguments in [["get", "svc", "a"], ["ls"], ["add", "svc", "a"]] {
                let result = try v.run(arguments, input: "x")
                expectClean(result, "content \(index)")
                #expect(result.status == 93, "content \(index) \(arguments): \(result.stderrText)")
                #expect(result.stdout.isEmpty)
            }
        }
    }

    @Test func truncatedVaultsFailCleanly() throws {
        let (v, expected) = try makeVault()
        let original = try Data(contentsOf: URL(fileURLWithPath: v.path))
        let copy = v.directory.file("truncated.db").path
        for length in [0, 1, 50, 100, 512, 1024, 4096, original.count / 2, original.count - 4096, original.count - 1]
        where length >= 0 {
            try original.prefix(length).write(to: URL(fileURLWithPath: copy))
            for suffix in ["-wal", "-shm"] { unlink(copy + suffix) }
            try expectCleanOrCorrect(v, path: copy, expected: expected, "length \(length)")
        }
    }

    @Test func everyFlippedByteOfARecordIsDetected() throws {
        let (v, expected) = try makeVault(items: 3)
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: v.path)))
        let records = VaultFile.records(v.path)
        #expect(records.count == 3)
        // The record of one item, found in the file by its bytes.
        let target = try #require(records.first)
        let offset = try #require(VaultFile.firstIndex(of: target, in: original))
        let copy = v.directory.file("flipped.db").path
        let environment = ["FOB_VAULT": copy, "FOB_PASSWORD_FILE": v.passwordFile]
        var failuresPerAccount: [String: Int] = [:]
        for position in offset..<(offset + target.count) {
            var bytes = original
            bytes[position] ^= 0x5A
            try Data(bytes).write(to: URL(fileURLWithPath: copy))
            for suffix in ["-wal", "-shm"] { unlink(copy + suffix) }
            let list = try FobProcess.run(["ls"], environment: environment)
            expectClean(list, "byte \(position)")
            #expect(list.status == 93, "byte \(position): \(list.stderrText)")
            #expect(list.stdout.isEmpty)
            // The whole-vault commitment no longer matches: no item is served, damaged or not.
            for account in expected.keys.sorted() where account == "acct-0" || position % 8 == 0 {
                let got = try FobProcess.run(["get", "svc", account], environment: environment)
                expectClean(got, "byte \(position)")
                #expect(got.status == 93, "byte \(position)")
                #expect(got.stdout.isEmpty)
                failuresPerAccount[account, default: 0] += 1
            }
            // `fob verify` names the damaged row (its name cannot be decrypted).
            if position % 8 == 0 {
                let verify = try FobProcess.run(["verify"], environment: environment)
                #expect(verify.status == 93)
                #expect(
                    verify.stdoutText.hasPrefix("damaged: row 1 (lookup "), "byte \(position): \(verify.stdoutText)")
            }
        }
        #expect(failuresPerAccount.count == 3)
        #expect(failuresPerAccount["acct-0"] == target.count)
    }

    @Test func randomFlipsAnywhereNeverCrashOrLie() throws {
        let (v, expected) = try makeVault()
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: v.path)))
        let copy = v.directory.file("random.db").path
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<30 {
            var bytes = original
            let position = Int.random(in: 0..<bytes.count, using: &generator)
            bytes[position] ^= UInt8.random(in: 1...255, using: &generator)
            try Data(bytes).write(to: URL(fileURLWithPath: copy))
            for suffix in ["-wal", "-shm"] { unlink(copy + suffix) }
            try expectCleanOrCorrect(v, path: copy, expected: expected, "byte \(position)")
        }
    }
}
