import FobSystem

/// Entry points for the fuzz targets in `Fuzz/` (see
/// docs/fuzzing.md). Not part of Fob's API; imported with `@_spi(Fuzz)`.
@_spi(Fuzz) public enum SecretServiceFuzzEntryPoints {
    /// What a client sends in a DH session, from `bytes`: the first byte is
    /// the length of its public key, which follows; then a 16-byte IV and a
    /// ciphertext. Negotiates with a fixed exponent and opens the secret;
    /// a secret that opens must seal back to the same ciphertext.
    /// - Returns: the opened secret's length, or the typed error.
    public static func openTransfer(_ bytes: [UInt8]) -> Result<Int, TransferError> {
        guard let length = bytes.first.map(Int.init), bytes.count >= 1 + length + 16 else {
            return .failure(.badCiphertext)
        }
        let publicKey = Array(bytes[1..<(1 + length)])
        let iv = Array(bytes[(1 + length)..<(17 + length)])
        let ciphertext = Array(bytes[(17 + length)...])
        do {
            let (cipher, serverPublic) = try SessionCipher.negotiate(
                clientPublic: publicKey, privateExponent: [UInt8](1...32))
            precondition(serverPublic.count == 128, "a public key is 128 bytes")
            let secret = try cipher.open(parameters: iv, value: ciphertext)
            precondition(cipher.seal(secret, iv: iv).value == ciphertext, "a secret that opens seals back")
            return .success(secret.count)
        } catch {
            return .failure(error)
        }
    }

    /// The locked-search index file's body (``LockedIndex/parse(_:)``, what
    /// follows a verified tag), with a round trip: an index that parses
    /// encodes back to a body that parses to the same index.
    /// - Returns: the number of items, or `nil` when the layout is wrong.
    public static func parseLockedIndex(_ bytes: [UInt8]) -> Int? {
        guard let index = LockedIndex.parse(bytes) else { return nil }
        let key = SecretBytes([UInt8](repeating: 7, count: 32))
        precondition(
            LockedIndex.decode(LockedIndex.encode(index, key: key), key: key) == index, "an index round-trips")
        return index.count
    }
}
