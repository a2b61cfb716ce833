import FobStore
import Foundation
import Testing

@testable import FobAgent

/// Request messages are built in a buffer reserved at their exact size: a
/// buffer that grew would free copies of the vault key, a password or a
/// secret without wiping them.
@Suite struct AgentEncodingTests {
    static func changes() -> ItemChanges {
        var changes = ItemChanges()
        changes.label = .some("label")
        changes.url = .some("https://example.com/" + String(repeating: "p", count: 3000))
        changes.oneTimePassword = .some(SecretBytes(Array(repeating: 0x41, count: 64)))
        changes.customFields = (0..<40).map {
            CustomField(name: "field\($0)", value: SecretBytes(Array(repeating: 0x42, count: 2000)), isHidden: true)
        }
        return changes
    }

    static var requests: [AgentRequest] {
        let secret = SecretBytes(Array(repeating: 0x53, count: 100_000))
        var item = Item(service: "mail", account: "ana", secret: secret)
        item.customFields = changes().customFields ?? []
        var withSecret = changes()
        withSecret.secret = secret
        return [
            .unlock(password: SecretBytes(Array(repeating: 0x50, count: 60_000)), idleSeconds: 1, maxSeconds: 2),
            .unlockWithKey(vaultKey: SecretBytes(Array(repeating: 7, count: 32)), idleSeconds: 1, maxSeconds: 2),
            .add(item),
            .save(service: "mail", account: "ana", secret: secret, changes: changes()),
            .update(.key(service: "mail", account: "ana"), withSecret),
            .update(ItemQuery(service: "mail"), changes()),
            .applyImport([.add(item), .replace(existing: item, with: item)]),
            .get(.key(service: "mail", account: "ana"), limitOne: true, detail: .secret),
        ]
    }

    @Test func everyRequestIsWrittenWithoutItsBufferMoving() throws {
        for request in Self.requests {
            var reallocated = true
            var bytes = request.encoded(reallocated: &reallocated)
            defer { bytes.wipe() }
            #expect(!reallocated, "\(request.code)")
            // And the message is whole: it decodes to the same request code.
            let back = try bytes.withUnsafeBytes { raw in
                Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
            }.get()
            #expect(back.code == request.code)
        }
    }

    @Test func theSizerCountsExactlyWhatTheWriterWrites() {
        for request in Self.requests {
            var sizer = MessageWriter.sizer(code: request.code)
            request.write(to: &sizer)
            var bytes = request.encoded()
            defer { bytes.wipe() }
            #expect(sizer.count == bytes.count, "\(request.code)")
        }
    }
}
