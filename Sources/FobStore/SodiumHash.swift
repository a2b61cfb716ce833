import CSodium

extension Sodium {
    /// Unkeyed BLAKE2b (`crypto_generichash`, libsodium's "Generic hashing")
    /// of `input`: a name or fingerprint that nobody can make collide on
    /// purpose, unlike a non-cryptographic hash.
    /// - Parameters:
    ///   - input: the bytes to hash.
    ///   - length: the digest's size in bytes, 16 to 64
    ///     (`crypto_generichash_BYTES_MIN` … `crypto_generichash_BYTES_MAX`).
    /// - Returns: `length` bytes.
    public static func genericHash(_ input: [UInt8], length: Int) -> [UInt8] {
        ensureInitialised()
        precondition((16...64).contains(length), "a generic hash is 16 to 64 bytes")
        var out = [UInt8](repeating: 0, count: length)
        _ = crypto_generichash(&out, length, input, UInt64(input.count), nil, 0)
        return out
    }

    /// Keyed BLAKE2b (`crypto_generichash` with a key) of `input`: a value
    /// only the key's holder can compute, such as a vault's id.
    /// - Parameters:
    ///   - input: the bytes to hash.
    ///   - key: 16 to 64 bytes (`crypto_generichash_KEYBYTES_MIN` … `_MAX`).
    ///   - length: the digest's size in bytes, 16 to 64.
    /// - Returns: `length` bytes.
    public static func genericHash(_ input: [UInt8], key: SecretBytes, length: Int) -> [UInt8] {
        ensureInitialised()
        precondition((16...64).contains(length) && (16...64).contains(key.count), "sizes out of range")
        var out = [UInt8](repeating: 0, count: length)
        key.withUnsafeBytes { k in
            _ = crypto_generichash(
                &out, length, input, UInt64(input.count), k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
        }
        return out
    }

    /// Lower-case hexadecimal of `bytes` (two digits per byte).
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
