import FobStore
@preconcurrency import Glibc

/// Reads lines and the rest of an input into ``SecretBytes``, through one
/// reusable buffer that is wiped when the reader goes away.
///
/// One reader serves a whole command, so `--password-file -` can take the
/// first line of standard input and the item's secret the rest.
final class InputReader {
    private let source: any ByteSource
    private let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 64 * 1024)
    private var start = 0
    private var end = 0
    private var atEnd = false

    init(source: any ByteSource) {
        self.source = source
        scratch.initialize(repeating: 0)
    }

    deinit {
        scratch.update(repeating: 0)
        scratch.deallocate()
    }

    /// Makes sure unread bytes are buffered; `false` at the end of the input.
    private func fill() throws(KeychainError) -> Bool {
        if start < end { return true }
        if atEnd { return false }
        let n = try source.read(into: UnsafeMutableRawBufferPointer(scratch))
        start = 0
        end = n
        if n == 0 { atEnd = true }
        return n > 0
    }

    /// The next line without its `\n` (and a `\r` before it). Bytes past
    /// `maxBytes` are read and dropped, so the caller sees `count == maxBytes`
    /// and can refuse the line as too long.
    func readLine(maxBytes: Int) throws(KeychainError) -> SecretBytes {
        var parts: [SecretBytes] = []
        var kept = 0
        while try fill() {
            let newline = scratch[start..<end].firstIndex(of: 0x0A)
            let stop = newline ?? end
            let take = min(stop - start, maxBytes - kept)
            if take > 0 {
                parts.append(SecretBytes(scratch[start..<(start + take)]))
                kept += take
            }
            start = newline.map { $0 + 1 } ?? end
            if newline != nil { break }
        }
        let line = InputReader.joined(parts)
        if line.count > 0, line.withUnsafeBytes({ $0[line.count - 1] }) == 0x0D, kept < maxBytes {
            return InputReader.prefix(line, line.count - 1)
        }
        return line
    }

    /// Everything left in the input.
    /// - Throws: `.param` when it is longer than `maxBytes`; `.io`.
    func readToEnd(maxBytes: Int) throws(KeychainError) -> SecretBytes {
        var parts: [SecretBytes] = []
        var total = 0
        while try fill() {
            total += end - start
            guard total <= maxBytes else {
                throw .param("the secret on standard input is longer than \(maxBytes) bytes")
            }
            parts.append(SecretBytes(scratch[start..<end]))
            start = end
        }
        return InputReader.joined(parts)
    }

    /// `secret` without one trailing `\n` or `\r\n`.
    static func droppingOneNewline(_ secret: SecretBytes) -> SecretBytes {
        let n = secret.count
        let drop = secret.withUnsafeBytes { bytes -> Int in
            guard n >= 1, bytes[n - 1] == 0x0A else { return 0 }
            return n >= 2 && bytes[n - 2] == 0x0D ? 2 : 1
        }
        return drop == 0 ? secret : prefix(secret, n - drop)
    }

    static func prefix(_ secret: SecretBytes, _ count: Int) -> SecretBytes {
        SecretBytes(count: count) { out in
            secret.withUnsafeBytes { src in
                if count > 0 {
                    out.baseAddress!.update(from: src.bindMemory(to: UInt8.self).baseAddress!, count: count)
                }
            }
        }
    }

    static func joined(_ parts: [SecretBytes]) -> SecretBytes {
        if parts.count == 1 { return parts[0] }
        let total = parts.reduce(0) { $0 + $1.count }
        return SecretBytes(count: total) { out in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { src in
                    if src.count > 0 {
                        (out.baseAddress! + offset).update(
                            from: src.bindMemory(to: UInt8.self).baseAddress!, count: src.count)
                    }
                }
                offset += part.count
            }
        }
    }
}
