import Dispatch
import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobSystem
import FobViewModels
import FoundationEssentials
@preconcurrency import Glibc

/// The clipboard mechanism of `--clipboard` (`auto` resolved against the
/// environment and the controlling terminal).
func resolvedClipboard(_ invocation: Invocation) -> any Clipboard {
    ClipboardFactory.make(mode: invocation.globals.clipboard, environment: invocation.context.environment)
}

/// The file naming the pid of the `fob copy` clearer that owns the current
/// copy: `<vault>.clearer`, next to the vault (mode 0600).
func clearerStateFile(_ invocation: Invocation) -> String {
    invocation.globals.vaultURL.path + ".clearer"
}

/// The pid in the state file, if that process is still a `fob` clearer.
func runningClearer(stateFile: String) -> pid_t? {
    guard let text = try? String(contentsOfFile: stateFile, encoding: .utf8),
        let pid = pid_t(text.trimmingSpacesAndNewlines()), pid > 1
    else { return nil }
    // A recycled pid must never be signalled: check its command line.
    guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
    let words = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    guard words.contains(ClipboardClearerCommand.name) else { return nil }
    return pid
}

/// `fob copy SERVICE ACCOUNT`: puts the secret on the clipboard, returns at
/// once, and leaves a detached `fob` process that clears it after
/// `--clear-after` seconds if the clipboard still holds it.
enum CopyCommand: FobCommand {
    static let name = "copy"
    static let summary = "copy the secret to the clipboard; returns at once, cleared after --clear-after seconds"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let discussion = """
        The clipboard comes from --clipboard (default auto: wl-copy with
        WAYLAND_DISPLAY, xclip or xsel with DISPLAY, tmux with TMUX, else OSC 52
        on the terminal). A detached fob process, given the secret on its
        standard input, clears the clipboard after --clear-after seconds (0 =
        never) only if it still holds this secret; text copied since is left
        alone, and a later copy takes over the clearing. OSC 52 cannot read the
        clipboard back, so it is cleared whatever it holds by then.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let (service, account) = (invocation.arguments.positionals[0], invocation.arguments.positionals[1])
        let items = invocation.items()
        let item = try items.item(service: service, account: account)
        items.close()
        guard let secret = item.secret else { throw KeychainError.itemNotFound(item.displayName) }
        let clipboard = resolvedClipboard(invocation)
        do {
            try clipboard.copy(secret)
        } catch {
            throw CLIFailure("cannot copy \(item.displayName): \(error)")
        }
        let clearAfter = invocation.globals.clearAfter
        if clearAfter > 0 {
            do {
                try startClearer(invocation, clipboard: clipboard, secret: secret, clearAfter: clearAfter)
            } catch {
                // The copy is on the clipboard but nothing will clear it: take it back.
                _ = clipboard.clearIfHolds(secret)
                throw error
            }
            invocation.standardError.write(
                "fob: copied \(item.displayName) to the clipboard (\(clipboard.name)); clearing in \(clearAfter) s\n")
        } else {
            invocation.standardError.write(
                "fob: copied \(item.displayName) to the clipboard (\(clipboard.name)); not cleared automatically (--clear-after 0)\n"
            )
        }
        return 0
    }

    /// Starts `fob … __clear-clipboard` in its own session with the secret on
    /// its standard input (never in argv or the environment), and does not wait.
    private static func startClearer(
        _ invocation: Invocation, clipboard: any Clipboard, secret: SecretBytes,
        clearAfter: Int
    ) throws {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw CLIFailure("cannot find the fob executable to clear the clipboard later")
        }
        let arguments = [
            "--vault", invocation.globals.vaultURL.path, "--clipboard", clipboard.name,
            "--clear-after", String(clearAfter), ClipboardClearerCommand.name,
        ]
        var environment = invocation.context.environment
        environment["FOB_PASSWORD_FILE"] = nil
        let fds: (read: Int32, write: Int32)
        do {
            fds = try ChildProcessSpawner.makePipe()
        } catch {
            throw CLIFailure(error.description)
        }
        defer { close(fds.read) }
        // OSC 52 clears by writing to the terminal. The clearer runs in a new
        // session, which has no controlling terminal, so it cannot open
        // /dev/tty itself (ENXIO): the terminal is opened here and handed
        // down as its stderr.
        var terminal: Int32 = -1
        if clipboard.name == "osc52" {
            terminal = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
            guard terminal >= 0 else {
                let reason = String(cString: strerror(errno))
                close(fds.write)
                throw CLIFailure("cannot open the terminal for the clipboard clearer: \(reason)")
            }
        }
        defer { if terminal >= 0 { close(terminal) } }
        do {
            // A new session, away from the terminal's hangup.
            _ = try ChildProcessSpawner.spawn(
                executable: executable, arguments: arguments, environment: environment,
                standardInput: .descriptor(fds.read), standardOutput: .null,
                standardError: terminal >= 0 ? .descriptor(terminal) : .null,
                newSession: true)
        } catch {
            close(fds.write)
            throw CLIFailure("cannot start the clipboard clearer: \(error.reason)")
        }
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let written = secret.withUnsafeBytes { FileDescriptorIO.writeAll($0, to: fds.write) }
        close(fds.write)
        guard written else { throw CLIFailure("cannot hand the secret to the clipboard clearer") }
    }
}

/// `fob … __clear-clipboard` (internal, not listed): the detached process
/// `fob copy` leaves. Reads the secret from standard input, records its pid
/// in `<vault>.clearer`, waits `--clear-after` seconds (or until SIGUSR1 from
/// `fob logout`), then clears the clipboard if it still holds the secret —
/// unless a later copy has taken over.
enum ClipboardClearerCommand: FobCommand {
    static let name = "__clear-clipboard"
    static let summary = "internal: clear a copied secret later (started by fob copy)"

    static func run(_ invocation: Invocation) throws -> Int32 {
        signal(SIGHUP, SIG_IGN)
        _ = setsid()
        // Wake early on SIGUSR1 (logout), SIGTERM or SIGINT: clear, then exit.
        // Installed before the pid is published, so no signal finds the default action.
        let wake = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for number in [SIGUSR1, SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { wake.signal() }
            source.resume()
            sources.append(source)
        }
        let secret = try invocation.readItemSecret(raw: true, what: "the copied value")
        let mode = invocation.globals.clipboard
        let clipboard: any Clipboard =
            mode == .osc52
            ? OSC52Clipboard(descriptor: STDERR_FILENO)
            : ClipboardFactory.make(mode: mode == .auto ? .none : mode, environment: invocation.context.environment)
        let stateFile = clearerStateFile(invocation)
        let me = getpid()
        // Never through a symbolic link or into a FIFO or device planted there.
        let fd = (try? PrivateFile.open(stateFile, truncate: true)) ?? -1
        // Without a state file (read-only directory, or something not a
        // regular file in its place) no later copy can take over, so this
        // clearer always clears what it copied.
        let recorded = fd >= 0
        if fd >= 0 {
            let text = Array("\(me)\n".utf8)
            _ = text.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            close(fd)
        }
        // Wall-clock time, so a suspended laptop still clears on time after resuming.
        let woken = wake.wait(wallTimeout: .now() + .seconds(invocation.globals.clearAfter)) == .success
        sources.forEach { $0.cancel() }
        let stillOurs = recorded ? runningClearer(stateFile: stateFile) == me : true
        if recorded && stillOurs { unlink(stateFile) }
        // A later copy's clearer owns the clipboard now, unless we were woken to clear.
        if stillOurs || woken {
            _ = clipboard.clearIfHolds(secret)
        }
        return 0
    }
}
