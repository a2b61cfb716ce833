import FobSecretService
import FobStore
import FobSystem
import Foundation
import Testing

/// How Secret Service attributes are kept on vault items (docs/secret-service.md).
@Suite struct ItemMappingTests {
    @Test func anItemOfFobAddShowsServiceAccountAndUsername() {
        let item = Item(service: "mail", account: "ana", secret: nil)
        #expect(ItemMapping.attributes(of: item) == ["service": "mail", "account": "ana", "username": "ana"])
        #expect(ItemMapping.matches(item, ["service": "mail", "username": "ana"]))
        #expect(ItemMapping.matches(item, [:]))
        #expect(!ItemMapping.matches(item, ["service": "Mail"]))
    }

    @Test func storedAttributesAreExactlyTheClientsOnes() {
        let fields = ItemMapping.fields(
            keeping: [CustomField(name: "pin", value: SecretBytes(utf8: "1"), isHidden: true)],
            attributes: ["service": "S", "xdg:schema": "org.example"], contentType: "text/plain")
        let item = Item(service: "S", account: "", customFields: fields, secret: nil)
        #expect(ItemMapping.attributes(of: item) == ["service": "S", "xdg:schema": "org.example"])
        #expect(item.customFields.map(\.name) == ["pin", "attr:service", "attr:xdg:schema"])
        #expect(ItemMapping.contentType(of: item) == "text/plain")
    }

    @Test func theKeyComesFromServiceAndUsernameElseTheLabel() {
        #expect(ItemMapping.key(attributes: ["service": "S", "username": "A"], label: "L") == ("S", "A"))
        #expect(ItemMapping.key(attributes: ["service": "S", "account": "B"], label: "L") == ("S", "B"))
        #expect(
            ItemMapping.key(attributes: ["application": "chrome"], label: "Chrome Safe Storage") == (
                "Chrome Safe Storage", ""
            ))
        #expect(ItemMapping.key(attributes: ["xdg:schema": "x.y"], label: "") == ("x.y", ""))
        #expect(ItemMapping.key(attributes: [:], label: "") == ("secret-service", ""))
    }

    @Test func aTakenKeyGetsTheNextFreeNumber() throws {
        let taken: Set<String> = ["ana", "ana (2)", "", "(2)", "(3)"]
        #expect(try ItemMapping.freeAccount(service: "s", account: "ana") { taken.contains($0) } == "ana (3)")
        #expect(try ItemMapping.freeAccount(service: "s", account: "") { taken.contains($0) } == "(4)")
        #expect(try ItemMapping.freeAccount(service: "s", account: "bob") { taken.contains($0) } == "bob")
    }

    @Test func pathElementsRoundTripAndRefuseOthers() {
        let id = UUID()
        let element = ItemMapping.pathElement(of: id)
        #expect(element.count == 32)
        #expect(ItemMapping.persistentID(pathElement: element) == id)
        #expect(ItemMapping.persistentID(pathElement: "login") == nil)
        #expect(ItemMapping.persistentID(pathElement: String(element.dropLast()) + "g") == nil)
    }
}
