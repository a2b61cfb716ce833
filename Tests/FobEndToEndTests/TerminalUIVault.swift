import FobStore
import FobTestSupport
import Foundation

/// A terminal size the UI tests run at, in cells.
struct TerminalSize: Sendable, CustomStringConvertible {
    var width: Int, height: Int
    var description: String { "\(width)x\(height)" }

    /// The sizes every main job is tried at: the default terminal, then a roomy one.
    static let both = [TerminalSize(width: 80, height: 24), TerminalSize(width: 120, height: 40)]
}

/// A vault in a temporary directory for the terminal-UI tests, and `fob`
/// started on it in tmux and unlocked.
struct TerminalUIVault {
    static let password = "correct horse battery"

    let directory: TemporaryDirectory
    var url: URL { directory.file("vault.db") }

    /// - Parameter prefix: the temporary directory's name prefix.
    init(prefix: String) { directory = TemporaryDirectory(prefix: prefix) }

    /// Creates the vault (with the test KDF) holding `items`, locked.
    func make(_ items: [Item]) throws {
        let vault = try Vault.create(at: url, password: .text(Self.password), kdf: .testing)
        for item in items { try vault.add(item) }
        vault.lock()
    }

    /// The vault, unlocked, as another process would open it.
    func open() throws -> Vault {
        let vault = try Vault(url: url)
        try vault.unlock(password: .text(Self.password))
        return vault
    }

    /// `fob` (without the agent) in a `size` pane, unlocked with the master
    /// password; returns once `ready` holds for the screen.
    /// - Parameter clipboard: the `--clipboard` mechanism (`tmux` copies to the buffer `fob`).
    func start(
        _ size: TerminalSize, clipboard: String = "none", ready: (String) -> Bool = { $0.contains("Items ") }
    ) throws -> TmuxSession {
        let command = [FobProcess.binaryURL.path, "--vault", url.path, "--clipboard", clipboard, "--no-agent"]
        let tmux = try TmuxSession(
            width: size.width, height: size.height, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh"] + command)
        try tmux.waitFor("Master password")
        try tmux.type(Self.password)
        try tmux.press("Enter")
        try tmux.waitUntil("the list", ready)
        return tmux
    }
}

/// What `oathtool ARGUMENTS…` prints, trimmed: the reference one-time codes
/// the tests compare Fob's with.
func oathtool(_ arguments: [String] = ["--totp", "-b", "JBSWY3DPEHPK3PXP"]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/oathtool")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
