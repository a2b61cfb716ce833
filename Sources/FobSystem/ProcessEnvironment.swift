@preconcurrency import Glibc

/// The process environment as a dictionary, read from `environ` byte by
/// byte.
///
/// It gives what `ProcessInfo.processInfo.environment` gives (each entry
/// split at its first `=`, an entry without `=` left out, a later entry of a
/// name replacing an earlier one, bytes that are not UTF-8 replaced by
/// U+FFFD) at a fraction of its cost: FoundationEssentials finds the `=` by
/// walking each entry `Character` by `Character`, which was a twentieth of
/// the instructions of `fob --version`.
public enum ProcessEnvironment {
    /// The current environment, name to value.
    /// - Returns: every `NAME=value` entry of `environ` at the time of the call.
    public static func current() -> [String: String] {
        dictionary(of: environ)
    }

    /// The entries of a NULL-terminated `NAME=value` array (an `envp`), name
    /// to value, read as ``current()`` reads `environ`.
    /// - Parameter entries: the array, or `nil` for none.
    /// - Returns: the entries that contain `=`, a later one of a name winning.
    public static func dictionary(of entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String: String] {
        var result: [String: String] = [:]
        guard var entry = entries else { return result }
        while let pointer = entry.pointee {
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: bytes[..<equals], as: UTF8.self)
                result[name] = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
            }
            entry += 1
        }
        return result
    }
}
