import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// `fob secret-service [--replace]`: runs the Secret Service provider
/// (`org.freedesktop.secrets`, the helper `fob-secret-service`) in the
/// foreground on the session bus; `install` / `uninstall` write / remove the
/// D-Bus activation file `$XDG_DATA_HOME/dbus-1/services/org.freedesktop.secrets.service`.
/// `fob` itself loads no D-Bus library: it replaces itself with the helper.
enum SecretServiceCommand: FobCommand {
    static let name = "secret-service"
    static let summary = "be the desktop's Secret Service (org.freedesktop.secrets) on the session bus"
    static let positionals = ["install|uninstall"]
    static let optionalPositionals = 1
    static let options: [OptionSpec] = [
        .flag("--replace", help: "take the name from a provider that allows replacement")
    ]
    static let discussion = """
        Without an argument the provider runs in the foreground until the bus
        closes or another provider replaces it; it reads and writes items
        through the agent, which must hold the vault unlocked (fob unlock).
        When another program owns the name, it says which (pid, executable)
        and exits 1. install writes the activation file
        $XDG_DATA_HOME/dbus-1/services/org.freedesktop.secrets.service (default
        ~/.local/share), so the bus starts the provider on the first call;
        uninstall removes exactly that file. Neither touches a file fob did
        not write.
        """
    /// The first line of an activation file fob wrote.
    static let marker = "# Written by `fob secret-service install`; `fob secret-service uninstall` removes it."
    /// The helper program.
    static let helperName = "fob-secret-service"

    static func run(_ invocation: Invocation) throws -> Int32 {
        let environment = invocation.context.environment
        switch invocation.arguments.positionals.first {
        case nil: return try runProvider(invocation)
        case "install": return try install(invocation, at: activationFile(environment))
        case "uninstall": return try uninstall(invocation, at: activationFile(environment))
        case let other?:
            throw UsageError("no action '\(displaySafe(other))': install or uninstall", command: name)
        }
    }

    /// `$XDG_DATA_HOME` (else `$HOME/.local/share`) `/dbus-1/services/org.freedesktop.secrets.service`.
    static func activationFile(_ environment: [String: String]) throws -> String {
        let data: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            data = xdg
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            data = home + "/.local/share"
        } else {
            throw CLIFailure("neither XDG_DATA_HOME nor HOME is an absolute path")
        }
        return data + "/dbus-1/services/org.freedesktop.secrets.service"
    }

    private static func runProvider(_ invocation: Invocation) throws -> Int32 {
        let environment = invocation.context.environment
        guard
            let helper = ExecutableLookup.helper(
                helperName, override: "FOB_SECRET_SERVICE_HELPER", environment: environment)
        else {
            throw CLIFailure("\(helperName) is neither next to fob nor on PATH; reinstall fob")
        }
        var arguments = ["--vault", invocation.globals.vaultURL.path]
        if invocation.arguments.flag("--replace") { arguments.append("--replace") }
        let entries = environment.map { strdup("\($0.key)=\($0.value)")! }
        let code = ProcessImage.replace(executable: helper, arguments: arguments, environment: entries)
        entries.forEach { free($0) }
        throw CLIFailure("cannot run \(helper): \(String(cString: strerror(code)))", status: 126)
    }

    private static func install(_ invocation: Invocation, at path: String) throws -> Int32 {
        if let existing = try? String(contentsOfFile: path, encoding: .utf8), !existing.hasPrefix(marker) {
            throw CLIFailure("\(path) exists and was not written by fob; remove it first")
        }
        let fob = try selfPath()
        let vault = invocation.globals.vaultURL.path
        for text in [fob, vault] where text.contains("'") || text.contains("\n") || text.contains("\\") {
            throw CLIFailure("cannot name \(displaySafe(text)) in an activation file (a quote, backslash or newline)")
        }
        let contents = """
            \(marker)
            [D-BUS Service]
            Name=org.freedesktop.secrets
            Exec='\(fob)' secret-service --vault '\(vault)'

            """
        let directory = PathText.deletingLastComponent(path)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CLIFailure("cannot write \(path): \(FileErrorText.reason(error))")
        }
        return invocation.succeed(printing: "Wrote \(path)\n")
    }

    private static func uninstall(_ invocation: Invocation, at path: String) throws -> Int32 {
        guard let existing = try? String(contentsOfFile: path, encoding: .utf8) else {
            return invocation.succeed(printing: "No activation file at \(path)\n")
        }
        guard existing.hasPrefix(marker) else {
            throw CLIFailure("\(path) was not written by fob; it is left as it is")
        }
        guard unlink(path) == 0 else {
            throw CLIFailure("cannot remove \(path): \(String(cString: strerror(errno)))")
        }
        return invocation.succeed(printing: "Removed \(path)\n")
    }

    /// The running `fob` (`/proc/self/exe`).
    private static func selfPath() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw CLIFailure("cannot find the running fob (/proc/self/exe)") }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
