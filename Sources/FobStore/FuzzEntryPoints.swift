import FoundationEssentials
@preconcurrency import Glibc

/// Entry points for the fuzz targets in `Fuzz/` (see
/// docs/fuzzing.md): pure functions from bytes to a decoded value or a
/// typed error. Not part of Fob's API; imported with `@_spi(Fuzz)`.
@_spi(Fuzz) public enum StoreFuzzEntryPoints {
    /// Decodes `bytes` as a record's plaintext (the layout inside the
    /// authenticated encryption), with and without the secret.
    /// - Returns: the item, or the typed error.
    public static func decodeRecord(_ bytes: UnsafeRawBufferPointer) -> Result<Item, KeychainError> {
        _ = try? RecordCodec.decode(bytes, withSecret: false)
        do {
            return .success(try RecordCodec.decode(bytes, withSecret: true))
        } catch {
            return .failure(error)
        }
    }

    /// Opens `bytes` as a vault file (written to a private temporary
    /// directory and removed afterwards): the header, schema and format
    /// checks that run before any password is asked, then the item count.
    /// - Returns: the item count, or the typed error.
    public static func openVault(_ bytes: UnsafeRawBufferPointer) -> Result<Int, KeychainError> {
        var template = Array("/tmp/fob-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return .failure(.io("mkdtemp failed")) }
        let directory = String(cString: made)
        let path = directory + "/vault.db"
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
            rmdir(directory)
        }
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(.io("cannot write the input")) }
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n <= 0 { break }
            offset += n
        }
        close(fd)
        do {
            let vault = try Vault(url: URL(fileURLWithPath: path))
            return .success(try vault.count())
        } catch {
            return .failure(error)
        }
    }

    /// The keys the access log fuzz target opens records with (a fixed key:
    /// the corpus's seeds are sealed under it).
    public static let accessLogKeys = AccessLogKeys(logKey: SecretBytes([UInt8](repeating: 7, count: 32)))

    /// Reads `bytes` as an access log file (``AccessLogFileFormat/parse(_:)``),
    /// opens and decodes every record under ``accessLogKeys``, and decodes
    /// `bytes` as an entry's plaintext too.
    /// - Returns: the entries that opened, or the typed error of the file.
    public static func readAccessLog(_ bytes: UnsafeRawBufferPointer) -> Result<Int, AccessLogFormatError> {
        _ = try? AccessLogEntryCodec.decode(bytes)
        do {
            let contents = try AccessLogFileFormat.parse(bytes)
            _ = contents.header.mac == contents.header.expectedMAC(keys: accessLogKeys)
            var opened = 0
            for record in contents.records where (try? AccessLogFileFormat.open(record, keys: accessLogKeys)) != nil {
                opened += 1
            }
            return .success(opened)
        } catch {
            return .failure(error)
        }
    }
}
