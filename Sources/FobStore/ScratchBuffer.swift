import CSodium

/// A growable `sodium_malloc` buffer that the vault reuses to decrypt
/// records (one guarded allocation instead of one per record); the bytes
/// used are wiped with `sodium_memzero` after each use and the whole buffer
/// is freed (and wiped) with the vault.
final class ScratchBuffer {
    private var pointer: UnsafeMutableRawPointer?
    private var capacity = 0

    /// Calls `body` with `count` writable bytes, wiped afterwards.
    /// - Throws: `.io` when the guarded allocation fails (callers bound
    ///   `count` by ``Vault/maxRecordBytes`` first), or what `body` throws.
    func withBuffer<R>(count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(KeychainError) -> R)
        throws(KeychainError) -> R
    {
        if count > capacity || pointer == nil {
            if let pointer { sodium_free(pointer) }
            pointer = nil
            capacity = 0
            guard let p = sodium_malloc(max(4096, count)) else {
                throw .io("out of memory for a record of \(count) bytes")
            }
            pointer = p
            capacity = max(4096, count)
        }
        defer { sodium_memzero(pointer!, count) }
        return try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    deinit { if let pointer { sodium_free(pointer) } }
}
