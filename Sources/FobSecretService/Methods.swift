import CSecretService
import CSystemd
import FobStore
import FobSystem
import FoundationEssentials

/// One method call: its message, reader and the reply being built.
struct Call {
    let message: OpaquePointer
    let path: String
    let interface: String
    let member: String
    let sender: String
    var reader: BusReader { BusReader(message: message) }
}

extension Provider {
    /// Answers `call`, writing the reply's arguments with `writer`.
    /// - Throws: the D-Bus error to answer with; `BusFailure` for a message that cannot be read.
    func handle(_ call: Call, _ writer: BusWriter) throws {
        if Provider.isMemoryPath(call.path) {
            switch call.interface {
            case Interface.collection: return try handleMemoryCollection(call, writer)
            case Interface.item: return try handleMemoryItem(call, writer)
            default: break
            }
        }
        switch call.interface {
        case Interface.service: try handleService(call, writer)
        case Interface.collection: try handleCollection(call, writer)
        case Interface.item: try handleItem(call, writer)
        case Interface.session:
            // Only the connection that opened a session closes it.
            try sessions.close(call.path, sender: call.sender)
        case Interface.prompt:
            try handlePrompt(call)
        default:
            throw ProviderError.notSupported("\(call.interface).\(call.member)")
        }
    }

    private func handleService(_ call: Call, _ writer: BusWriter) throws {
        let reader = call.reader
        switch call.member {
        case "OpenSession": try openSession(call, writer)
        case "SearchItems":
            let query = try reader.stringDictionary()
            let found = try search(query)
            try writer.objectPaths(found.unlocked + searchMemory(query))
            try writer.objectPaths(found.locked)
        case "GetSecrets": try getSecrets(call, writer)
        case "ReadAlias":
            let name = try reader.string()
            switch name {
            case "default", "login": try writer.string(Provider.collectionPath, "o")
            case "session": try writer.string(Provider.sessionCollectionPath, "o")
            default: try writer.string(Provider.noPrompt, "o")
            }
        case "SetAlias":
            let name = try reader.string()
            let target = try reader.string("o")
            guard name == "default" || name == "login", Provider.isCollection(target) else {
                throw ProviderError.notSupported("only `default` and `login` can name the vault's collection")
            }
        case "CreateCollection":
            try reader.skip("a{sv}")
            let alias = try reader.string()
            guard alias == "default" || alias == "login" else {
                throw ProviderError.notSupported("only the vault's collection (alias default or login) exists")
            }
            try writer.string(Provider.collectionPath, "o")
            try writer.string(Provider.noPrompt, "o")
        case "Unlock":
            let objects = try reader.objectPaths()
            if store.isUnlocked {
                try writer.objectPaths(objects)
                try writer.string(Provider.noPrompt, "o")
            } else {
                // Completes when `fob unlock` runs (see Prompts.swift).
                try writer.objectPaths([])
                try writer.string(try makePrompt(owner: call.sender, objects: objects), "o")
            }
        case "Lock":
            let objects = try reader.objectPaths()
            do { try store.lock() } catch { throw ProviderError.from(error) }
            emitLockedChanged()
            try writer.objectPaths(objects)
            try writer.string(Provider.noPrompt, "o")
        default: throw ProviderError.notSupported("\(call.interface).\(call.member)")
        }
    }

