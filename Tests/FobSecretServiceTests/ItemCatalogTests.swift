import FobStore
import FobSystem
import FoundationEssentials
import Testing

@testable import FobSecretService

/// The provider's packed catalog gives back exactly the summaries put in,
/// and matches attributes as the spec's search does.
@Suite struct ItemCatalogTests {
    static func item(_ service: String, _ account: String, attributes: [String: String], type: String? = nil) -> Item {
        var item = Item(
            service: service, account: account, label: "Label of \(service)",
            customFields: ItemMapping.fields(keeping: [], attributes: attributes, contentType: type), secret: nil)
        item.revision = 7
        item.synchronizable = service.hasPrefix("sync")
        return item
    }

    static let items = [
        item("svc", "ana", attributes: ["service": "svc", "username": "ana", "bench": "all"]),
        // Texts past 127 bytes (a two-byte length), non-ASCII, empty values.
        item(
            String(repeating: "é", count: 200), "", attributes: ["note": String(repeating: "x", count: 300), "e": ""],
            type: "application/octet-stream"),
        item("sync", "bob", attributes: [:]),
    ]

    @Test func containsFindsExactlyThePrimaryKeysPutIn() {
        var catalog = ItemCatalog()
        for item in Self.items { catalog.append(item) }
        #expect(catalog.contains(service: "svc", account: "ana", accessGroup: ""))
        #expect(catalog.contains(service: String(repeating: "é", count: 200), account: "", accessGroup: ""))
        #expect(!catalog.contains(service: "svc", account: "ana (2)", accessGroup: ""))
        #expect(!catalog.contains(service: "svc", account: "", accessGroup: ""))
        #expect(!catalog.contains(service: "sync", account: "bob", accessGroup: "group"))
        // Texts that run together the same way are still different keys.
        #expect(!catalog.contains(service: "svca", account: "na", accessGroup: ""))
        catalog.append(Self.item("svc", "ana (2)", attributes: [:]))
        #expect(catalog.contains(service: "svc", account: "ana (2)", accessGroup: ""))
    }

    @Test func accountSuffixesFindTheFirstFreeAccountAndRememberWhereTheyStopped() throws {
        var catalog = ItemCatalog()
        var generation = 0
        var suffixes = AccountSuffixes()
        var askedElsewhere: [String] = []
        func create(_ account: String) throws -> String {
            let found = try suffixes.freeAccount(service: "s", account: account, in: catalog, generation: generation) {
                askedElsewhere.append($0)
                return false
            }
            catalog.append(Self.item("s", found, attributes: [:]))
            generation += 1
            suffixes.created(service: "s", account: account, generation: generation)
            return found
        }
        #expect(try (0..<5).map { _ in try create("ana") } == ["ana", "ana (2)", "ana (3)", "ana (4)", "ana (5)"])
        // One account asked beyond the catalog per create: the search starts where the last one stopped.
        #expect(askedElsewhere == ["ana", "ana (2)", "ana (3)", "ana (4)", "ana (5)"])
        #expect(try create("") == "")
        #expect(try create("") == "(2)")
        // Any other change of the catalog (here: "ana (2)" deleted elsewhere) may free a lower suffix.
        var rebuilt = ItemCatalog()
        for i in 0..<catalog.count where catalog[i].account != "ana (2)" {
            rebuilt.append(Self.item("s", catalog[i].account, attributes: [:]))
        }
        catalog = rebuilt
        generation += 5
        #expect(try create("ana") == "ana (2)")
        #expect(try create("ana") == "ana (6)")
    }

    @Test func accountSuffixesAskElsewhereForWhatTheCatalogDoesNotHold() throws {
        var suffixes = AccountSuffixes()
        // Another process took "ana" and "ana (2)" since the catalog was made.
        let found = try suffixes.freeAccount(service: "s", account: "ana", in: ItemCatalog(), generation: 1) {
            ["ana", "ana (2)"].contains($0)
        }
        #expect(found == "ana (3)")
    }

    @Test func everySummaryReadsBackAsPutIn() {
        var catalog = ItemCatalog()
        for item in Self.items { catalog.append(item) }
        catalog.shrink()
        #expect(catalog.count == 3)
        for (index, item) in Self.items.enumerated() {
            let expected = ItemSummary(item)
            let read = catalog[index]
            #expect(read.persistentID == expected.persistentID)
            #expect(read.service == expected.service && read.account == expected.account)
            #expect(read.accessGroup == expected.accessGroup && read.synchronizable == expected.synchronizable)
            #expect(read.revision == 7 && read.label == expected.label)
            #expect(read.attributes.map(\.key) == expected.attributes.map(\.key))
            #expect(read.attributes.map(\.value) == expected.attributes.map(\.value))
            #expect(read.created == expected.created && read.modified == expected.modified)
            #expect(read.contentType == expected.contentType)
            #expect(catalog.contentType(index) == expected.contentType)
            #expect(catalog.index(of: item.persistentID) == index)
            #expect(catalog.identity(index).id == item.persistentID && catalog.identity(index).revision == 7)
        }
        #expect(catalog[1].contentType == "application/octet-stream")
        #expect(catalog[2].attributes.map(\.key) == ["account", "service", "username"], "fob add's attributes")
        #expect(catalog.index(of: UUID()) == nil)
    }

    @Test func searchMatchesEveryPairExactly() {
        var catalog = ItemCatalog()
        for item in Self.items { catalog.append(item) }
        func found(_ query: [String: String]) -> [Int] {
            let pairs = query.map { (key: Array($0.key.utf8), value: Array($0.value.utf8)) }
            return (0..<catalog.count).filter { catalog.matches($0, pairs) }
        }
        #expect(found([:]) == [0, 1, 2])
        #expect(found(["service": "svc"]) == [0])
        #expect(found(["service": "svc", "username": "ana"]) == [0])
        #expect(found(["service": "svc", "username": "Ana"]) == [], "case-sensitive")
        #expect(found(["service": "sv"]) == [], "exact, not a prefix")
        #expect(found(["e": ""]) == [1])
        #expect(found(["username": "bob", "account": "bob"]) == [2])
        #expect(found(["bench": "all", "nothing": "x"]) == [])
    }

    @Test func anItemListedTwiceIsFoundAtItsFirstPlace() {
        var catalog = ItemCatalog()
        catalog.append(Self.items[0])
        catalog.append(Self.items[1])
        catalog.append(Self.items[0])
        #expect(catalog.index(of: Self.items[0].persistentID) == 0)
        #expect(catalog.count == 3)
    }
}
