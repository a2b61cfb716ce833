import CSodium

/// The libsodium primitives the vault uses. Nothing here is home-made:
/// every function is a thin call into libsodium.
enum Crypto {
    /// 32-byte keys throughout (`crypto_aead_xchacha20poly1305_ietf_KEYBYTES`).
    static let keyBytes = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    /// 24-byte nonce.
    static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    /// 16-byte tag.
    static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// 16-byte Argon2id salt.
    static let saltBytes = Int(crypto_pwhash_SALTBYTES)

    /// XChaCha20-Poly1305 (IETF): returns nonce (24) ‖ ciphertext ‖ tag (16).
    static func seal(_ plaintext: UnsafeRawBufferPointer, ad: [UInt8], key: SecretBytes) -> [UInt8] {
        Sodium.ensureInitialised()
        let nonce = Sodium.randomBytes(nonceBytes)
        var out = [UInt8](repeating: 0, count: nonceBytes + plaintext.count + tagBytes)
        var outLen: UInt64 = 0
        out.withUnsafeMutableBufferPointer { o in
            _ = o.initialize(from: nonce)
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    o.baseAddress! + nonceBytes, &outLen,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    ad, UInt64(ad.count), nil,
                    nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    /// Opens nonce ‖ ciphertext ‖ tag into protected memory; `nil` if the
    /// record, the associated data or the key does not match.
    static func open(_ record: [UInt8], ad: [UInt8], key: SecretBytes) -> SecretBytes? {
        guard record.count >= nonceBytes + tagBytes else { return nil }
        let plainCount = record.count - nonceBytes - tagBytes
        var ok = false
        let plain = SecretBytes(count: plainCount, guarded: true) { p in
            record.withUnsafeBufferPointer { r in
                key.withUnsafeBytes { k in
                    var plen: UInt64 = 0
                    // A zero-length plaintext still needs a valid output pointer.
                    var dummy: UInt8 = 0
                    let dst = p.baseAddress ?? withUnsafeMutablePointer(to: &dummy) { $0 }
                    ok =
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            dst, &plen, nil,
                            r.baseAddress! + nonceBytes, UInt64(record.count - nonceBytes),
                            ad, UInt64(ad.count),
                            r.baseAddress!, k.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
                }
            }
        }
        return ok ? plain : nil
    }

    /// Opens nonce ‖ ciphertext ‖ tag into `output`, which must hold
    /// exactly `record.count - 40` bytes; `false` if authentication fails.
    static func open(
        _ record: UnsafeRawBufferPointer, ad: [UInt8], key: SecretBytes, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard record.count >= nonceBytes + tagBytes, output.count == record.count - nonceBytes - tagBytes,
            let out = output.baseAddress
        else { return false }
        var plen: UInt64 = 0
        let r = record.baseAddress!.assumingMemoryBound(to: UInt8.self)
        return key.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                out.assumingMemoryBound(to: UInt8.self), &plen, nil,
                r + nonceBytes, UInt64(record.count - nonceBytes), ad, UInt64(ad.count),
                r, k.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// Argon2id13 (`crypto_pwhash`) of `password` into a 32-byte key.
    /// - Throws: `.io` when libsodium cannot allocate `memlimit` bytes.
    static func deriveKey(password: SecretBytes, salt: [UInt8], opslimit: UInt64, memlimit: Int) throws(KeychainError)
        -> SecretBytes
    {
        Sodium.ensureInitialised()
        var rc: Int32 = 0
        let key = SecretBytes(count: keyBytes, guarded: true) { out in
            password.withUnsafeBytes { pw in
                var empty: CChar = 0
                withUnsafePointer(to: &empty) { fallback in
                    rc = crypto_pwhash(
                        out.baseAddress!, UInt64(keyBytes),
                        pw.baseAddress?.assumingMemoryBound(to: CChar.self) ?? fallback, UInt64(pw.count),
                        salt, opslimit, memlimit, crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard rc == 0 else { throw .io("out of memory for the key derivation (\(memlimit / 1_048_576) MiB)") }
        return key
    }

    /// A 32-byte subkey of `key` (`crypto_kdf_derive_from_key`; `context`
    /// is 8 ASCII characters, "fobvault" for the vault key's subkeys).
    static func subkey(of key: SecretBytes, id: UInt64, context: String = "fobvault") -> SecretBytes {
        precondition(context.utf8.count == 8, "a crypto_kdf context is 8 bytes")
        return SecretBytes(count: keyBytes, guarded: true) { out in
            key.withUnsafeBytes { k in
                _ = crypto_kdf_derive_from_key(
                    out.baseAddress!, keyBytes, id, context,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
    }

    /// Keyed BLAKE2b-256 (`crypto_generichash`) of `input`, as a ``Digest``.
    static func keyedDigest(_ input: UnsafeRawBufferPointer, key: SecretBytes) -> Digest {
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { k in
            _ = crypto_generichash(
                &out, 32, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
        }
        return out.withUnsafeBytes { Digest($0) }
    }

    /// Keyed BLAKE2b-256 (`crypto_generichash`) of `input`.
    static func keyedHash(_ input: [UInt8], key: SecretBytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { k in
            _ = crypto_generichash(
                &out, 32, input, UInt64(input.count),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
        }
        return out
    }
}
