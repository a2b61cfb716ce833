import FobSystem
@preconcurrency import Glibc

/// The master password kept in a file (`--password-file`, `FOB_PASSWORD_FILE`):
/// its first line. The one reader the command line and FobSecurity share.
public enum PasswordFile {
    /// Reads the first line of the file at `path`, without its `\n` (or
    /// `\r\n`), straight into protected memory; the rest of the file is not read.
    /// - Parameters:
    ///   - path: the file (not `-`: standard input is the caller's to read).
    ///   - maxBytes: the longest line accepted, in bytes (default
    ///     ``Vault/maxPasswordBytes``, 65,536).
    /// - Returns: the line's bytes, as they are (normalising is the vault's work).
    /// - Throws: `.io` naming the file when it cannot be opened or read;
    ///   `.param` when the first line is longer than `maxBytes`.
    public static func readFirstLine(path: String, maxBytes: Int = Vault.maxPasswordBytes) throws(KeychainError)
        -> SecretBytes
    {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot read the password file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // Room for the longest line, its "\r\n", and one byte to tell "too long".
        var failure: KeychainError?
        var end = 0
        let scratch = SecretBytes(count: maxBytes + 3) { buffer in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var filled = 0
            var newline: Int?
            while newline == nil && filled < raw.count {
                let n = FileDescriptorIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                if n < 0 {
                    failure = .io("cannot read the password file \(path): \(String(cString: strerror(errno)))")
                    return
                }
                if n == 0 { break }
                newline = buffer[filled..<(filled + n)].firstIndex(of: UInt8(ascii: "\n"))
                filled += n
            }
            end = newline ?? filled
            if newline != nil, end > 0, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        }
        if let failure { throw failure }
        guard end <= maxBytes else { throw .param("the master password is longer than \(maxBytes) bytes") }
        return SecretBytes(count: end) { out in
            scratch.withUnsafeBytes { src in
                if end > 0 { out.baseAddress!.update(from: src.bindMemory(to: UInt8.self).baseAddress!, count: end) }
            }
        }
    }
}
