/// An item as bytes, for handing it between processes (the agent and its
/// clients): the same layout as a sealed record's plaintext, never written
/// to disk in this form.
public enum ItemWire {
    /// Every attribute of `item`, and its secret and one-time seed when set,
    /// in protected memory.
    /// - Parameter item: any item.
    /// - Returns: the encoded bytes (a few bytes of header and tagged fields).
    public static func encode(_ item: Item) -> SecretBytes {
        RecordCodec.encode(item)
    }

    /// An item's encoding laid out but not yet written, so that a caller
    /// framing many items can reserve the whole buffer once: a buffer that
    /// grows while it holds secrets leaves unwiped copies behind.
    public struct Encoding {
        fileprivate let prepared: RecordCodec.Prepared
        /// The encoded size in bytes (the same bytes as ``ItemWire/encode(_:)``).
        public var count: Int { prepared.count }
        /// Writes the ``count`` bytes at the start of `buffer`.
        /// - Precondition: `buffer` holds at least ``count`` bytes.
        public func write(into buffer: UnsafeMutableRawBufferPointer) { prepared.write(into: buffer) }
    }

    /// Lays out `item` for ``Encoding/write(into:)``, without copying its
    /// secret anywhere yet.
    public static func prepare(_ item: Item) -> Encoding {
        Encoding(prepared: RecordCodec.prepare(item))
    }

    /// The item of ``encode(_:)``; a pure function of the bytes.
    /// - Parameters:
    ///   - bytes: the encoded item, from another process (not trusted).
    ///   - withSecret: whether to keep the secret (the one-time seed and custom
    ///     field values are kept either way; a listing drops them before it is sent).
    /// - Throws: `KeychainError.decode` for a broken layout or a field over its limit.
    public static func decode(_ bytes: UnsafeRawBufferPointer, withSecret: Bool = true) throws(KeychainError) -> Item {
        try RecordCodec.decode(bytes, withSecret: withSecret)
    }
}
