import FobViewModels
import FoundationEssentials
@preconcurrency import Glibc

/// The terminal UI's one-time notices, kept across runs in the state
/// directory: `$XDG_STATE_HOME/fob/notices` (else
/// `~/.local/state/fob/notices`), one line per notice shown,
/// `NAME<TAB>VAULT PATH`, in a 0600 file. Names and paths only, never a
/// secret. Best effort: a file that cannot be read or written shows the
/// notice again, nothing worse.
final class StateNoticeMemory: NoticeMemory {
    /// The file.
    let path: String
    private let vaultPath: String

    /// - Parameters:
    ///   - environment: where `XDG_STATE_HOME` and `HOME` are read.
    ///   - vaultPath: the vault the notices are about.
    init(environment: [String: String], vaultPath: String) {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            path = state + "/fob/notices"
        } else {
            path = (environment["HOME"] ?? "/nonexistent") + "/.local/state/fob/notices"
        }
        self.vaultPath = vaultPath
    }

    /// The line that records `name` for this vault (tabs and line breaks in
    /// the path are kept out of the file's layout as spaces).
    private func line(_ name: String) -> String {
        let safe = String(vaultPath.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
        return name + "\t" + safe
    }

    func hasShown(_ name: String) -> Bool {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return text.split(separator: "\n").contains { $0 == line(name) }
    }

    func remember(_ name: String) {
        guard !hasShown(name) else { return }
        let directory = String(path.dropLast("/notices".count))
        guard
            (try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil
        else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array((line(name) + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
