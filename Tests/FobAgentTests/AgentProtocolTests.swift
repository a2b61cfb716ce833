import FobAgent
import Foundation
import Testing

@testable import FobStore

private func decode(_ bytes: [UInt8]) -> Result<AgentRequest, AgentProtocolError> {
    bytes.withUnsafeBytes { raw in Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) } }
}

private func roundTrip(_ request: AgentRequest) throws -> AgentRequest {
    try decode(request.encoded()).get()
}

@Suite struct AgentProtocolTests {
    @Test func requestsRoundTrip() throws {
        guard case .get(let key, true, .secret) = try roundTrip(.get(service: "mail", account: "ana")),
            key == .key(service: "mail", account: "ana")
        else {
            Issue.record("get")
            return
        }
        guard case .subscribe = try roundTrip(.subscribe) else {
            Issue.record("subscribe")
            return
        }
        guard case .list(nil) = try roundTrip(.list(service: nil)) else {
            Issue.record("list")
            return
        }
        guard case .list("s")? = Optional(try roundTrip(.list(service: "s"))) else {
            Issue.record("list s")
            return
        }
        guard
            case .unlock(let pw, 5, 7) = try roundTrip(
                .unlock(password: .init(utf8: "pw"), idleSeconds: 5, maxSeconds: 7)),
            pw.unsafeString == "pw"
        else {
            Issue.record("unlock")
            return
        }
        var changes = ItemChanges(label: .some(nil), comment: "c", kind: .token)
        changes.accessible = .afterFirstUnlock
        guard
            case .save("s", "a", let secret, let back) = try roundTrip(
                .save(
                    service: "s", account: "a", secret: .init([0, 1, 255]),
                    changes: changes))
        else {
            Issue.record("save")
            return
        }
        #expect(secret.unsafeArray == [0, 1, 255])
        #expect(back.label == .some(nil))
        #expect(back.comment == .some("c"))
        #expect(back.kind == .token)
        #expect(back.accessible == .afterFirstUnlock)
        var item = Item(
            service: "x", account: "y", label: "L", created: Date(timeIntervalSince1970: 1_000),
            modified: Date(timeIntervalSince1970: 2_000), secret: .init(utf8: "z"))
        item.accessible = .afterFirstUnlock
        guard case .add(let added) = try roundTrip(.add(item)) else {
            Issue.record("add")
            return
        }
        #expect(added == item)
    }

    /// The SecItem surface travels whole: every attribute of a query and of changes.
    @Test func queriesAndChangesRoundTrip() throws {
        var query = ItemQuery(
            itemClass: .internetPassword, service: "s", account: "a", accessGroup: "g", label: "l",
            kind: .token, accessible: .afterFirstUnlock, url: "https://x", synchronizable: true)
        query.internetProtocol = "htps"
        query.authenticationType = "dflt"
        query.port = 8443
        query.path = "/p"
        query.securityDomain = "d"
        query.persistentID = UUID()
        query.expectedRevision = UInt64.max - 1
        guard case .get(let back, true, .listing) = try roundTrip(.get(query, limitOne: true, detail: .listing))
        else {
            Issue.record("query")
            return
        }
        #expect(back == query)
        guard case .delete(let any) = try roundTrip(.delete(ItemQuery(itemClass: nil))) else {
            Issue.record("any")
            return
        }
        #expect(any.itemClass == nil)

        var changes = ItemChanges(
            service: "s2", label: .some(nil), comment: "c", kind: .note, accessible: .whenUnlocked,
            generic: .some([1, 2]), url: .some(nil), oneTimePassword: .some(.init(utf8: "otpauth://totp/x?secret=A")),
            customFields: [], secret: .init(utf8: "new"))
        changes.port = 22
        changes.itemType = .some(nil)
        changes.creator = 7
        changes.isInvisible = true
        changes.accessControlFlags = .some(3)
        changes.itemDescription = "desc"
        changes.expectedRevision = 42
        guard case .update(_, let c) = try roundTrip(.update(query, changes)) else {
            Issue.record("changes")
            return
        }
        #expect(c.service == "s2")
        #expect(c.label == .some(nil))
        #expect(c.comment == .some("c"))
        #expect(c.kind == .note)
        #expect(c.generic == .some([1, 2]))
        #expect(c.url == .some(nil))
        #expect(c.oneTimePassword??.unsafeString == "otpauth://totp/x?secret=A")
        #expect(c.customFields == [])
        #expect(c.secret?.unsafeString == "new")
        #expect(c.port == 22)
        #expect(c.itemType == .some(nil))
        #expect(c.creator == .some(7))
        #expect(c.isInvisible == true)
        #expect(c.accessControlFlags == .some(3))
        #expect(c.itemDescription == .some("desc"))
        #expect(c.account == nil && c.synchronizable == nil)
        #expect(c.expectedRevision == 42)
        for request in [
            AgentRequest.update(.key(service: "s", account: "a"), changes),
            .save(service: "s", account: "a", secret: .init(utf8: "x"), changes: changes),
        ] {
            switch try roundTrip(request) {
            case .update(_, let c), .save(_, _, _, let c):
                #expect(c.expectedRevision == 42)
            default: Issue.record("\(request)")
            }
        }
        guard case .update(_, let unconditional) = try roundTrip(.update(query, ItemChanges())) else {
            Issue.record("unconditional")
            return
        }
        #expect(unconditional.expectedRevision == nil)
    }

