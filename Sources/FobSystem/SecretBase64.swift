import CSodium

extension SecretBytes {
    /// The bytes in standard base64 with `=` padding (RFC 4648 §4), encoded
    /// by libsodium (`sodium_bin2base64`, the original variant) straight into
    /// protected memory: for a secret bound for JSON or an OSC 52 sequence.
    /// - Returns: `4 × ⌈count / 3⌉` ASCII bytes.
    public func base64() -> SecretBytes {
        let length = sodium_base64_encoded_len(count, sodium_base64_VARIANT_ORIGINAL) // includes the NUL
        let text = SecretBytes(count: length) { out in
            withUnsafeBytes { raw in
                _ = sodium_bin2base64(
                    out.baseAddress!, length, raw.bindMemory(to: UInt8.self).baseAddress, count,
                    sodium_base64_VARIANT_ORIGINAL)
            }
        }
        return SecretBytes(count: length - 1) { out in
            text.withUnsafeBytes { src in
                out.baseAddress!.update(from: src.bindMemory(to: UInt8.self).baseAddress!, count: length - 1)
            }
        }
    }
}
