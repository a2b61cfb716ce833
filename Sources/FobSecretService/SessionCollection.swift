import CSystemd
import FobSystem
import FoundationEssentials

/// An item of the in-memory `session` collection: gone when the provider stops.
struct MemoryItem {
    /// The unique name of the connection that created it (its limit counts it).
    let owner: String
    var label: String
    var attributes: [String: String]
    /// Wiped when the item is deleted or replaced, or the provider stops.
    var secret: SecretBytes
    var contentType: String
    let created: UInt64
    var modified: UInt64
}

/// The spec's `session` collection (alias `session`): items kept in the
/// provider's memory only, never in the vault, always unlocked.
extension Provider {
    static let sessionCollectionPath = root + "/collection/session"
    static let sessionAliasPath = root + "/aliases/session"
    static let memoryItemPrefix = sessionCollectionPath + "/"
    /// The most items of the session collection one connection may create: 1,000.
    static let memoryItemsPerConnection = 1000
    /// The most items the session collection holds: 10,000.
    static let memoryItemsInAll = 10_000

    /// Whether `path` names the session collection (its path or its alias path).
    static func isSessionCollection(_ path: String) -> Bool {
        path == sessionCollectionPath || path == sessionAliasPath
    }

    /// Whether `path` is inside the session collection (the collection or one of its items).
    static func isMemoryPath(_ path: String) -> Bool {
        isSessionCollection(path) || path.hasPrefix(memoryItemPrefix)
    }

    private static func seconds() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970)) }

    /// The memory item at `path`, or `NoSuchObject`.
    func memoryItem(at path: String) throws(ProviderError) -> MemoryItem {
        guard let item = memoryItems[path] else { throw .noSuchObject(path) }
        return item
    }

    /// The paths of the memory items matching `query`, sorted.
    func searchMemory(_ query: [String: String]) -> [String] {
        memoryItems.filter { entry in query.allSatisfy { entry.value.attributes[$0.key] == $0.value } }.keys.sorted()
    }

    /// The session collection's methods.
    func handleMemoryCollection(_ call: Call, _ writer: BusWriter) throws {
        let reader = call.reader
        switch call.member {
        case "SearchItems":
            try writer.objectPaths(searchMemory(try reader.stringDictionary()))
        case "CreateItem":
            let new = try createItemArguments(call)
            let now = Provider.seconds()
            var path = Provider.memoryItemPrefix + ItemMapping.pathElement(of: UUID())
            if new.replace, let existing = memoryItems.first(where: { $0.value.attributes == new.attributes }) {
                path = existing.key
            }
            let existed = memoryItems[path] != nil
            if !existed { try admitMemoryItem(owner: call.sender) }
            memoryItems[path] = MemoryItem(
                owner: memoryItems[path]?.owner ?? call.sender, label: new.label, attributes: new.attributes,
                secret: new.secret, contentType: new.contentType,
                created: memoryItems[path]?.created ?? now, modified: now)
            emitMemory(existed ? "ItemChanged" : "ItemCreated", path)
            try writer.string(path, "o")
            try writer.string(Provider.noPrompt, "o")
        case "Delete":
            throw ProviderError.notSupported("the session collection cannot be deleted")
        default: throw ProviderError.notSupported("\(call.interface).\(call.member)")
        }
    }

    /// Checks that `owner` may create one more item of the session collection.
    /// - Throws: `LimitsExceeded` at ``memoryItemsPerConnection`` items of
    ///   this connection or ``memoryItemsInAll`` in all.
    private func admitMemoryItem(owner: String) throws(ProviderError) {
        guard memoryItems.count < Provider.memoryItemsInAll else {
            throw .limitsExceeded("the session collection holds \(Provider.memoryItemsInAll) items, the most it may")
        }
        guard memoryItems.values.lazy.filter({ $0.owner == owner }).count < Provider.memoryItemsPerConnection else {
            throw .limitsExceeded(
                "this connection made \(Provider.memoryItemsPerConnection) items of the session collection,"
                    + " the most it may; delete some first")
        }
    }

    /// The methods of a memory item.
    func handleMemoryItem(_ call: Call, _ writer: BusWriter) throws {
        let item = try memoryItem(at: call.path)
        switch call.member {
        case "GetSecret":
            let session = try call.reader.string("o")
            let cipher = try cipher(session: session, sender: call.sender)
            try writeMemorySecret(item, session: session, cipher: cipher, to: writer)
        case "SetSecret":
            var sent = try call.reader.secret()
            // Wiped in place: a copy would leave this one behind.
            defer { sent.value.wipe() }
            memoryItems[call.path]?.secret = try open(sent, sender: call.sender)
            memoryItems[call.path]?.contentType = sent.contentType
            memoryItems[call.path]?.modified = Provider.seconds()
            emitMemory("ItemChanged", call.path)
        case "Delete":
            memoryItems[call.path] = nil
            emitMemory("ItemDeleted", call.path)
            try writer.string(Provider.noPrompt, "o")
        default: throw ProviderError.notSupported("\(call.interface).\(call.member)")
        }
    }

    /// A memory item's secret sealed for a session, as `(oayays)`.
    func writeMemorySecret(_ item: MemoryItem, session: String, cipher: SessionCipher, to writer: BusWriter) throws {
        var sealed = cipher.seal(item.secret)
        defer { sealed.value.wipe() }
        try writer.secret(
            session: session, parameters: sealed.parameters, value: sealed.value, contentType: item.contentType)
    }

    /// The properties of the session collection and its items.
    func memoryProperty(_ path: String, _ interface: String, _ property: String, _ writer: BusWriter) throws {
        if interface == Interface.collection {
            switch property {
            case "Items": try writer.objectPaths(memoryItems.keys.sorted())
            case "Label": try writer.string("Session")
            case "Locked": try writer.bool(false)
            case "Created", "Modified": try writer.uint64(startTime)
            default: throw ProviderError.notSupported("no property \(interface).\(property)")
            }
            return
        }
        let item = try memoryItem(at: path)
        switch property {
        case "Locked": try writer.bool(false)
        case "Attributes": try writer.stringDictionary(item.attributes)
        default:
            try Provider.labelOrDate(
                property, label: item.label, created: item.created, modified: item.modified, writer)
        }
    }

    /// Sets `Label` or `Attributes` of a memory item.
    func setMemoryProperty(_ path: String, _ interface: String, _ property: String, _ reader: BusReader) throws {
        guard interface == Interface.item else {
            throw ProviderError.notSupported("the session collection's \(property) cannot be changed")
        }
        _ = try memoryItem(at: path)
        switch property {
        case "Label": memoryItems[path]?.label = try reader.string()
        case "Attributes": memoryItems[path]?.attributes = try reader.stringDictionary()
        default: throw ProviderError.notSupported("\(Interface.item).\(property) cannot be changed")
        }
        memoryItems[path]?.modified = Provider.seconds()
        emitMemory("ItemChanged", path)
    }

    /// Emits an item signal of the session collection from its path and its alias path.
    /// Then, as for the vault's, the Service's `CollectionChanged`.
    func emitMemory(_ member: String, _ item: String) {
        let paths = [Provider.sessionCollectionPath, Provider.sessionAliasPath]
        for path in paths { signal(path, Interface.collection, member, item) }
        signal(Provider.root, Interface.service, "CollectionChanged", Provider.sessionCollectionPath)
    }
}
