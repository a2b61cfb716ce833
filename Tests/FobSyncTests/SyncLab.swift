import FobStore
import FobSync
import FobTestSupport
import Foundation
import Testing

/// Devices syncing through a local bare repository, each with its own
/// vault, `HOME` and `XDG_DATA_HOME`; git's configuration isolated
/// (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_NOSYSTEM`).
final class SyncLab {
    let directory = TemporaryDirectory(prefix: "fob-sync")
    var remote: String { directory.url.path + "/remote.git" }
    var gitEnvironment: [String: String] {
        [
            "HOME": directory.url.path + "/home", "GIT_CONFIG_GLOBAL": directory.url.path + "/gitconfig",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
        ]
    }

    init() throws {
        _ = FileManager.default.createFile(atPath: directory.url.path + "/gitconfig", contents: Data())
        _ = FileManager.default.createFile(atPath: directory.url.path + "/pw", contents: Data("pw\n".utf8))
        try git(["init", "-q", "--bare", "-b", "main", remote])
    }

    /// Runs git (in `directory` when given) and returns its output; fails the test on a nonzero exit.
    @discardableResult
    func git(_ arguments: [String], in directory: String? = nil) throws -> String {
        let result = try ChildProcess.run(
            executable: "/usr/bin/git", arguments: (directory.map { ["-C", $0] } ?? []) + arguments,
            environment: FobProcess.baseEnvironment.merging(gitEnvironment) { $1 })
        #expect(result.status == 0, "git \(arguments): \(result.stderrText)")
        return result.stdoutText
    }

    /// A device: a new vault (the testing KDF) with its own data directory.
    func device(_ name: String) throws -> Device {
        let device = Device(lab: self, name: name)
        _ = try Vault.create(at: URL(fileURLWithPath: device.vault), password: .text("pw"), kdf: .testing)
        return device
    }

    /// The fingerprint a device joining in these tests accepts
    /// (`--accept-key`): the signing key of the device whose roster in the
    /// remote lists the most devices (the least id of those), or `nil`
    /// while the remote holds no roster.
    func rosterFingerprint() throws -> String? {
        func gitBytes(_ arguments: [String]) throws -> [UInt8]? {
            let result = try ChildProcess.run(
                executable: "/usr/bin/git", arguments: ["--git-dir", remote] + arguments,
                environment: FobProcess.baseEnvironment.merging(gitEnvironment) { $1 })
            return result.status == 0 ? result.stdout : nil
        }
        guard let listing = try gitBytes(["ls-tree", "--name-only", "main", "devices/"]) else { return nil }
        var best: (count: Int, device: String, key: [UInt8])?
        for path in String(decoding: listing, as: UTF8.self).split(separator: "\n").map(String.init) {
            guard let device = TreePath.parseRoster(path), let bytes = try gitBytes(["show", "main:" + path]),
                let roster = bytes.withUnsafeBytes({ try? DeviceRoster.decode($0) })?.roster,
                let key = roster.members[device]?.publicKey
            else { continue }
            let count = roster.members.count
            if best.map({ count > $0.count || (count == $0.count && device < $0.device) }) ?? true {
                best = (count, device, key)
            }
        }
        return best.map { DeviceSigningKey.fingerprint($0.key) }
    }

    /// A clone of the remote for playing the attacker.
    func attackerClone() throws -> String {
        let path = directory.url.path + "/attacker-\(UUID().uuidString.prefix(6))"
        try git(["clone", "-q", "-b", "main", remote, path])
        return path
    }

