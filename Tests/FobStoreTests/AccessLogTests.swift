import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobStore

/// The access log's format: entries round-trip, every kind of tampering is
/// named, rotation keeps the chain, and no secret's bytes reach the file.
@Suite struct AccessLogTests {
    /// A vault, its log key, and a writer with a head state directory.
    private struct Fixture {
        let t: TestVault
        let keys: AccessLogKeys
        let location: AccessLogLocation
        let heads: String
        let writer: AccessLogWriter

        init(maxFileBytes: Int = 1 << 20, maxFiles: Int = 8) throws {
            t = try TestVault()
            keys = AccessLogKeys(logKey: try #require(try t.vault.accessLogKey(create: true)))
            location = AccessLogLocation(vaultURL: t.vault.url)
            heads = t.directory.file("state").path
            writer = AccessLogWriter(
                location: location, keys: keys, headDirectory: heads, maxFileBytes: maxFileBytes, maxFiles: maxFiles)
        }

        var head: AccessLogHead? { AccessLogHead.read(AccessLogHead.path(directory: heads, keys: keys)) }

        func read() -> AccessLogReport { AccessLogReader.read(location, keys: keys, head: head) }

        func bytes(_ path: String? = nil) throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: path ?? location.current)))
        }

        func write(_ bytes: [UInt8], _ path: String? = nil) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path ?? location.current))
        }
    }

    static func entry(_ n: Int, event: AccessEvent = .read) -> AccessLogEntry {
        AccessLogEntry(
            time: Date(timeIntervalSince1970: 1_767_000_000 + Double(n) + 0.123), event: event,
            requester: AccessLogRequester(
                pid: Int32(1000 + n), uid: 1000, executable: "/usr/bin/git", argv0: "git",
                parents: ["bash(99)", "tmux: server(2)"], tty: "/dev/pts/3", unit: "session-2.scope",
                flatpakID: ""),
            item: ItemKey(service: "mail \(n)", account: "ana"), channel: .git, decision: .allowedRule,
            detail: "rule any")
    }

    @Test func anEntryRoundTripsThroughItsCodec() throws {
        let full = AccessLogTests.entry(7)
        let bare = AccessLogEntry(time: Date(timeIntervalSince1970: 5), event: .unlockWithPassword)
        for entry in [full, bare] {
            let decoded = try AccessLogEntryCodec.encode(entry).withUnsafeBytes { raw in
                try AccessLogEntryCodec.decode(raw)
            }
            #expect(decoded == entry)
        }
        var bytes = AccessLogEntryCodec.encode(full)
        bytes.append(0)
        #expect(throws: AccessLogFormatError.malformedEntry("bytes after the entry")) {
            try bytes.withUnsafeBytes { try AccessLogEntryCodec.decode($0) }
        }
    }

    /// Every channel keeps its name through the codec: the three commonest
    /// commands by their own codes, any other command by its name.
    @Test func everyChannelRoundTripsThroughTheCodec() throws {
        let channels: [AccessChannel] = [
            .command("get"), .command("copy"), .command("run"), .sync, .command("totp"), .git, .docker,
            .secretService, .program, .terminalUI, .ssh, .agent,
        ]
        for channel in channels {
            let entry = AccessLogEntry(time: Date(timeIntervalSince1970: 9), event: .read, channel: channel)
            let bytes = AccessLogEntryCodec.encode(entry)
            let decoded = try bytes.withUnsafeBytes { raw in try AccessLogEntryCodec.decode(raw) }
            #expect(decoded.channel == channel)
        }
        #expect(AccessChannel.sync.name == "sync")
        #expect(AccessChannel.program.name == "secitem")
        var unknown = AccessLogEntryCodec.encode(AccessLogEntry(time: Date(timeIntervalSince1970: 9), event: .read))
        unknown[10] = 12
        #expect(throws: AccessLogFormatError.malformedEntry("unknown channel")) {
            try unknown.withUnsafeBytes { try AccessLogEntryCodec.decode($0) }
        }
    }

    /// "No one could be asked" and "no one answered in time" are two
    /// decisions with codes of their own; an entry written before the two
    /// were told apart (code 7 for both) still reads, as no-channel.
    /// A record (index and entry) as the agent's answer carries it: the
    /// index big-endian first, then the entry; nothing shorter reads.
    @Test func aRecordRoundTripsWithItsIndexFirst() throws {
        let record = AccessLogRecord(index: 0x0102_0304_0506_0708, entry: Self.entry(3))
        let bytes = AccessLogEntryCodec.encode(record)
        #expect(Array(bytes.prefix(8)) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(try bytes.withUnsafeBytes { try AccessLogEntryCodec.decodeRecord($0) } == record)
        for cut in [0, 8] {
            #expect(throws: AccessLogFormatError.malformedEntry("a record shorter than its index and an entry")) {
                try Array(bytes.prefix(cut)).withUnsafeBytes { try AccessLogEntryCodec.decodeRecord($0) }
            }
        }
    }

    @Test func noChannelAndTimedOutKeepTheirOwnCodes() throws {
        let decisionOffset = 1 + 8 + 1 + 1
        for (decision, code, name) in [
            (AccessDecision.noChannel, UInt8(7), "no-channel"), (.timedOut, UInt8(8), "timed-out"),
        ] {
            let entry = AccessLogEntry(time: Date(timeIntervalSince1970: 9), event: .denial, decision: decision)
            let bytes = AccessLogEntryCodec.encode(entry)
            #expect(bytes[decisionOffset] == code)
            #expect(decision.rawValue == name)
            #expect(try bytes.withUnsafeBytes { try AccessLogEntryCodec.decode($0) }.decision == decision)
        }
        var old = AccessLogEntryCodec.encode(
            AccessLogEntry(time: Date(timeIntervalSince1970: 9), event: .denial, decision: .denied))
        old[decisionOffset] = 7
        #expect(try old.withUnsafeBytes { try AccessLogEntryCodec.decode($0) }.decision == .noChannel)
    }

    @Test func entriesRoundTripThroughTheFileAndVerify() throws {
        let f = try Fixture()
        try f.writer.append((1...3).map { AccessLogTests.entry($0) })
        try f.writer.append([AccessLogTests.entry(4)])
        let report = f.read()
        #expect(report.problems == [])
        #expect(report.records.map(\.index) == [1, 2, 3, 4])
        #expect(report.records.map(\.entry) == (1...4).map { AccessLogTests.entry($0) })
        #expect(f.head?.count == 4)
        var st = stat()
        #expect(stat(f.location.current, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    @Test func theFileHoldsNoNameAndNoSecret() throws {
        let f = try Fixture()
        try f.t.vault.add(item("mail", "ana", "hunter2-secret"))
        let read = try f.t.vault.item(service: "mail", account: "ana")
        try f.writer.append([
            AccessLogEntry(
                time: Date(), event: .read, requester: AccessLogRequester(executable: "/usr/bin/git"),
                item: ItemKey(read), channel: .command("get"), decision: .allowedRule)
        ])
        let text = String(decoding: try f.bytes(), as: UTF8.self)
        for word in ["hunter2-secret", "mail", "ana", "/usr/bin/git"] { #expect(!text.contains(word)) }
        #expect(f.read().records.first?.entry.item?.service == "mail")
    }

    /// Offsets of each record of the current file.
    private func records(_ f: Fixture) throws -> [AccessLogRawRecord] {
        try AccessLogFileFormat.parse(try f.bytes()).records
    }

    private func recordBytes(_ f: Fixture, _ bytes: [UInt8], _ n: Int) throws -> Range<Int> {
        let all = try AccessLogFileFormat.parse(bytes).records
        let start = all[n].offset
        let end = n + 1 < all.count ? all[n + 1].offset : bytes.count
        return start..<end
    }

    @Test func aDeletedEntryIsNamed() throws {
        let f = try Fixture()
        try f.writer.append((1...5).map { AccessLogTests.entry($0) })
        var bytes = try f.bytes()
        bytes.removeSubrange(try recordBytes(f, bytes, 2))
        try f.write(bytes)
        #expect(f.read().problems == [.removed(file: "vault.db.log", first: 3, last: 3)])
    }

    @Test func anEditedEntryIsNamed() throws {
        let f = try Fixture()
        try f.writer.append((1...5).map { AccessLogTests.entry($0) })
        var bytes = try f.bytes()
        let range = try recordBytes(f, bytes, 1)
        bytes[range.lowerBound + 40] ^= 1
        try f.write(bytes)
        #expect(f.read().problems == [.changed(file: "vault.db.log", index: 2)])
        #expect(f.read().records.map(\.index) == [1, 3, 4, 5])
    }

    @Test func reorderedEntriesAreNamed() throws {
        let f = try Fixture()
        try f.writer.append((1...5).map { AccessLogTests.entry($0) })
        let bytes = try f.bytes()
        let second = try recordBytes(f, bytes, 1)
        let third = try recordBytes(f, bytes, 2)
        let swapped =
            Array(bytes[..<second.lowerBound]) + Array(bytes[third]) + Array(bytes[second])
            + Array(bytes[third.upperBound...])
        try f.write(swapped)
        let problems = f.read().problems
        #expect(problems.contains(.outOfOrder(file: "vault.db.log", index: 2)))
        #expect(problems.contains(.removed(file: "vault.db.log", first: 2, last: 2)))
    }

    @Test func entriesCutOffTheEndAreNamedByTheHeadState() throws {
        let f = try Fixture()
        try f.writer.append((1...5).map { AccessLogTests.entry($0) })
        let bytes = try f.bytes()
        try f.write(Array(bytes[..<(try recordBytes(f, bytes, 3)).lowerBound]))
        #expect(f.read().problems == [.tailRemoved(recorded: 5, found: 3)])
    }

    @Test func aFileCutInTheMiddleOfAnEntryIsNamed() throws {
        let f = try Fixture(maxFileBytes: 4096)
        for n in 0..<40 { try f.writer.append([AccessLogTests.entry(n)]) }
        let rotated = try #require(f.location.rotatedSegments().first)
        let path = f.location.rotated(rotated)
        let bytes = try f.bytes(path)
        try f.write(Array(bytes.dropLast(10)), path)
        let problems = f.read().problems
        #expect(
            problems.contains { if case .truncated(file: "vault.db.log.\(rotated)", _) = $0 { true } else { false } })
    }

    @Test func rotationKeepsTheChainAndRecordsDroppedFiles() throws {
        let f = try Fixture(maxFileBytes: 4096, maxFiles: 3)
        for n in 0..<200 { try f.writer.append([AccessLogTests.entry(n)]) }
        let segments = f.location.rotatedSegments()
        #expect(segments.count == 2)
        let report = f.read()
        #expect(report.problems == [])
        // 200 reads, and a drop entry for each rotation that removed files (some of those were dropped in turn).
        #expect(report.last.count > 200)
        #expect(report.records.last?.entry == AccessLogTests.entry(199))
        #expect(report.records.contains { $0.entry.event == .logFilesDropped })
        #expect(report.notes.contains { $0.contains("dropped by rotation") })
        let indices = report.records.map(\.index)
        #expect(indices == Array(indices.first!...indices.last!))
    }

    @Test func swappedOrMissingFilesAreNamed() throws {
        let f = try Fixture(maxFileBytes: 4096, maxFiles: 20)
        for n in 0..<120 { try f.writer.append([AccessLogTests.entry(n)]) }
        let segments = f.location.rotatedSegments()
        #expect(segments.count >= 3)
        let (a, b) = (f.location.rotated(segments[0]), f.location.rotated(segments[1]))
        #expect(rename(a, a + ".x") == 0 && rename(b, a) == 0 && rename(a + ".x", b) == 0)
        let swapped = f.read().problems
        #expect(swapped.contains(.misplaced(file: "vault.db.log.\(segments[0])", segment: segments[1])))
        #expect(rename(a, a + ".x") == 0 && rename(b, a) == 0 && rename(a + ".x", b) == 0)
        #expect(f.read().problems == [])
        #expect(unlink(b) == 0)
        #expect(f.read().problems.contains { if case .missingFiles = $0 { true } else { false } })
        #expect(unlink(a) == 0)
        #expect(f.read().problems.contains { if case .missingFiles(first: 1, _) = $0 { true } else { false } })
    }

    @Test func aTornLastWriteIsRepairedAndRecorded() throws {
        let f = try Fixture()
        try f.writer.append([AccessLogTests.entry(1)])
        var bytes = try f.bytes()
        bytes += [0, 0, 0, 200, 1, 2, 3]
        try f.write(bytes)
        #expect(f.read().problems == [])
        #expect(f.read().notes.count == 1)
        let fresh = AccessLogWriter(location: f.location, keys: f.keys, headDirectory: f.heads)
        try fresh.append([AccessLogTests.entry(2)])
        let report = f.read()
        #expect(report.problems == [])
        #expect(report.records.map(\.entry.event) == [.read, .logRepaired, .read])
    }

    @Test func twoWritersContinueOneChain() throws {
        let f = try Fixture()
        let other = AccessLogWriter(location: f.location, keys: f.keys, headDirectory: f.heads)
        try f.writer.append([AccessLogTests.entry(1)])
        try other.append([AccessLogTests.entry(2)])
        try f.writer.append([AccessLogTests.entry(3)])
        let report = f.read()
        #expect(report.problems == [])
        #expect(report.records.map(\.entry) == (1...3).map { AccessLogTests.entry($0) })
    }

    @Test func theLogKeySurvivesAPasswordChange() throws {
        let f = try Fixture()
        try f.writer.append([AccessLogTests.entry(1)])
        try f.t.vault.changePassword(to: .text("new password"))
        let again = AccessLogKeys(logKey: try #require(try f.t.vault.accessLogKey(create: false)))
        #expect(again.id == f.keys.id)
        let report = try Vault.verify(
            at: f.t.vault.url, password: .text("new password"), accessLogHeadDirectory: f.heads)
        #expect(report.isSound)
        #expect(report.accessLogEntries == 1)
    }

    @Test func verifyNamesTheLogsProblems() throws {
        let f = try Fixture()
        try f.writer.append((1...3).map { AccessLogTests.entry($0) })
        var bytes = try f.bytes()
        bytes.removeSubrange(try recordBytes(f, bytes, 0))
        try f.write(bytes)
        let report = try Vault.verify(at: f.t.vault.url, password: f.t.password, accessLogHeadDirectory: f.heads)
        #expect(!report.isSound)
        #expect(report.problems == ["access log vault.db.log: entry 1 was removed"])
    }

    @Test func logFilesWithoutAKeyAreNamed() throws {
        let f = try Fixture()
        try f.writer.append([AccessLogTests.entry(1)])
        let other = try TestVault()
        // A vault made before log keys were made at init has none.
        #expect(RawVault.execute(other.vault.url, "DELETE FROM meta WHERE name = 'access_log_key';"))
        try Data(try f.bytes()).write(to: URL(fileURLWithPath: other.vault.url.path + ".log"))
        let report = try Vault.verify(at: other.vault.url, password: other.password)
        #expect(report.accessLogProblems == [.keyMissing])
    }
}
