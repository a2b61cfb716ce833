import FoundationEssentials
@preconcurrency import Glibc

extension FileDescriptorIO {
    /// The first bytes of a file, read with `open(2)`/`read(2)`.
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: the most bytes to read.
    /// - Returns: at most `limit` bytes from the start of the file, or
    ///   `nil` when it cannot be opened or read.
    public static func readFile(atPath path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return nil }
            if got == 0 { break }
            bytes += chunk[..<got]
        }
        return bytes
    }
}

/// Why a file operation of `FileManager` or `Data` failed, in words.
public enum FileErrorText {
    /// The C library's words for the system error under `error`
    /// (`strerror(3)`: `Permission denied`), else a description of it.
    public static func reason(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let cocoa = error as? CocoaError {
            if let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
                return String(cString: strerror(posix.code.rawValue))
            }
            return "error \(cocoa.code.rawValue)"
        }
        return "\(error)"
    }
}
