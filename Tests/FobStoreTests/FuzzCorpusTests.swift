@_spi(Fuzz) import FobStore
import FobTestSupport
import Foundation
import Testing

/// The `record` and `vault-open` fuzz corpora (seeds and former crashers)
/// through the same entry points as the fuzz targets: a typed result, never a trap.
@Suite struct StoreFuzzCorpusTests {
    @Test func recordInputs() {
        for (_, bytes) in FuzzCorpus.inputs("record") {
            _ = bytes.withUnsafeBytes { StoreFuzzEntryPoints.decodeRecord($0) }
        }
    }

    @Test func vaultInputs() throws {
        let inputs = FuzzCorpus.inputs("vault-open")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            let result = bytes.withUnsafeBytes { StoreFuzzEntryPoints.openVault($0) }
            if name == "one-item.db" { #expect(try result.get() == 1) }
        }
        let garbage: [UInt8] = Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0xFF, count: 600)
        #expect(throws: KeychainError.decode("file is not a database")) {
            try garbage.withUnsafeBytes { StoreFuzzEntryPoints.openVault($0) }.get()
        }
    }

    @Test func accessRuleInputs() throws {
        let inputs = Dictionary(uniqueKeysWithValues: FuzzCorpus.inputs("access-rule").map { ($0.name, $0.bytes) })
        #expect(inputs.count >= 4)
        for (_, bytes) in inputs {
            guard let rule = try? AccessRule(encoded: bytes) else { continue }
            #expect(try AccessRule(encoded: rule.encoded) == rule)
        }
        #expect(try AccessRule(encoded: inputs["default"] ?? []).isDefault)
        let programs = try AccessRule(encoded: inputs["programs"] ?? [])
        #expect(programs.mode == .ask)
        #expect(programs.trusted.map(\.path) == ["/usr/bin/git"])
        #expect(programs.denied.first?.hash?.count == TrustedProgram.hashBytes)
        #expect(try AccessRule(encoded: inputs["ask-forwarded-deny"] ?? []).forwarded == .deny)
        #expect(throws: KeychainError.decode("trailing bytes in an access rule")) {
            try AccessRule(encoded: inputs["trailing-byte"] ?? [])
        }
    }

    @Test func procStatInputs() throws {
        let inputs = Dictionary(uniqueKeysWithValues: FuzzCorpus.inputs("proc-stat").map { ($0.name, $0.bytes) })
        let cat = try #require(ProcStat.parse(inputs["cat"] ?? []))
        #expect(cat.comm == "cat" && cat.parent == 5862 && cat.session == 29780)
        #expect(cat.terminalDevice == 0 && cat.startTime == 966632)
        let parens = try #require(ProcStat.parse(inputs["name-with-parens"] ?? []))
        #expect(parens.comm == "a) b (c)")
        #expect(parens.terminalDevice == 34816)
        #expect(ProcStat.parse(inputs["short"] ?? []) == nil)
    }

    @Test func procCgroupInputs() {
        let inputs = Dictionary(uniqueKeysWithValues: FuzzCorpus.inputs("proc-cgroup").map { ($0.name, $0.bytes) })
        #expect(inputs.count == 6)
        #expect(ProcessInspector.cgroup(procFile: inputs["system-service"] ?? []) == "/system.slice/backup.service")
        #expect(
            ProcessInspector.cgroup(procFile: inputs["session-scope"] ?? [])
                == "/user.slice/user-1000.slice/session-3.scope")
        #expect(
            ProcessInspector.cgroup(procFile: inputs["system-name-in-user-manager"] ?? [])
                == "/user.slice/user-1000.slice/user@1000.service/app.slice/run-x.scope/system.slice/backup.service")
        #expect(
            ProcessInspector.cgroup(procFile: inputs["unified"] ?? [])
                == "/user.slice/user-1000.slice/user@1000.service/app.slice/backup.service")
        #expect(ProcessInspector.cgroup(procFile: inputs["legacy"] ?? []) == "/system.slice/backup.service")
        #expect(ProcessInspector.cgroup(procFile: inputs["colon-in-name"] ?? []) == "/user.slice/a:b:c.scope")
    }

    @Test func shellLauncherInputs() {
        let inputs = Dictionary(uniqueKeysWithValues: FuzzCorpus.inputs("shell-launcher").map { ($0.name, $0.bytes) })
        func decide(_ bytes: [UInt8]) -> Bool {
            let halves = bytes.split(separator: 0xFF, maxSplits: 1, omittingEmptySubsequences: false)
            func argv(_ part: ArraySlice<UInt8>) -> [String] {
                part.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            }
            return ShellLauncher.onlyStarts(argv(halves.count > 1 ? halves[1] : []), shell: argv(halves[0]))
        }
        #expect(inputs.count == 3)
        #expect(decide(inputs["git-helper"] ?? []))
        #expect(!decide(inputs["two-commands"] ?? []))
        #expect(!decide(inputs["open-quote"] ?? []))
    }

    @Test func accessLogInputs() throws {
        let inputs = FuzzCorpus.inputs("access-log")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            let result = bytes.withUnsafeBytes { StoreFuzzEntryPoints.readAccessLog($0) }
            if name == "two-entries" { #expect(try result.get() == 2) }
        }
        let foreign = Array("FOBL".utf8) + [2] + [UInt8](repeating: 0, count: 90)
        #expect(throws: AccessLogFormatError.malformedFile("unknown log format 2")) {
            try foreign.withUnsafeBytes { StoreFuzzEntryPoints.readAccessLog($0) }.get()
        }
    }

    /// The seed `two-entries` is what the writer makes under the fuzz target's keys.
    @Test func theAccessLogSeedIsWhatTheWriterMakes() throws {
        let directory = TemporaryDirectory()
        let location = AccessLogLocation(vaultURL: directory.file("vault.db"))
        let writer = AccessLogWriter(location: location, keys: StoreFuzzEntryPoints.accessLogKeys, headDirectory: nil)
        try writer.append([
            AccessLogEntry(
                time: Date(timeIntervalSince1970: 1), event: .read,
                requester: AccessLogRequester(pid: 1, uid: 0, executable: "/bin/sh", parents: ["init(1)"]),
                item: ItemKey(service: "s", account: "a"), channel: .command("get"), decision: .allowedOnce),
            AccessLogEntry(time: Date(timeIntervalSince1970: 2), event: .unlockWithPassword),
        ])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: location.current)))
        #expect(try bytes.withUnsafeBytes { StoreFuzzEntryPoints.readAccessLog($0) }.get() == 2)
        if let seed = ProcessInfo.processInfo.environment["FOB_WRITE_ACCESS_LOG_SEED"] {
            try Data(bytes).write(to: URL(fileURLWithPath: seed))
        }
    }
}
