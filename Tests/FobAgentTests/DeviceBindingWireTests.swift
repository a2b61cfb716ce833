import FobAgent
import FobStore
import Foundation
import Testing

/// The `…ThisDeviceOnly` variant of an item's accessibility travels to the
/// agent with an update and back with an item, so FobSecurity through the
/// agent returns the value given, as it does on the file.
@Suite struct DeviceBindingWireTests {
    @Test(arguments: [DeviceBinding.thisDeviceOnly, .whenPasscodeSetThisDeviceOnly, nil] as [DeviceBinding?])
    func anUpdateCarriesTheDeviceBinding(binding: DeviceBinding?) throws {
        var changes = ItemChanges()
        changes.deviceBinding = .some(binding)
        let request = AgentRequest.update(ItemQuery(service: "s"), changes)
        let decoded = try request.encoded().withUnsafeBytes { raw in
            try Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }.get()
        }
        guard case .update(_, let got) = decoded else {
            Issue.record("decoded as \(decoded)")
            return
        }
        #expect(got.deviceBinding == .some(binding))
        #expect(ItemChanges().deviceBinding == nil)
    }

    @Test func anItemKeepsItsDeviceBindingOnTheWireAndInARecord() throws {
        var item = Item(service: "s", account: "a", accessible: .afterFirstUnlock, secret: .text("x"))
        item.deviceBinding = .thisDeviceOnly
        let back = try ItemWire.encode(item).withUnsafeBytes { raw in
            try Result { () throws(KeychainError) in try ItemWire.decode(raw) }.get()
        }
        #expect(back.deviceBinding == .thisDeviceOnly)
        var plain = item
        plain.deviceBinding = nil
        let plainBack = try ItemWire.encode(plain).withUnsafeBytes { raw in
            try Result { () throws(KeychainError) in try ItemWire.decode(raw) }.get()
        }
        #expect(plainBack.deviceBinding == nil)
    }
}
