import FobStore
import Foundation

/// A persistent reference: the class's four characters ‖ the item's 16-byte ``Item/persistentID``.
enum PersistentReference {
    static func make(_ item: Item) -> Data {
        Data(item.itemClass.rawValue.utf8) + withUnsafeBytes(of: item.persistentID.uuid) { Data($0) }
    }

    /// - Throws: `errSecParam` for bytes that are not a Fob persistent reference.
    static func parse(_ data: Data) throws(SecItemFailure) -> (ItemClass, UUID) {
        guard data.count == 20,
            let itemClass = String(data: data.prefix(4), encoding: .utf8).flatMap(ItemClass.init(rawValue:))
        else {
            throw SecItemFailure(errSecParam, "kSecValuePersistentRef is not a persistent reference")
        }
        var uuid = UUID().uuid
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: data.suffix(16)) }
        return (itemClass, UUID(uuid: uuid))
    }
}

/// An item reference (Apple's `SecKeychainItemRef`), what `kSecReturnRef`
/// returns for a generic or internet password: an opaque object that names
/// one item (by its class and ``Item/persistentID``, as a persistent
/// reference does) and that `kSecValueRef` takes in later queries of
/// `SecItemCopyMatching`, `SecItemUpdate` and `SecItemDelete`. Two
/// references to the same item are equal. It holds no secret and no
/// attribute; a reference whose item was deleted matches nothing.
public final class SecKeychainItem: Sendable, Hashable, CustomStringConvertible {
    let itemClass: ItemClass
    let persistentID: UUID

    init(_ item: Item) {
        itemClass = item.itemClass
        persistentID = item.persistentID
    }

    public static func == (lhs: SecKeychainItem, rhs: SecKeychainItem) -> Bool {
        lhs.itemClass == rhs.itemClass && lhs.persistentID == rhs.persistentID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(itemClass.rawValue)
        hasher.combine(persistentID)
    }

    /// `<SecKeychainItem genp>`: the class only, never a name or secret.
    public var description: String { "<SecKeychainItem \(itemClass.rawValue)>" }
}

/// Apple's name for a reference to a keychain item.
public typealias SecKeychainItemRef = SecKeychainItem
