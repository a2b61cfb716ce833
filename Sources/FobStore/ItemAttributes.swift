import FoundationEssentials

/// A custom field of an item: a name, a text value, and whether the value is
/// hidden (shown masked, like the secret).
///
/// The value is held in ``SecretBytes`` whether hidden or not, so one type
/// serves both; a hidden value is a secret and never appears in
/// ``description``. Neither does a visible one: descriptions name the field
/// and the value's size only.
public struct CustomField: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The field's name, shown as its caption; 1 to ``Item/maxFieldNameBytes`` bytes of UTF-8.
    public var name: String
    /// The value, normally UTF-8 text; up to ``Item/maxFieldValueBytes`` bytes.
    public var value: SecretBytes
    /// Whether the value is a secret, shown masked until revealed.
    public var isHidden: Bool

    /// A field with a value in protected memory.
    /// - Parameters:
    ///   - name: the caption; 1 to ``Item/maxFieldNameBytes`` bytes of UTF-8.
    ///   - value: up to ``Item/maxFieldValueBytes`` bytes.
    ///   - isHidden: whether the value is a secret.
    public init(name: String, value: SecretBytes, isHidden: Bool = false) {
        self.name = name
        self.value = value
        self.isHidden = isHidden
    }

    /// A field whose value is `text` as UTF-8.
    /// - Important: the `String` cannot be wiped; for hidden values prefer ``init(name:value:isHidden:)``.
    public init(name: String, text: String, isHidden: Bool = false) {
        self.init(name: name, value: SecretBytes(utf8: text), isHidden: isHidden)
    }

    /// The value as text, or `nil` when it is not UTF-8.
    /// - Important: a copy that cannot be wiped; take it only to show or send the value.
    public var unsafeText: String? { value.unsafeString }

    /// `CustomField("name", hidden, 12 bytes)`: never the value.
    public var description: String {
        "CustomField(\"\(displaySafe(name))\", \(isHidden ? "hidden" : "visible"), \(value.count) bytes)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }
}

/// A record field this version of Fob does not know (written by a later
/// version), kept as it was so that rewriting the item does not drop it.
struct UnknownRecordField: Sendable, Equatable {
    /// The tag byte.
    let tag: UInt8
    /// The field's bytes; held as a secret, since Fob cannot tell what they are.
    let bytes: SecretBytes
}

extension Item {
    /// The largest text attribute (service, account, access group, label,
    /// URL, path, security domain, description, protocol and authentication
    /// type): 64 KiB of UTF-8.
    public static let maxTextBytes = 1 << 16
    /// The largest notes (``comment``) and ``generic`` bytes: 1 MiB.
    public static let maxNotesBytes = 1 << 20
    /// The largest one-time-password seed (an `otpauth://` URI): 8 KiB.
    public static let maxOneTimePasswordBytes = 8 << 10
    /// The most custom fields an item holds: 256.
    public static let maxCustomFields = 256
    /// The longest custom field name: 1 KiB of UTF-8.
    public static let maxFieldNameBytes = 1 << 10
    /// The largest custom field value: 64 KiB.
    public static let maxFieldValueBytes = 1 << 16
    /// The largest `port` (`kSecAttrPort`): 65,535.
    public static let maxPort = 65_535

    /// Checks every attribute against its limit.
    /// - Throws: `.param` naming the first attribute over its limit (never its value).
    public func checkLimits() throws(KeychainError) {
        let texts: [(String, String?)] = [
            ("service", service), ("account", account), ("access group", accessGroup), ("label", label),
            ("URL", url), ("path", path), ("security domain", securityDomain), ("description", itemDescription),
            ("protocol", internetProtocol), ("authentication type", authenticationType),
        ]
        for (name, value) in texts where (value?.utf8.count ?? 0) > Item.maxTextBytes {
            throw .param("the \(name) is longer than \(Item.maxTextBytes) bytes")
        }
        if (comment?.utf8.count ?? 0) > Item.maxNotesBytes {
            throw .param("the notes are longer than \(Item.maxNotesBytes) bytes")
        }
        if (generic?.count ?? 0) > Item.maxNotesBytes {
            throw .param("the generic bytes are more than \(Item.maxNotesBytes)")
        }
        if (oneTimePassword?.count ?? 0) > Item.maxOneTimePasswordBytes {
            throw .param("the one-time-password seed is longer than \(Item.maxOneTimePasswordBytes) bytes")
        }
        guard (0...Item.maxPort).contains(port) else { throw .param("the port is not between 0 and \(Item.maxPort)") }
        guard customFields.count <= Item.maxCustomFields else {
            throw .param("more than \(Item.maxCustomFields) custom fields")
        }
        for field in customFields {
            guard !field.name.isEmpty, field.name.utf8.count <= Item.maxFieldNameBytes else {
                throw .param("a custom field name is empty or longer than \(Item.maxFieldNameBytes) bytes")
            }
            guard field.value.count <= Item.maxFieldValueBytes else {
                throw .param(
                    "the custom field \"\(displaySafe(field.name))\" is longer than \(Item.maxFieldValueBytes) bytes")
            }
        }
    }
}
