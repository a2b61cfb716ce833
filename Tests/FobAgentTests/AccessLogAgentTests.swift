import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The agent's access log: every read through the agent is recorded once,
/// with the requester `SO_PEERCRED` names, in batches.
@Suite struct AccessLogAgentTests {
    private func report(_ v: TestVault, _ watermarks: VaultWatermarks) throws -> AccessLogReport {
        let fresh = try Vault(url: v.vault.url)
        try fresh.unlock(password: v.password)
        let keys = AccessLogKeys(logKey: try #require(try fresh.accessLogKey(create: false)))
        let head = AccessLogHead.read(AccessLogHead.path(directory: watermarks.directory, keys: keys))
        return AccessLogReader.read(AccessLogLocation(vaultURL: v.vault.url), keys: keys, head: head)
    }

    @Test func everyReadThroughTheAgentIsRecordedWithItsRequester() throws {
        let v = try TestVault()
        try v.vault.add(Item(service: "mail", account: "ana", secret: .text("s3cret-bytes")))
        v.vault.lock()
        let watermarks = VaultWatermarks(environment: ["XDG_STATE_HOME": v.directory.file("state").path])
        try FileManager.default.createDirectory(at: v.directory.file("state"), withIntermediateDirectories: true)
        let core = AgentCore(vaultURL: v.vault.url, watermarks: watermarks)
        let me = AccessLogRequester(pid: getpid(), uid: getuid())
        #expect(core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0), from: me).isOK)
        let get = AgentRequest.get(.key(service: "mail", account: "ana"), limitOne: true, detail: .secret)
        for _ in 0..<3 { _ = core.handle(get, from: me) }
        _ = core.handle(.list(service: nil), from: me)
        _ = core.handle(.get(.key(service: "mail", account: "ana"), limitOne: true, detail: .listing), from: me)
        #expect(core.flushAccessLog())
        #expect(core.accessLogStatus == .ok)
        let log = try report(v, watermarks)
        #expect(log.problems == [])
        #expect(log.records.map(\.entry.event) == [.unlockWithPassword, .read, .read, .read])
        let read = try #require(log.records.last?.entry)
        #expect(read.item == ItemKey(service: "mail", account: "ana"))
        #expect(read.channel == .agent)
        #expect(read.decision == .allowedRule)
        #expect(read.requester.pid == getpid())
        #expect(read.requester.uid == getuid())
        #expect(
            read.requester.executable == (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: v.vault.url.path + ".log"))
        #expect(bytes.range(of: Data("s3cret-bytes".utf8)) == nil)
        core.lockAll()
    }

    @Test func aThousandAppendsAreOneBatchedWrite() throws {
        let v = try TestVault()
        let key = try #require(try v.vault.accessLogKey(create: true))
        let writer = AccessLogWriter(
            location: AccessLogLocation(vaultURL: v.vault.url), keys: AccessLogKeys(logKey: key), headDirectory: nil)
        let log = AccessLog(writer: writer, batchDelay: 0.05)
        let entry = AccessLogEntry(
            time: Date(), event: .read, requester: AccessLogRequester(pid: 1, executable: "/usr/bin/git"),
            item: ItemKey(service: "s", account: "a"), channel: .git, decision: .allowedRule)
        for _ in 0..<1000 { log.append(entry) }
        // The flushing thread writes them within its batch delay.
        let deadline = Date().addingTimeInterval(5)
        var size = 0
        while Date() < deadline {
            var st = stat()
            if stat(v.vault.url.path + ".log", &st) == 0 { size = Int(st.st_size) }
            if size > 1000 * 60 { break }
            usleep(10_000)
        }
        log.close()
        let report = AccessLogReader.read(
            AccessLogLocation(vaultURL: v.vault.url), keys: AccessLogKeys(logKey: key), head: nil)
        #expect(report.records.count == 1000)
        #expect(report.problems == [])
        #expect(log.status == .ok)
    }

    @Test func aFailingWriteKeepsItsEntriesAndSaysWhy() throws {
        let v = try TestVault()
        let key = try #require(try v.vault.accessLogKey(create: true))
        // A directory where the current file should be: every write fails.
        try FileManager.default.createDirectory(atPath: v.vault.url.path + ".log", withIntermediateDirectories: false)
        let writer = AccessLogWriter(
            location: AccessLogLocation(vaultURL: v.vault.url), keys: AccessLogKeys(logKey: key), headDirectory: nil)
        let log = AccessLog(writer: writer, batchDelay: 0.01)
        log.append(AccessLogEntry(time: Date(), event: .read))
        #expect(!log.flush())
        guard case .failing(let reason, let unwritten, 0) = log.status else {
            Issue.record("a failed write shows in the status")
            return
        }
        #expect(reason.contains("vault.db.log"))
        #expect(unwritten == 1)
        try FileManager.default.removeItem(atPath: v.vault.url.path + ".log")
        #expect(log.flush())
        #expect(log.status == .ok)
    }
}
