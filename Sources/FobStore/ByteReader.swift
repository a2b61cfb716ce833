/// Reads fixed-width integers, byte runs and length-prefixed UTF-8 strings
/// from the front of a buffer, never past its end: the one reader of the
/// access log's files and entries and of the access rule's bytes.
///
/// A short buffer, an overlong string or text that is not UTF-8 is thrown
/// as the caller's own error, made by `failure` from a short reason
/// ("truncated", "string too long", "text is not UTF-8").
struct ByteReader<Failure: Error> {
    private let bytes: UnsafeRawBufferPointer
    private let failure: (String) -> Failure
    /// How many bytes were read.
    private(set) var offset = 0

    /// - Parameters:
    ///   - bytes: the buffer; it must outlive the reader.
    ///   - failure: makes the error thrown from a reason.
    init(_ bytes: UnsafeRawBufferPointer, failure: @escaping (String) -> Failure) {
        self.bytes = bytes
        self.failure = failure
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }
    /// How many bytes are left.
    var remaining: Int { bytes.count - offset }

    /// The next `count` bytes, in place.
    mutating func take(_ count: Int) throws(Failure) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw failure("truncated") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// The next `count` bytes, copied.
    mutating func bytes(_ count: Int) throws(Failure) -> [UInt8] { Array(try take(count)) }

    /// The next byte.
    mutating func byte() throws(Failure) -> UInt8 { try take(1)[0] }

    /// A big-endian `UInt32`.
    mutating func u32() throws(Failure) -> UInt32 { UInt32(try bigEndian(4)) }

    /// A big-endian `UInt64`.
    mutating func u64() throws(Failure) -> UInt64 { try bigEndian(8) }

    /// A big-endian unsigned integer of `count` bytes (at most 8).
    mutating func bigEndian(_ count: Int) throws(Failure) -> UInt64 {
        try take(count).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A little-endian unsigned integer of `count` bytes (at most 8).
    mutating func littleEndian(_ count: Int) throws(Failure) -> UInt64 {
        try take(count).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    /// A string: a big-endian `UInt16` length, then that many bytes of UTF-8.
    /// - Parameter maxBytes: the longest accepted.
    mutating func string(maxBytes: Int) throws(Failure) -> String {
        let count = Int(try bigEndian(2))
        guard count <= maxBytes else { throw failure("string too long") }
        guard let text = String(validating: try take(count), as: UTF8.self) else {
            throw failure("text is not UTF-8")
        }
        return text
    }
}
