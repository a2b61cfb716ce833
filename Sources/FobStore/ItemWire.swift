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

    /// The item of ``encode(_:)``; a pure function of the bytes.
    /// - Parameters:
    ///   - bytes: the encoded item, from another process (not trusted).
    ///   - withSecret: whether to keep the secret and one-time seed.
    /// - Throws: `KeychainError.decode` for a broken layout or a field over its limit.
    public static func decode(_ bytes: UnsafeRawBufferPointer, withSecret: Bool = true) throws(KeychainError) -> Item {
        try RecordCodec.decode(bytes, withSecret: withSecret)
    }
}
