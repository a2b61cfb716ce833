import CSystemd
import FobStore
import FoundationEssentials

extension Provider {
    /// Writes the value of `property` of the object at `path` to `writer`.
    func property(_ path: String, _ interface: String, _ property: String, _ writer: BusWriter) throws {
        if Provider.isMemoryPath(path) { return try memoryProperty(path, interface, property, writer) }
        switch (interface, property) {
        case (Interface.service, "Collections"):
            try writer.objectPaths([Provider.collectionPath, Provider.sessionCollectionPath])
        case (Interface.collection, "Items"):
            // While locked: the items of the locked-search index (none when the
            // vault was never seen unlocked), each `Locked`.
            try writer.objectPaths((try? itemPaths()) ?? [])
        case (Interface.collection, "Label"): try writer.string(collectionLabel)
        case (Interface.collection, "Locked"): try writer.bool(!store.isUnlocked)
        case (Interface.collection, "Created"): try writer.uint64(vaultTimes.created)
        case (Interface.collection, "Modified"): try writer.uint64(vaultTimes.modified)
        case (Interface.item, "Locked"): try writer.bool(!store.isUnlocked)
        case (Interface.item, _): try itemProperty(path, property, writer)
        default: throw ProviderError.notSupported("no property \(interface).\(property)")
        }
    }

    private func itemProperty(_ path: String, _ property: String, _ writer: BusWriter) throws {
        let item: ItemSummary
        do {
            item = try self.item(at: path)
        } catch let error where error == .isLocked {
            // As gnome-keyring and the spec: a locked item shows its label, attributes and dates.
            let shown = try lockedItem(at: path)
            if property == "Attributes" { return try writer.stringDictionary(shown.attributes) }
            return try Provider.labelOrDate(
                property, label: shown.label, created: shown.created, modified: shown.modified, writer)
        }
        if property == "Attributes" { return try writer.pairs(item.attributes) }
        try Provider.labelOrDate(property, label: item.label, created: item.created, modified: item.modified, writer)
    }

    /// Writes an item's `Label`, `Created` or `Modified` (seconds since
    /// 1970), the same for vault and memory items.
    /// - Throws: `ProviderError.notSupported` for any other property.
    static func labelOrDate(
        _ property: String, label: String, created: UInt64, modified: UInt64, _ writer: BusWriter
    ) throws {
        switch property {
        case "Label": try writer.string(label)
        case "Created": try writer.uint64(created)
        case "Modified": try writer.uint64(modified)
        default: throw ProviderError.notSupported("no property \(Interface.item).\(property)")
        }
    }

    /// Sets `property` of the object at `path` from the value `reader` holds.
    func setProperty(_ path: String, _ interface: String, _ property: String, _ reader: BusReader) throws {
        if Provider.isMemoryPath(path) { return try setMemoryProperty(path, interface, property, reader) }
        if interface == Interface.collection, property == "Label", Provider.isCollection(path) {
            // As gnome-keyring renames a keyring; kept while the provider runs (the vault has no place for it).
            collectionLabel = try reader.string()
            return
        }
        guard interface == Interface.item else {
            throw ProviderError.notSupported("the collection's \(property) cannot be changed over D-Bus")
        }
        let item = try fullItem(at: path)
        var changes = ItemChanges()
        switch property {
        case "Label":
            changes.label = .some(try reader.string())
        case "Attributes":
            changes.customFields = ItemMapping.fields(
                keeping: item.customFields, attributes: try reader.stringDictionary(), contentType: nil)
        default: throw ProviderError.notSupported("\(Interface.item).\(property) cannot be changed")
        }
        do { try store.update(item, with: changes) } catch { throw ProviderError.from(error, path: path) }
        emit("ItemChanged", path)
    }

    /// Whether an object of `interface` is at `path` (items and sessions, which come and go).
    func exists(_ path: String, _ interface: String) -> Bool {
        switch interface {
        case Interface.session: return sessions.contains(path)
        case Interface.collection: return path == Provider.collectionPath || path == Provider.sessionCollectionPath
        case Interface.prompt: return prompts[path] != nil
        case Interface.item where path.hasPrefix(Provider.memoryItemPrefix): return memoryItems[path] != nil
        case Interface.item:
            guard let id = Provider.itemID(path) else { return false }
            do {
                _ = try store.summary(id)
                return true
            } catch .itemNotFound {
                return false
            } catch {
                // While locked an item cannot be looked up: it is shown, locked.
                return true
            }
        default: return false
        }
    }
}