    private func openSession(_ call: Call, _ writer: BusWriter) throws {
        let reader = call.reader
        let algorithm = try reader.string()
        let signature = try reader.variantSignature()
        switch algorithm {
        case SessionCipher.plainName:
            try reader.skip("v")
            let path = try openSession(owner: call.sender, cipher: .plain)
            try writer.open("v", "s")
            try writer.string("")
            try writer.close()
            try writer.string(path, "o")
        case SessionCipher.dhName:
            guard signature == "ay" else { throw ProviderError.invalidArgs("the DH input is an array of bytes") }
            _ = try reader.enter("v", "ay")
            let clientPublic = try reader.bytes()
            try reader.exit()
            // Refused before the key exchange's work: a connection at its limit costs nothing more.
            try sessions.admit(call.sender)
            let cipher: SessionCipher
            let serverPublic: [UInt8]
            do {
                (cipher, serverPublic) = try SessionCipher.negotiate(clientPublic: clientPublic)
            } catch .noMemory {
                throw ProviderError.noMemory("no memory for another session's key; close sessions and try again")
            } catch {
                throw ProviderError.invalidArgs("the DH public key is not in 2 ... p-2 or longer than 128 bytes")
            }
            let path = try openSession(owner: call.sender, cipher: cipher)
            try writer.open("v", "ay")
            try writer.bytes(serverPublic)
            try writer.close()
            try writer.string(path, "o")
        default:
            throw ProviderError.notSupported("algorithm '\(algorithm)': plain or \(SessionCipher.dhName)")
        }
    }

    private func getSecrets(_ call: Call, _ writer: BusWriter) throws {
        let reader = call.reader
        let paths = try reader.objectPaths()
        let session = try reader.string("o")
        let cipher = try cipher(session: session, sender: call.sender)
        // Only the vault's items named and listed are decrypted (see
        // ``ItemCache/secrets(of:)``). The session collection's
        // items need no vault (they are answered while it is locked, too).
        let ids = paths.compactMap { memoryItems[$0] == nil ? Provider.itemID($0) : nil }
        var secrets: [UUID: SecretBytes] = [:]
        if !ids.isEmpty {
            do { secrets = try store.secrets(of: ids) } catch { throw ProviderError.from(error) }
        }
        // One draw from the random source for every IV, not a system call per secret.
        var ivs = cipher.isPlain || paths.count < 2 ? [] : Sodium.randomBytes(16 * paths.count)
        defer { ivs.wipe() }
        var next = 0
        func iv() -> [UInt8]? {
            guard next + 16 <= ivs.count else { return nil }
            defer { next += 16 }
            return Array(ivs[next..<(next + 16)])
        }
        try writer.open("a", "{o(oayays)}")
        for path in paths {
            if let memory = memoryItems[path] {
                try writer.open("e", "o(oayays)")
                try writer.string(path, "o")
                try writeMemorySecret(memory, session: session, cipher: cipher, to: writer)
                try writer.close()
                continue
            }
            // Paths that name no item are left out, as the spec's GetSecrets allows.
            guard let id = Provider.itemID(path), let secret = secrets[id],
                let contentType = try existingItem(id, path: path)
            else { continue }
            try writer.open("e", "o(oayays)")
            try writer.string(path, "o")
            try write(
                secret: secret, contentType: contentType, session: session, cipher: cipher, to: writer, iv: iv())
            try writer.close()
        }
        try writer.close()
    }

    /// The content type of the item with this persistent ID (`.some(nil)`
    /// for `text/plain`), or `nil` when there is no such item.
    private func existingItem(_ id: UUID, path: String) throws(ProviderError) -> String?? {
        do {
            return .some(try store.contentType(id))
        } catch .itemNotFound {
            return nil
        } catch {
            throw .from(error, path: path)
        }
    }

    private func handleCollection(_ call: Call, _ writer: BusWriter) throws {
        let reader = call.reader
        switch call.member {
        case "SearchItems":
            let found = try search(try reader.stringDictionary())
            try writer.objectPaths(found.unlocked + found.locked)
        case "CreateItem":
            let new = try createItemArguments(call)
            let path = try createItem(
                label: new.label, attributes: new.attributes, secret: new.secret, contentType: new.contentType,
                replace: new.replace)
            try writer.string(path, "o")
            try writer.string(Provider.noPrompt, "o")
        case "Delete":
            throw ProviderError.notSupported("the vault's collection cannot be deleted over D-Bus")
        default: throw ProviderError.notSupported("\(call.interface).\(call.member)")
        }
    }

