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
