import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// Where a vault's sync lives on this machine:
/// `$XDG_DATA_HOME/fob/sync/ID/` (else `~/.local/share/fob/sync/ID/`),
/// `ID` naming the vault file's path; `tree/` is the git repository (only
/// its `.git`: the files are never checked out) and
/// `last` a summary of the last sync (counts only, for `fob status`).
public enum SyncPaths {
    /// The directory of the vault at `vaultPath`.
    public static func directory(vaultPath: String, environment: [String: String]) -> String {
        let data: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            data = xdg
        } else {
            data = (environment["HOME"] ?? "/nonexistent") + "/.local/share"
        }
        let id = Sodium.hex(Sodium.genericHash(Array(vaultPath.utf8), length: 16)).prefix(16)
        return "\(data)/fob/sync/\(id)"
    }

    /// The git repository of the vault at `vaultPath` (nothing checked out).
    public static func tree(vaultPath: String, environment: [String: String]) -> String {
        directory(vaultPath: vaultPath, environment: environment) + "/tree"
    }

    /// Writes the summary: `merged N`, `conflicts M` lines.
    public static func writeSummary(_ outcome: SyncEngine.Outcome, vaultPath: String, environment: [String: String]) {
        let text = "merged \(outcome.merged)\nconflicts \(outcome.conflicts)\n"
        let path = directory(vaultPath: vaultPath, environment: environment) + "/last"
        try? Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The conflicts the last sync left, or `nil` when the vault never synced here.
    public static func conflicts(vaultPath: String, environment: [String: String]) -> Int? {
        let path = directory(vaultPath: vaultPath, environment: environment) + "/last"
        guard let data = FileManager.default.contents(atPath: path), data.count < 4096 else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("conflicts ") {
            return Int(line.dropFirst(10))
        }
        return nil
    }
}
