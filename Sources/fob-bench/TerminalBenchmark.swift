import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobSystem
import FobTerminal
import FobViewModels
import Foundation
@preconcurrency import Glibc

/// Terminal UI figures at 10,000 items: start to the unlock screen, the
/// KDF to the first full list, and one filter keystroke re-rendering the list.
enum TerminalBenchmark {
    static let rows = 32, columns = 110

    static func run(scratch: URL) throws {
        let password = SecretBytes(utf8: "benchmark master password")
        let url = scratch.appendingPathComponent("tui-10k/vault.db")
        let vault = try Vault.create(at: url, password: password, kdf: KDFParameters(.interactive), accessDefault: .any)
        try vault.add(contentsOf: (0..<10_000).map(item))
        vault.lock()

        section("Terminal UI at 10,000 items (\(columns)×\(rows) cells; goals: start < 100 ms, keystroke < 10 ms)")
        if let fob = siblingExecutable("fob") {
            let times = (0..<5).compactMap { _ in try? processStartToUnlockScreen(fob: fob, vault: url, home: scratch) }
            if let median = times.sorted().dropFirst(times.count / 2).first {
                report("start fob in a pty to the unlock screen (median of \(times.count))", seconds: median)
            }
        } else {
            print("  (no `fob` next to fob-bench: build it to time a real start)")
        }

        var renderer = Renderer(vaultDescription: url.path)
        var app: AppModel!
        var canvas: Canvas!
        let tOpen = try time {
            let store = VaultStore(url: url)
            app = AppModel(
                store: store, clipboard: ClipboardController(clipboard: NoClipboard(), clearAfter: 0),
                clock: LiveClock(), lockAfter: 0)
            canvas = renderer.render(app, rows: rows, columns: columns, glyphs: .unicodeSet)
        }
        precondition(canvas.text.contains("Master password"))
        report("in process: open vault, models, draw unlock screen", seconds: tOpen)

        let kdf = try (0..<3).map { _ in
            try time {
                let v = try Vault(url: url)
                try v.unlock(password: password)
            }
        }.sorted()[1]
        app.send(.insert(password.unsafeString!))
        let tUnlock = try time {
            app.send(.submit)
            canvas = renderer.render(app, rows: rows, columns: columns, glyphs: .unicodeSet)
        }
        guard case .main(let main) = app.screen, main.list.rows.count == 10_000 else {
            throw BenchmarkFailure(message: "the list did not load 10,000 items")
        }
        report("unlock: the KDF alone (Argon2id interactive)", seconds: kdf)
        report("after the KDF to the first full list drawn", seconds: max(0, tUnlock - kdf))

        app.send(.startFilter)
        var keystrokes: [Double] = []
        for character in "user42" {
            keystrokes.append(
                try time {
                    app.send(.insert(String(character)))
                    canvas = renderer.render(app, rows: rows, columns: columns, glyphs: .unicodeSet)
                })
        }
        let shown = main.list.rows.count
        for _ in 0..<6 {
            keystrokes.append(
                try time {
                    app.send(.deleteBackward)
                    canvas = renderer.render(app, rows: rows, columns: columns, glyphs: .unicodeSet)
                })
        }
        report(
            "filter keystroke: filter and draw (mean of \(keystrokes.count))",
            seconds: keystrokes.reduce(0, +) / Double(keystrokes.count))
        report("filter keystroke: slowest (\(shown) rows match \"user42\")", seconds: keystrokes.max() ?? 0)
        app.shutdown(timeout: 0)
    }

    private static func item(_ i: Int) -> Item {
        let token = i % 20 == 0
        let secret = token ? jwt(exp: 1_900_000_000 + i) : "secret-\(i)-\(String(repeating: "x", count: 24))"
        return Item(
            service: "service-\(i % 500).example", account: "user\(i)@example.com", label: "Label \(i)",
            kind: token ? .token : .password, secret: SecretBytes(utf8: secret))
    }

