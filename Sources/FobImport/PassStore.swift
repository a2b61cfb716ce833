import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// `pass`, the standard Unix password manager (<https://www.passwordstore.org>):
/// a directory of `NAME.gpg` files, each decrypted by the user's own `gpg`.
///
/// A file's first line is the password; then `key: value` lines (`user`,
/// `login` or `username`; `url`, `website` or `site`; any other key becomes a
/// custom field), `otpauth://` lines (the one-time seed, as pass-otp writes
/// it), and free text, kept as the notes.
public enum PassStore {
    /// Reads one decrypted entry.
    ///
    /// A pure function (a fuzz target).
    /// - Parameters:
    ///   - plaintext: what `gpg --decrypt` printed.
    ///   - name: the entry's path in the store without `.gpg`, such as `email/ana`.
    /// - Returns: the entry (or the reason it is unusable) in an ``ImportRead``.
    /// - Throws: `.encoding` when the text is not UTF-8.
    public static func parse(_ plaintext: [UInt8], name: String) throws(ImportError) -> ImportRead {
        let text: [UInt8]
        do { text = try TextDecoding.utf8(plaintext) } catch .encoding(let line, let reason) {
            throw .encoding(line: line, "\(name).gpg: \(reason)")
        }
        var lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        while lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        var b = EntryBuilder(origin: name + ".gpg")
        b.password = lines.first ?? ""
        var notes: [String] = []
        for line in lines.dropFirst() {
            if line.lowercased().hasPrefix("otpauth://"), b.totp == nil {
                b.totp = line
                continue
            }
            if let colon = line.firstIndex(of: ":"), !line[..<colon].contains(" "), !line[..<colon].isEmpty,
                line[line.index(after: colon)...].hasPrefix(" ")
            {
                let key = String(line[..<colon])
                let value = String(line[line.index(after: colon)...].dropFirst())
                let lower = key.lowercased()
                if ["user", "login", "username"].contains(lower), b.username == nil {
                    b.username = value
                } else if ["url", "website", "site"].contains(lower), b.url == nil {
                    b.url = value
                } else {
                    b.fields.append(CustomField(name: key, text: value))
                }
                continue
            }
            notes.append(line)
        }
        b.notes = notes.joined(separator: "\n")
        let parts = name.split(separator: "/").map(String.init)
        if b.username != nil || parts.count < 2 {
            b.title = name
        } else {
            b.title = parts.dropLast().joined(separator: "/")
            b.username = parts.last
        }
        var read = ImportRead()
        b.build(into: &read)
        return read
    }

    /// The `.gpg` files of a store, relative to it and sorted; hidden
    /// files and directories (`.git`, `.gpg-id`) are left out.
    /// - Throws: `.io` when `directory` is not a directory.
    public static func entries(in directory: String) throws(ImportError) -> [String] {
        var status = stat()
        guard stat(directory, &status) == 0 else {
            throw .io(
                "no such directory: \(directory) (pass wants the password-store directory, such as ~/.password-store)")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw .io(
                "\(directory) is a file, not a directory (pass wants the password-store directory, such as ~/.password-store)"
            )
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw .io("cannot read \(directory)")
        }
        var out: [String] = []
        walk(directory, names: names, prefix: "", into: &out)
        return out.sorted()
    }

    /// Adds the `.gpg` files under `directory` (whose entries are `names`)
    /// to `out` as `prefix` + their relative paths; hidden entries are
    /// left out, and symbolic links are not followed into directories.
    private static func walk(_ directory: String, names: [String], prefix: String, into out: inout [String]) {
        for name in names where !name.hasPrefix(".") {
            let path = directory + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR {
                if let inner = try? FileManager.default.contentsOfDirectory(atPath: path) {
                    walk(path, names: inner, prefix: prefix + name + "/", into: &out)
                }
            } else if name.hasSuffix(".gpg") {
                out.append(prefix + name)
            }
        }
    }

    /// Decrypts every entry of the store with `gpg --batch --quiet --decrypt`
    /// (the file on its standard input, the plaintext read from a pipe: no
    /// secret in an argument or a temporary file) and reads it.
    /// - Parameters:
    ///   - directory: the store, such as `~/.password-store`.
    ///   - environment: the environment `gpg` runs in (`PATH`, `GNUPGHOME`, `HOME` …).
    ///   - timeout: the seconds each entry's `gpg` may take (default ``timeout``).
    ///   - progress: called with (entries done, entries in all).
    /// - Throws: `.io` when there is no `gpg`, no store, or an entry `gpg` cannot decrypt (naming it).
    public static func read(
        directory: String, environment: [String: String], timeout: Double = PassStore.timeout,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws(ImportError) -> ImportRead {
        let files = try entries(in: directory)
        guard let gpg = ExecutableLookup.find("gpg", environment: environment) else {
            throw .io("gpg is not on PATH; importing a password store needs the gpg it was made with")
        }
        var read = ImportRead()
        for (index, file) in files.enumerated() {
            var plaintext = try decrypt(directory + "/" + file, gpg: gpg, environment: environment, timeout: timeout)
            defer { plaintext.wipe() }
            let one = try parse(plaintext, name: String(file.dropLast(4)))
            read.entries += one.entries
            read.notKept += one.notKept
            read.unusable += one.unusable
            progress(index + 1, files.count)
        }
        return read
    }

    /// The longest one `gpg --decrypt` may take, in seconds (gpg-agent may
    /// ask for the key's passphrase first).
    public static let timeout: Double = 120

    /// Decrypts one entry: the file on gpg's standard input, the plaintext
    /// from its standard output (at most ``Item/maxSecretBytes`` +
    /// ``Item/maxNotesBytes``), its first line of standard error in the message.
    /// - Throws: `.io` naming `path` when it cannot be read, gpg cannot
    ///   start, fails, runs past `timeout` seconds or prints too much.
    static func decrypt(
        _ path: String, gpg: String, environment: [String: String], timeout: Double
    ) throws(ImportError) -> [UInt8] {
        guard let ciphertext = FileManager.default.contents(atPath: path) else {
            throw .io("cannot read \(path)")
        }
        var result: ChildProcessResult
        do {
            result = try ChildProcessRunner.run(
                gpg, arguments: ["--batch", "--quiet", "--decrypt"], environment: environment,
                input: [UInt8](ciphertext), captureError: true, maxOutput: Item.maxSecretBytes + Item.maxNotesBytes,
                timeout: timeout)
        } catch {
            throw .io("gpg could not decrypt \(path): \(error)")
        }
        guard result.succeeded else {
            let first =
                String(decoding: result.errorOutput, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            let status = result.status
            result.wipe()
            throw .io("gpg could not decrypt \(path) (exit \(status))\(first.isEmpty ? "" : ": " + displaySafe(first))")
        }
        result.errorOutput.wipe()
        return result.output
    }
}
