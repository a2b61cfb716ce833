extension Sodium {
    /// XChaCha20-Poly1305 (IETF, `crypto_aead_xchacha20poly1305_ietf_encrypt`)
    /// of `plaintext` under `key` with a fresh random nonce: the sealing the
    /// vault's records use, for other formats (the sync tree).
    /// - Parameters:
    ///   - plaintext: the bytes to seal.
    ///   - ad: associated data, authenticated but not stored.
    ///   - key: 32 bytes.
    /// - Returns: nonce (24 bytes) ‖ ciphertext ‖ tag (16 bytes).
    public static func seal(_ plaintext: UnsafeRawBufferPointer, ad: [UInt8], key: SecretBytes) -> [UInt8] {
        Crypto.seal(plaintext, ad: ad, key: key)
    }

    /// Opens what ``seal(_:ad:key:)`` made, into protected memory.
    /// - Returns: the plaintext, or `nil` when the bytes, the associated data
    ///   or the key do not match (a flipped byte, a file moved elsewhere).
    public static func open(_ sealed: [UInt8], ad: [UInt8], key: SecretBytes) -> SecretBytes? {
        Crypto.open(sealed, ad: ad, key: key)
    }

    /// Argon2id13 (`crypto_pwhash`) of `password` into a 32-byte key.
    /// - Parameters:
    ///   - salt: 16 bytes (`crypto_pwhash_SALTBYTES`).
    ///   - kdf: the costs; checked with ``KDFParameters/isValid``.
    /// - Throws: `.param` for costs out of range; `.io` when the memory cannot be had.
    public static func passwordKey(password: SecretBytes, salt: [UInt8], kdf: KDFParameters) throws(KeychainError)
        -> SecretBytes
    {
        guard kdf.isValid, salt.count == Crypto.saltBytes else { throw .param("key derivation costs out of range") }
        return try Crypto.deriveKey(password: password, salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit)
    }
}