    /// An unsigned JWT (`alg` `none`) whose `exp` is `exp`: base64url
    /// without padding (RFC 7515 §2) of the header and the claims.
    private static func jwt(exp: Int) -> String {
        func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return base64URL(#"{"alg":"none"}"#) + "." + base64URL(#"{"exp":\#(exp)}"#) + ".c2ln"
    }

    /// An executable in the same directory as this one.
    private static func siblingExecutable(_ name: String) -> String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let path = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Starts `fob` on a new pseudo-terminal and times until it has drawn
    /// "Master password"; then ends it with SIGTERM.
    private static func processStartToUnlockScreen(fob: String, vault: URL, home: URL) throws -> Double {
        let pty = try PTY.functions()
        let master = pty.openpt(O_RDWR | O_NOCTTY)
        guard master >= 0, pty.grantpt(master) == 0, pty.unlockpt(master) == 0, let name = pty.ptsname(master) else {
            throw BenchmarkFailure(message: "no pseudo-terminal")
        }
        defer { close(master) }
        let slave = String(cString: name)
        let environment = [
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "HOME": home.path, "PATH": "/usr/bin:/bin",
            "LINES": "\(rows)", "COLUMNS": "\(columns)",
        ]
        var start = timespec()
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        // A new session: the pty, opened first as stdin, becomes the controlling terminal.
        guard
            let pid = try? ChildProcessSpawner.spawn(
                executable: fob, arguments: ["--vault", vault.path, "--clipboard", "none"], environment: environment,
                standardInput: .file(slave, flags: O_RDWR), standardOutput: .descriptor(0),
                standardError: .descriptor(0), newSession: true)
        else {
            throw BenchmarkFailure(message: "cannot start fob")
        }
        var seen: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let needle = Array("Master password".utf8)
        var found = false
        let deadline = Date().addingTimeInterval(10)
        while !found, Date() < deadline {
            var fds = [pollfd(fd: master, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 100) > 0 else { continue }
            let n = read(master, &buffer, buffer.count)
            if n <= 0 { break }
            seen += buffer[0..<n]
            found =
                seen.count >= needle.count
                && (0...(seen.count - needle.count)).contains { i in
                    seen[i] == needle[0] && Array(seen[i..<(i + needle.count)]) == needle
                }
        }
        clock_gettime(CLOCK_MONOTONIC, &end)
        kill(pid, SIGTERM)
        // Keep reading so the program can write its teardown, then reap it.
        let stopBy = Date().addingTimeInterval(3)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > stopBy { kill(pid, SIGKILL) }
            var fds = [pollfd(fd: master, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, 20) > 0 { _ = read(master, &buffer, buffer.count) }
        }
        guard found else { throw BenchmarkFailure(message: "fob did not show the unlock screen") }
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }
}

/// glibc's pseudo-terminal calls, declared only under `_XOPEN_SOURCE` (which
/// the Glibc module does not set), looked up at run time instead.
private struct PTY {
    typealias IntFunction = @convention(c) (Int32) -> Int32
    typealias NameFunction = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
    let openpt: IntFunction, grantpt: IntFunction, unlockpt: IntFunction, ptsname: NameFunction

    static func functions() throws -> PTY {
        func symbol(_ name: String) throws -> UnsafeMutableRawPointer {
            guard let p = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                throw BenchmarkFailure(message: "no \(name)")
            }
            return p
        }
        return PTY(
            openpt: unsafeBitCast(try symbol("posix_openpt"), to: IntFunction.self),
            grantpt: unsafeBitCast(try symbol("grantpt"), to: IntFunction.self),
            unlockpt: unsafeBitCast(try symbol("unlockpt"), to: IntFunction.self),
            ptsname: unsafeBitCast(try symbol("ptsname"), to: NameFunction.self))
    }
}

/// A benchmark step that could not be measured.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