    /// The arguments of a collection's `CreateItem` (`a{sv}` properties,
    /// `(oayays)` secret, `b` replace), the secret opened with the sender's
    /// session key (``open(_:sender:)``) and the bytes as sent wiped.
    /// - Throws: the reader's ``BusFailure`` for arguments of the wrong
    ///   type; ``ProviderError`` when the secret cannot be opened.
    func createItemArguments(_ call: Call) throws -> CreateItemArguments {
        let reader = call.reader
        let (label, attributes) = try Provider.itemProperties(reader)
        var sent = try reader.secret()
        // Wiped in place: a copy would leave this one behind.
        defer { sent.value.wipe() }
        let replace = try reader.bool()
        let secret = try open(sent, sender: call.sender)
        return CreateItemArguments(
            label: label, attributes: attributes, secret: secret, contentType: sent.contentType, replace: replace)
    }

    /// The label and attributes of CreateItem's `a{sv}` properties; other properties are skipped.
    static func itemProperties(_ reader: BusReader) throws -> (String, [String: String]) {
        var label = ""
        var attributes: [String: String] = [:]
        _ = try reader.enter("a", "{sv}")
        while try reader.enter("e", "sv") {
            let key = try reader.string()
            let signature = try reader.variantSignature()
            switch (key, signature) {
            case ("org.freedesktop.Secret.Item.Label", "s"):
                _ = try reader.enter("v", "s")
                label = try reader.string()
                try reader.exit()
            case ("org.freedesktop.Secret.Item.Attributes", "a{ss}"):
                _ = try reader.enter("v", "a{ss}")
                attributes = try reader.stringDictionary()
                try reader.exit()
            default:
                try reader.skip("v")
            }
            try reader.exit()
        }
        try reader.exit()
        return (label, attributes)
    }

    private func handleItem(_ call: Call, _ writer: BusWriter) throws {
        let reader = call.reader
        switch call.member {
        case "GetSecret":
            let session = try reader.string("o")
            let cipher = try cipher(session: session, sender: call.sender)
            let summary = try item(at: call.path)
            let secret: SecretBytes
            do { secret = try store.secret(summary.persistentID) } catch {
                throw ProviderError.from(error, path: call.path)
            }
            try write(secret: secret, contentType: summary.contentType, session: session, cipher: cipher, to: writer)
        case "SetSecret":
            var secret = try reader.secret()
            // Wiped in place: a copy would leave this one behind.
            defer { secret.value.wipe() }
            let bytes = try open(secret, sender: call.sender)
            let item = try fullItem(at: call.path)
            var changes = ItemChanges(secret: bytes)
            if item.customFields.contains(where: { $0.name.hasPrefix(ItemMapping.fieldPrefix) }) {
                changes.customFields = ItemMapping.fields(
                    keeping: item.customFields, attributes: ItemMapping.attributes(of: item),
                    contentType: secret.contentType)
            }
            do { try store.update(item, with: changes) } catch { throw ProviderError.from(error, path: call.path) }
            emit("ItemChanged", call.path)
        case "Delete":
            let item = try item(at: call.path).key
            do { try store.delete(item) } catch { throw ProviderError.from(error, path: call.path) }
            emit("ItemDeleted", call.path)
            try writer.string(Provider.noPrompt, "o")
        default: throw ProviderError.notSupported("\(call.interface).\(call.member)")
        }
    }
}

/// What a client asks `CreateItem` to store (``Provider/createItemArguments(_:)``).
struct CreateItemArguments {
    /// The `org.freedesktop.Secret.Item.Label` property; `""` when not given.
    let label: String
    /// The `org.freedesktop.Secret.Item.Attributes` property.
    let attributes: [String: String]
    /// The secret, opened.
    let secret: SecretBytes
    /// The secret's content type as the client sent it.
    let contentType: String
    /// Whether an item with the same attributes is replaced rather than another created.
    let replace: Bool
}