    /// A directory holding a `git` that runs the real one but kills its
    /// caller with SIGKILL at `point`: `before-commit` (the export's files
    /// staged, its counter reserved, nothing committed), `after-commit` (as
    /// the first fetch starts, after the local commit), `after-git-merge`
    /// (once a merge is done: the branch moved to the merge), `before-push`
    /// or `after-push`.
    func gitThatKillsItsCaller(at point: String) throws -> String {
        let bin = directory.url.path + "/bin-\(point)"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let (verb, when) =
            switch point {
            case "before-commit": ("fast-import", "before")
            case "after-commit": ("fetch", "before")
            case "after-git-merge": ("update-ref", "after")
            case "before-push": ("push", "before")
            default: ("push", "after")
            }
        let script = """
            #!/bin/sh
            verb=''
            skip=0
            for argument in "$@"; do
              if [ "$skip" = 1 ]; then skip=0; continue; fi
              case "$argument" in -C|-c) skip=1 ;; -*) ;; *) verb="$argument"; break ;; esac
            done
            if [ "$verb" = \(verb) ] && [ \(when) = before ]; then kill -9 "$PPID"; exit 1; fi
            /usr/bin/git "$@"
            status=$?
            if [ "$verb" = \(verb) ] && [ \(when) = after ]; then kill -9 "$PPID"; fi
            exit $status

            """
        let path = bin + "/git"
        _ = FileManager.default.createFile(
            atPath: path, contents: Data(script.utf8), attributes: [.posixPermissions: 0o755])
        return bin
    }

    /// Commits everything in `clone` and pushes, forced.
    func forcePush(_ clone: String, message: String = "change") throws {
        try git(["add", "-A"], in: clone)
        try git(["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", message], in: clone)
        try git(["push", "-q", "-f", "origin", "HEAD:main"], in: clone)
    }
}

/// One device of a ``SyncLab``.
struct Device {
    let lab: SyncLab
    let name: String
    var vault: String { lab.directory.url.path + "/\(name).db" }
    var data: String { lab.directory.url.path + "/\(name)-data" }

    /// Runs `fob --vault VAULT ARGUMENTS` with the master password in a file
    /// and no agent; a `sync join` without `--accept-key` accepts the key
    /// ``SyncLab/rosterFingerprint()`` names.
    func run(_ arguments: [String], input: String = "") throws -> ProcessResult {
        var arguments = arguments
        if arguments.starts(with: ["sync", "join"]), !arguments.contains("--accept-key"),
            let key = try lab.rosterFingerprint()
        {
            arguments += ["--accept-key", key]
        }
        return try FobProcess.run(
            ["--vault", vault] + arguments,
            environment: lab.gitEnvironment.merging([
                "XDG_DATA_HOME": data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw",
                "FOB_AGENT": "0",
            ]) { $1 }, input: input)
    }

    /// Runs and expects exit 0.
    @discardableResult
    func ok(_ arguments: [String], input: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws
        -> String
    {
        let result = try run(arguments, input: input)
        #expect(result.status == 0, "\(name) \(arguments): \(result.stderrText)", sourceLocation: sourceLocation)
        return result.stdoutText
    }

    func sync(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try ok(["sync"], sourceLocation: sourceLocation)
    }

    /// The secret of an item, or `nil` when it is missing.
    func secret(_ service: String, _ account: String) throws -> String? {
        let result = try run(["get", service, account])
        return result.status == 0 ? String(result.stdoutText.dropLast()) : nil
    }

    /// Every item, as listed with its fields (the sync state is never listed).
    func items() throws -> [Listed] {
        let out = try ok(["ls", "--json"])
        return try JSONDecoder().decode([Listed].self, from: Data(out.utf8))
    }

    /// `service account secret comment` of every item, sorted: what must agree across devices.
    func contents() throws -> [String] {
        try items().map { item in
            "\(item.service) \(item.account) \(try secret(item.service, item.account) ?? "-") \(item.comment ?? "-")"
        }.sorted()
    }

    /// This device's id, from `fob sync status` (`device: NAME (ID)`, or the id alone).
    func deviceID(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let status = try ok(["sync", "status"], sourceLocation: sourceLocation)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("device: ") }?.dropFirst(8))
        guard line.hasSuffix(")"), let open = line.lastIndex(of: "(") else { return String(line) }
        return String(line[line.index(after: open)..<line.index(before: line.endIndex)])
    }

    /// The work tree's directory.
    var tree: String {
        let root = data + "/fob/sync"
        let id = (try? FileManager.default.contentsOfDirectory(atPath: root).first) ?? "none"
        return root + "/" + id + "/tree"
    }
}

/// An item of `fob ls --json`.
struct Listed: Decodable, Equatable {
    var service: String
    var account: String
    var comment: String?
    var revision: Int
}