    @Test func responsesRoundTrip() throws {
        for error in [
            KeychainError.duplicateItem("d"), .itemNotFound("n"), .authFailed, .interactionNotAllowed("i"),
            .decode("x"), .param("p"), .noSuchKeychain("/v"), .io("o"),
            .revisionMismatch("service \"s\"", expected: 3, current: UInt64.max), .accessDenied("a"),
            // How a consent question ended crosses the wire as a field of its own, not in the text.
            .consentMissing("consent needed for service \"x, and no one answered within 60 s\"", .noChannel),
            .consentMissing("consent needed for service \"s\", and no one answered within 60 s", .unanswered),
        ] {
            let bytes = AgentResponse.failure(error).encoded()
            guard
                case .failure(let back) = try bytes.withUnsafeBytes({ raw in
                    Result { () throws(AgentProtocolError) in try AgentResponse.decode(raw) }
                }).get()
            else {
                Issue.record("failure \(error)")
                continue
            }
            #expect(back == error)
        }
    }

    /// `fob log` through the agent: the filter and the entries keep every field.
    @Test func accessLogRequestsAndAnswersRoundTrip() throws {
        let filter = AccessLogFilter(
            item: ("mail", "ana"), program: "/usr/bin/git", since: Date(timeIntervalSince1970: 1_767_000_000.5),
            text: "denied")
        guard case .accessLog(let back) = try roundTrip(.accessLog(filter)) else {
            Issue.record("accessLog")
            return
        }
        #expect(back == filter)
        guard case .accessLog(let empty) = try roundTrip(.accessLog(AccessLogFilter())) else {
            Issue.record("an empty filter")
            return
        }
        #expect(empty == AccessLogFilter())
        let entry = AccessLogEntry(
            time: Date(timeIntervalSince1970: 1_767_000_001), event: .denial,
            requester: AccessLogRequester(pid: 42, uid: 1000, executable: "/usr/bin/git", parents: ["bash(40)"]),
            item: ItemKey(service: "mail", account: "ana"), channel: .command("totp"), decision: .noChannel,
            detail: "the vault's default rule is 'ask'")
        let records = [AccessLogRecord(index: 7, entry: entry), AccessLogRecord(index: 9, entry: entry)]
        let bytes = AgentResponse.accessLog(records: records, problems: ["entry 8 was removed"]).encoded()
        let answer = try bytes.withUnsafeBytes { raw in
            Result { () throws(AgentProtocolError) in try AgentResponse.decode(raw) }
        }.get()
        guard case .accessLog(let gotRecords, let gotProblems) = answer else {
            Issue.record("the answer")
            return
        }
        #expect(gotRecords == records)
        #expect(gotProblems == ["entry 8 was removed"])
        // An item is a service and an account, both or neither.
        var half = AccessLogFilter()
        half.item = ("mail", "ana")
        var wire = AgentRequest.accessLog(half).encoded()
        // The account's optional field (the second) is 1 ‖ "ana": make it absent (0).
        let at = try #require(wire.indices.dropLast(3).first { Array(wire[$0..<($0 + 4)]) == [1] + Array("ana".utf8) })
        wire.replaceSubrange(at..<(at + 4), with: [0])
        wire[at - 1] = 1
        #expect(throws: AgentProtocolError.badField("an item is a service and an account")) {
            try decode(wire).get()
        }
    }

    @Test func anotherVersionIsAClearError() {
        var bytes = AgentRequest.status.encoded()
        bytes[4] = 9
        #expect(throws: AgentProtocolError.versionMismatch(9)) { try decode(bytes).get() }
        #expect(AgentProtocolError.versionMismatch(9).description.contains("version 9"))
    }

    @Test func garbageIsATypedError() {
        #expect(throws: AgentProtocolError.truncated) { try decode([]).get() }
        #expect(throws: AgentProtocolError.badMagic) { try decode(Array("GET / HTTP/1.1".utf8)).get() }
        #expect(throws: AgentProtocolError.unknownCode(99)) {
            try decode(AgentProtocol.magic + [AgentProtocol.version, 99]).get()
        }
        // A field length past the end.
        #expect(throws: AgentProtocolError.truncated) {
            try decode(AgentProtocol.magic + [AgentProtocol.version, 4, 0xFF, 0xFF, 0xFF, 0xFF, 1]).get()
        }
        #expect(throws: AgentProtocolError.tooLarge(AgentProtocol.maxMessageBytes + 1)) {
            try decode([UInt8](repeating: 0, count: AgentProtocol.maxMessageBytes + 1)).get()
        }
    }

    /// Every truncation and every single-byte change of valid requests
    /// decodes or throws; none traps.
    @Test func mutationsNeverTrap() {
        let samples: [AgentRequest] = [
            .status, .lock, .get(service: "mail", account: "ana"), .list(service: "s"),
            .unlock(password: .init(utf8: "pw"), idleSeconds: 1, maxSeconds: 2),
            .save(service: "s", account: "a", secret: .init(utf8: "x"), changes: ItemChanges(label: "l")),
            .update(.key(service: "s", account: "a"), ItemChanges(secret: .init(utf8: "x"))), .subscribe,
            .add(Item(service: "s", account: "a", secret: .init(utf8: "x"))), .delete(.key(service: "s", account: "a")),
        ]
        for sample in samples {
            let bytes = sample.encoded()
            for length in 0..<bytes.count { _ = decode(Array(bytes[..<length])) }
            for index in bytes.indices {
                for value: UInt8 in [0, 1, 0x7F, 0x80, 0xFF] {
                    var mutated = bytes
                    mutated[index] = value
                    _ = decode(mutated)
                }
            }
        }
    }

    @Test func socketNameDependsOnTheCanonicalPath() {
        let a = AgentEndpoint(
            vaultURL: URL(fileURLWithPath: "/tmp/x/../vault.db"), environment: ["XDG_RUNTIME_DIR": "/run/user/7"])
        let b = AgentEndpoint(
            vaultURL: URL(fileURLWithPath: "/tmp/vault.db"), environment: ["XDG_RUNTIME_DIR": "/run/user/7"])
        #expect(a.socket == b.socket)
        #expect(a.directory == "/run/user/7/fob")
        let c = AgentEndpoint(vaultURL: URL(fileURLWithPath: "/tmp/other.db"), environment: [:])
        #expect(c.directory == "/tmp/fob-\(getuid())")
        #expect(c.socket != b.socket)
    }
}
