/// Entry points for the fuzz targets in `Fuzz/` (see
/// docs/fuzzing.md). Not part of Fob's API; imported with `@_spi(Fuzz)`.
@_spi(Fuzz) public enum TerminalFuzzEntryPoints {
    /// Feeds `bytes` to a ``KeyDecoder`` as `get_wch` would deliver them:
    /// each group of five bytes is a tag (character or function key) and a
    /// 32-bit value, so any scalar value (valid or not) and any ncurses key
    /// code reach the decoder; then flushes it as if the input went idle.
    /// - Returns: the keys decoded.
    public static func decodeKeys(_ bytes: UnsafeRawBufferPointer) -> [Key] {
        var decoder = KeyDecoder()
        var keys: [Key] = []
        var offset = 0
        while offset + 5 <= bytes.count {
            let value = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[offset + 1 + $1]) }
            let input: RawInput = bytes[offset] & 1 == 0 ? .character(value) : .function(Int32(bitPattern: value))
            keys += decoder.feed(input)
            if bytes[offset] & 2 != 0 { keys += decoder.flush(idle: false) }
            offset += 5
        }
        keys += decoder.flush(idle: true)
        return keys
    }
}
