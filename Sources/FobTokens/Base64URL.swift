import CSodium
import FobSystem

/// Base64url (RFC 4648 §5): the URL- and filename-safe alphabet with `-`
/// and `_`, as JWS (RFC 7515 §2) and PKCE (RFC 7636 Appendix A) use it.
/// Encoding and decoding are libsodium's (`sodium_bin2base64`,
/// `sodium_base642bin`, the URL-safe variant without padding).
public enum Base64URL {
    /// Encodes `bytes` without `=` padding (RFC 7515 §2, RFC 7636 §4.2).
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        Sodium.ensureInitialised()
        let input = Array(bytes)
        let length = sodium_base64_encoded_len(input.count, sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        var out = [CChar](repeating: 0, count: length)
        _ = sodium_bin2base64(&out, length, input, input.count, sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        return String(decoding: out.prefix(length - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes base64url text with or without trailing `=` padding.
    ///
    /// Refuses characters outside `A–Z a–z 0–9 - _` (so standard base64's
    /// `+` and `/` are errors), a length that no encoding produces, wrong
    /// padding, and non-zero bits after the last byte (non-canonical text).
    /// - Parameter text: the encoded text.
    /// - Returns: the bytes, or `nil` when `text` is not valid base64url.
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        Sodium.ensureInitialised()
        var chars = Array(text.utf8)
        var padding = 0
        while chars.last == UInt8(ascii: "=") {
            chars.removeLast()
            padding += 1
        }
        let remainder = chars.count % 4
        if remainder == 1 { return nil }
        if padding > 0 && (remainder == 0 || padding != 4 - remainder) { return nil }
        var out = [UInt8](repeating: 0, count: chars.count * 3 / 4 + 1)
        var written = 0
        let rc = chars.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { text in
                sodium_base642bin(
                    &out, out.count, text.baseAddress, text.count, nil, &written, nil,
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING)
            }
        }
        // With no end pointer, libsodium refuses any character outside the alphabet.
        guard rc == 0 else { return nil }
        return Array(out.prefix(written))
    }
}
