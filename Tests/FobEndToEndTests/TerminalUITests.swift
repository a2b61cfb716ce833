import FobStore
import FobTestSupport
import Foundation
import Testing

/// The terminal UI, driven through the built `fob` in a private tmux server.
@Suite(.serialized) struct TerminalUITests {
    // Serialised: each test starts its own server, but parallel full-screen
    // programs on two cores make timing-based steps (idle lock) flaky.
}

/// A vault with the fast test KDF and the pieces to start `fob` on it.
private struct Fixture {
    let directory = TemporaryDirectory(prefix: "fob-tui")
    let password = "correct horse battery"
    var vaultURL: URL { directory.file("vault.db") }

    /// Creates the vault (unless `create` is false) with `items`.
    init(items: [Item] = [], create: Bool = true) throws {
        guard create else { return }
        let vault = try Vault.create(at: vaultURL, password: .text(password), kdf: .testing)
        for item in items { try vault.add(item) }
        vault.lock()
    }

    /// The vault, unlocked, to check what the UI did.
    func open() throws -> Vault {
        let vault = try Vault(url: vaultURL)
        try vault.unlock(password: .text(password))
        return vault
    }

    /// `fob` and its arguments for this vault.
    func command(_ extra: [String] = []) -> [String] {
        [FobProcess.binaryURL.path, "--vault", vaultURL.path, "--clipboard", "none"] + extra
    }

    /// Starts `fob` as the pane's program, under a shell that prints its
    /// exit status when it ends (tmux's own `pane_dead_status` is not
    /// always recorded).
    func start(
        _ extra: [String] = [], environment: [String: String] = [:],
        width: Int = 110, height: Int = 32
    ) throws -> TmuxSession {
        // The shell stays a while: tmux can drop the last output of a pane that dies at once.
        let wrapper = ["/bin/sh", "-c", "\"$@\"; echo \"fob-exit-status=$?\"; sleep 60", "sh"]
        return try TmuxSession(
            width: width, height: height, command: wrapper + command(extra), environment: environment)
    }

    /// Starts a shell in the pane and runs `fob` from it.
    func startFromShell(_ extra: [String] = []) throws -> TmuxSession {
        let tmux = try TmuxSession()
        try tmux.type(TmuxSession.shellQuoted(command(extra)))
        try tmux.press("Enter")
        return tmux
    }

    /// Types the master password on the unlock screen and waits for the list
    /// with its legend (the title alone can be drawn before the rows).
    func unlock(_ tmux: TmuxSession) throws {
        try tmux.waitFor("Master password")
        try tmux.type(password)
        try tmux.press("Enter")
        try tmux.waitUntil("the list") { $0.contains("Items ") && $0.contains(listLegend) }
    }
}

/// The lines of `screen` that mention `text`.
private func lines(_ screen: String, containing text: String) -> [String] {
    screen.split(separator: "\n").map(String.init).filter { $0.contains(text) }
}

/// The text right of `label` on its row of the form (up to the box edge).
private func value(of label: String, in screen: String) -> String? {
    for line in screen.split(separator: "\n").map(String.init) {
        guard let range = line.range(of: "│ \(label)  ") else { continue }
        var rest = String(line[range.upperBound...])
        if let end = rest.firstIndex(of: "│") { rest = String(rest[..<end]) }
        return rest.trimmingCharacters(in: .whitespaces)
    }
    return nil
}

/// Waits for `fob` (started by ``Fixture/start``) to end with `status`.
private func expectExit(_ tmux: TmuxSession, status: Int) throws {
    let screen = try tmux.waitFor("fob-exit-status=")
    #expect(screen.range(of: "fob-exit-status=\(status)([^0-9]|$)", options: .regularExpression) != nil, "\(screen)")
}

/// Whether `fob` (started by ``Fixture/start``) is still running.
private func stillRunning(_ tmux: TmuxSession) throws -> Bool {
    !(try tmux.capture()).contains("fob-exit-status=")
}

/// The legend of the item list: Esc has reached the list (a key sent right
/// after Esc would otherwise arrive as Alt and that key). `/ filter` is kept
/// at every width from 80 columns; the movement hint is the first dropped.
private let listLegend = "type to find"

/// The preview's masked secret: a fixed width, whatever the secret's length.
private let previewMask = String(repeating: "•", count: 8)

/// Reads `stty -a` in the pane's shell and the pane's terminal state.
private func expectTerminalRestored(_ tmux: TmuxSession) throws {
    let stty = try tmux.shell("stty -a")
    let flags = stty.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ";" }).map(String.init)
    #expect(flags.contains("icanon"), "stty: \(stty)")
    #expect(flags.contains("echo"), "stty: \(stty)")
    #expect(!flags.contains("-echo"))
    #expect(try tmux.display("#{alternate_on}") == "0")
    #expect(try tmux.display("#{cursor_flag}") == "1")
}

extension TerminalUITests {
    @Test func createVaultThroughTheUI() throws {
        let fx = try Fixture(create: false)
        let tmux = try fx.start()
        var screen = try tmux.waitForAll("New master password", "Confirm")
        #expect(screen.contains("Confirm"))
        let secret = "Zebra-Quartz-7731"
        try tmux.type(secret)
        try tmux.press("Tab")
        try tmux.type(secret)
        try tmux.press("C-t", "C-t")
        screen = try tmux.waitFor("interactive")
        #expect(!screen.contains(secret))
        #expect(screen.contains(String(repeating: "•", count: secret.count)))
        try tmux.press("Enter")
        try tmux.waitUntil(timeout: 30, "the empty list") {
            $0.contains("Items 0") && $0.contains("No items yet: Ctrl-O adds one")
        }
        try tmux.press("C-q")
        try expectExit(tmux, status: 0)
        let vault = try Vault(url: fx.vaultURL)
        #expect(thrownKeychainError { try vault.unlock(password: .text("wrong")) }?.statusName == "errSecAuthFailed")
        try vault.unlock(password: .text(secret))
    }

    @Test func unlockWithMaskedPassword() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "s3cret")])
        let tmux = try fx.start()
        try tmux.waitFor("Master password")
        let wrong = "Wr0ng-Horse-XQZ"
        try tmux.type(wrong)
        var screen = try tmux.waitFor(String(repeating: "•", count: wrong.count))
        #expect(!screen.contains(wrong))
        #expect(!screen.contains("github.com"))
        try tmux.press("Enter")
        screen = try tmux.waitFor("Wrong master password")
        #expect(!screen.contains(wrong))
        try fx.unlock(tmux)
        // Unlocked: the list, and the preview of its item beside it with the secret masked.
        screen = try tmux.waitUntil("the list and its preview") {
            $0.contains("Items 1/1") && $0.contains("github.com") && $0.contains("ana") && $0.contains("Preview")
                && $0.contains(previewMask)
        }
        #expect(!screen.contains("s3cret"))
        #expect(!screen.contains("Master password"))
    }

    @Test func saveRetrieveAndDeleteThroughTheForm() throws {
        let fx = try Fixture()
        let tmux = try fx.start()
        try fx.unlock(tmux)
        try tmux.press("C-o")
        try tmux.waitFor("New item")
        let secret = "Pa55-Sailfish-9"
        try tmux.type("mail.example")
        try tmux.press("Tab")
        try tmux.type("ana")
        try tmux.press("Tab")
        try tmux.type(secret)
        var screen = try tmux.waitFor(String(repeating: "•", count: secret.count))
        #expect(!screen.contains(secret))
        try tmux.press("Enter") // Password -> Save
        try tmux.press("Enter") // press Save
        screen = try tmux.waitUntil("Saved, listed") { $0.contains("Saved (new item)") && $0.contains("Items 1/1") }
        #expect(lines(screen, containing: "mail.example").count >= 2, "listed and in the editor: \(screen)")
        #expect(try fx.open().item(service: "mail.example", account: "ana").secret == .text(secret))

        // Retrieve: a fresh form with Service and User ID, then the Retrieve button.
        try tmux.press("Escape")
        try tmux.waitFor(listLegend)
        try tmux.press("C-o")
        try tmux.type("mail.example")
        try tmux.press("Tab")
        try tmux.type("ana")
        try tmux.press("Enter", "Enter", "Tab") // Password, Save, Retrieve
        try tmux.press("Enter")
        screen = try tmux.waitUntil("the Retrieved message") { value(of: "Message", in: $0) == "Retrieved" }
        #expect(value(of: "Retrieved ID", in: screen) == "ana")
        // A fixed-width mask: the length of the secret cannot be counted.
        #expect(value(of: "Retrieved Password", in: screen) == String(repeating: "•", count: 8))
        #expect(!screen.contains(secret))
        try tmux.press("C-r")
        screen = try tmux.waitFor(secret)
        try tmux.press("C-r")
        try tmux.waitForAbsence(of: secret)

        try tmux.press("Tab") // Delete: asks first, like d in the list
        try tmux.press("Enter")
        screen = try tmux.waitFor("Delete mail.example / ana?")
        #expect(screen.contains("Delete item"))
        #expect(try fx.open().allItems().count == 1)
        // A typed word does not answer: y and n change nothing.
        try tmux.type("yn")
        #expect(try fx.open().allItems().count == 1)
        try tmux.press("Enter")
        // Deleting closes the editor: the list, now empty, and the status line's undo offer.
        screen = try tmux.waitUntil("the Deleted message over the empty list") {
            $0.contains("Deleted mail.example / ana — Ctrl-Y undoes") && $0.contains("Items 0")
                && $0.contains(listLegend)
        }
        #expect(!screen.contains("Retrieved ID"))
        #expect(!screen.contains("Retrieved Password"))
        #expect(
            thrownKeychainError { try fx.open().item(service: "mail.example", account: "ana") }?.statusName
                == "errSecItemNotFound")
    }

    @Test func filterTheList() throws {
        let fx = try Fixture(items: [
            item("github.com", "ana", "a"), item("gitlab.com", "bo", "b"),
            item("mail.example", "cy", "c"),
        ])
        let tmux = try fx.start()
        try fx.unlock(tmux)
        try tmux.waitFor("Items 1/3")
        try tmux.type("lab")
        // Wait for the whole state: tmux may show a frame whose title is
        // drawn before its rows.
        try tmux.waitUntil("only gitlab.com listed") {
            $0.contains("Items 1/1 of 3") && $0.contains("gitlab.com") && !$0.contains("github.com")
                && !$0.contains("mail.example")
        }
        try tmux.press("Escape") // clears it
        try tmux.waitUntil("all three listed") {
            $0.contains("Items 2/3") && $0.contains("github.com") && $0.contains("gitlab.com")
                && $0.contains("mail.example")
        }
    }

    @Test func copyWithTmuxClipboardAndClear() throws {
        let secret = "Clip-Otter-4417"
        let fx = try Fixture(items: [item("github.com", "ana", secret)])
        let tmux = try fx.start(["--clipboard", "tmux", "--clear-after", "2"])
        try fx.unlock(tmux)
        try tmux.press("Enter")
        try tmux.waitFor("Copied")
        #expect(try tmux.buffers().contains { $0.contains(secret) })
        #expect(!(try tmux.capture()).contains(secret))
        try tmux.waitFor("Clipboard cleared", timeout: 15)
        #expect(!(try tmux.buffers()).contains { $0.contains(secret) })
    }

    @Test func idleLockFromTheForm() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "s")])
        let tmux = try fx.start(["--lock-after", "2"])
        try fx.unlock(tmux)
        try tmux.press("C-o")
        try tmux.type("typed-service-name")
        try tmux.waitFor("typed-service-name")
        // Until only the unlock screen remains (a timeout fails the test).
        let screen = try tmux.waitUntil("only the unlock screen") {
            $0.contains("Master password") && !$0.contains("typed-service-name") && !$0.contains("github.com")
        }
        #expect(screen.contains("Locked after 2 s"))
    }

    /// Issue 32: a half-typed item outlasts the idle lock; the header
    /// counted down before it.
    @Test func aHalfTypedItemOutlastsTheIdleLock() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "s")])
        let tmux = try fx.start(["--lock-after", "3"], width: 80, height: 24)
        try fx.unlock(tmux)
        try tmux.press("C-o")
        try tmux.type("half-typed.example")
        try tmux.waitFor("locks in ")
        try tmux.waitForAll("your unsaved edits of a new item", "kept for the unlock")
        try tmux.type(fx.password)
        try tmux.press("Enter")
        let screen = try tmux.waitFor("are back from before the lock")
        #expect(screen.contains("half-typed.example"), "\(screen)")
        #expect(try fx.open().allItems().count == 1)
    }

    @Test func idleLockFromADialog() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "s")])
        let tmux = try fx.start(["--lock-after", "2"])
        try fx.unlock(tmux)
        // Unsaved edits, then Esc: the dialog asks Save / Discard / Keep editing.
        try tmux.press("C-e")
        try tmux.type("x")
        try tmux.press("Escape")
        try tmux.waitFor("Unsaved edits")
        // The edits are kept for the unlock (the message names the item), the list is gone.
        try tmux.waitUntil("only the unlock screen") {
            $0.contains("Master password") && !$0.contains("Unsaved edits") && !$0.contains("Items ")
                && $0.contains("your unsaved edits of github.com")
        }
        #expect(try fx.open().allItems().count == 1)
        // The dialog is gone for good: y now types into the password field.
        try tmux.press("y")
        try tmux.waitFor("•")
        #expect(try fx.open().allItems().count == 1)
    }

    /// At 80×24: Delete asks, Enter deletes the highlighted item, Ctrl-Y
    /// brings it back, and the list keeps focus, so the next Enter copies
    /// its secret (undo used to reopen the editor).
    @Test func deleteAndUndoAtEightyByTwentyFour() throws {
        let secret = "Undo-Walrus-5150"
        let fx = try Fixture(items: [item("github.com", "ana", "pw"), item("zoom.us", "bo", secret)])
        let tmux = try fx.start(["--clipboard", "tmux"], width: 80, height: 24)
        try fx.unlock(tmux)
        // An editor opened and left before (its form stays behind the preview).
        try tmux.press("C-e")
        try tmux.waitFor("Editing github.com / ana")
        try tmux.press("Escape")
        try tmux.waitFor(listLegend)
        try tmux.press("Down")
        try tmux.waitUntil("zoom.us highlighted") { $0.contains("Items 2/2") && $0.contains("Service  zoom.us") }
        try tmux.press("DC")
        try tmux.waitFor("Delete zoom.us / bo?")
        try tmux.press("Enter")
        try tmux.waitUntil("zoom.us deleted") {
            $0.contains("Deleted zoom.us / bo — Ctrl-Y undoes (10 s)") && $0.contains("Items 1/1")
        }
        #expect(try fx.open().allItems().count == 1)
        try tmux.press("C-y")
        let screen = try tmux.waitUntil("zoom.us restored") {
            $0.contains("Restored zoom.us / bo") && $0.contains("Items 2/2") && $0.contains(listLegend)
        }
        #expect(!screen.contains("Editing"))
        #expect(try fx.open().item(service: "zoom.us", account: "bo").secret == .text(secret))
        try tmux.press("Enter")
        try tmux.waitFor("Copied password of zoom.us / bo")
        #expect(try tmux.buffers().contains { $0.contains(secret) })
    }

    @Test func logoutWipeDeletesTokensAndLocks() throws {
        let fx = try Fixture(items: [
            item("github.com", "ana", "pw"),
            item("api.example", "svc", jwt(exp: 1_000_000_000), kind: .token),
        ])
        let tmux = try fx.start()
        try fx.unlock(tmux)
        var screen = try tmux.waitFor("api.example")
        #expect(screen.contains("y ago"), "the expired token is marked")
        try tmux.press("F8")
        try tmux.waitFor("Delete 1 item, clear the clipboard and lock? Enter deletes")
        try tmux.press("Enter")
        // The unlock screen, drawn whole: the list is gone.
        screen = try tmux.waitUntil("the unlock screen without the list") {
            $0.contains("Master password") && !$0.contains("github.com")
        }
        #expect(!screen.contains("api.example"))
        let items = try fx.open().allItems()
        #expect(items.map(\.service) == ["github.com"])
    }

    @Test func resizeToTinyAndBackAlsoInADialog() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "pw")])
        let tmux = try fx.start()
        try fx.unlock(tmux)
        try tmux.resize(width: 20, height: 5)
        try tmux.waitFor("Terminal too small")
        // Keys other than Ctrl-Q mean nothing while the screen cannot be seen.
        try tmux.press("C-l")
        try tmux.press("C-o")
        try tmux.type("typed blind")
        try tmux.resize(width: 110, height: 32)
        // Back to the list as it was: not locked by Ctrl-L, no editor opened by Ctrl-O.
        let back = try tmux.waitUntil("the list and its preview again") {
            $0.contains("Items 1/1") && $0.contains("github.com") && $0.contains("Preview")
        }
        #expect(!back.contains("typed blind"))
        #expect(!back.contains("Master password"))
        #expect(!back.contains("New item"))
        try tmux.press("C-e")
        try tmux.waitFor("Retrieved Password") // the editor, not the preview
        try tmux.type("x")
        try tmux.press("Escape")
        try tmux.waitFor("Unsaved edits")
        try tmux.resize(width: 60, height: 12)
        var screen = try tmux.waitUntil("the dialog redrawn 60 columns wide") {
            $0.contains("Unsaved edits") && (try? tmux.display("#{window_width}")) == "60"
        }
        #expect(screen.split(separator: "\n").allSatisfy { $0.count <= 60 })
        try tmux.resize(width: 30, height: 8)
        try tmux.waitFor("Terminal too small")
        try tmux.resize(width: 110, height: 32)
        screen = try tmux.waitFor("Unsaved edits")
        try tmux.press("Escape")
        try tmux.waitForAbsence(of: "Unsaved edits")
        #expect(try fx.open().allItems().count == 1)
    }

    @Test func fiveHundredResizesInARow() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "pw")])
        let tmux = try fx.start()
        try fx.unlock(tmux)
        let sizes = [(110, 32), (41, 10), (20, 5), (80, 24), (200, 60), (39, 9)]
        // Batched into few tmux invocations so the program sees a storm of SIGWINCH.
        for batch in 0..<10 {
            var args: [String] = []
            for i in 0..<50 {
                let (w, h) = sizes[(batch * 50 + i) % sizes.count]
                if !args.isEmpty { args.append(";") }
                args += ["resize-window", "-t", "s", "-x", String(w), "-y", String(h)]
            }
            try tmux.run(args)
        }
        try tmux.resize(width: 110, height: 32)
        try tmux.waitUntil("the list again") { $0.contains("Items 1/1") && $0.contains("github.com") }
        try tmux.press("Down") // still answering keys
        #expect(try stillRunning(tmux))
        try tmux.press("C-q")
        try expectExit(tmux, status: 0)
    }

    /// Ctrl-C, SIGTERM and SIGHUP end fob normally; SIGSEGV and SIGABRT
    /// stand for a crash (restore, then die of the signal).
    @Test(arguments: [("C-c", Int32(130)), ("TERM", 143), ("HUP", 129), ("SEGV", 139), ("ABRT", 134)])
    func signalsRestoreTheTerminal(_ how: String, _ status: Int32) throws {
        let fx = try Fixture()
        let tmux = try fx.startFromShell()
        try tmux.waitFor("Master password")
        #expect(try tmux.display("#{alternate_on}") == "1")
        if how == "C-c" {
            try tmux.press("C-c")
        } else {
            let pid = try tmux.childPID()
            let signals = ["TERM": SIGTERM, "HUP": SIGHUP, "SEGV": SIGSEGV, "ABRT": SIGABRT]
            #expect(kill(pid, signals[how]!) == 0)
        }
        try tmux.waitUntil("the shell") { _ in (try? tmux.display("#{alternate_on}")) == "0" }
        try tmux.type("echo status=$?")
        try tmux.press("Enter")
        try tmux.waitFor("status=\(status)")
        try expectTerminalRestored(tmux)
        // Keypad-transmit mode (smkx) is reset too (rmkx), even after a crash.
        #expect(try tmux.display("#{keypad_cursor_flag} #{keypad_flag}") == "0 0")
    }

    @Test func suspendAndForeground() throws {
        let fx = try Fixture()
        let tmux = try fx.startFromShell()
        try tmux.waitFor("Master password")
        try tmux.type("abc")
        try tmux.waitFor("•••")
        try tmux.press("C-z")
        try tmux.waitFor("Stopped")
        try expectTerminalRestored(tmux)
        try tmux.type("fg")
        try tmux.press("Enter")
        let screen = try tmux.waitForAll("Master password", "•••")
        #expect(screen.contains("•••"))
        #expect(try tmux.display("#{alternate_on}") == "1")
        try tmux.press("Escape")
        try tmux.waitUntil("the shell") { _ in (try? tmux.display("#{alternate_on}")) == "0" }
        try expectTerminalRestored(tmux)
    }

    @Test func backspaceRemovesWholeCharacters() throws {
        let fx = try Fixture()
        let tmux = try fx.start()
        try fx.unlock(tmux)
        try tmux.press("C-o")
        try tmux.type("åäö€")
        var screen = try tmux.waitFor("åäö€")
        try tmux.press("BSpace", "BSpace", "BSpace", "BSpace")
        screen = try tmux.waitForAbsence(of: "å")
        #expect(value(of: "Service", in: screen) == "")
        try tmux.type("svc")
        try tmux.press("Tab")
        try tmux.type("ana")
        try tmux.press("Tab")
        try tmux.type("åäö€")
        try tmux.waitFor("••••")
        try tmux.press("BSpace", "BSpace", "BSpace", "BSpace")
        screen = try tmux.waitForAbsence(of: "•")
        try tmux.type("x")
        try tmux.press("Enter", "Enter")
        try tmux.waitFor("Saved")
        let item = try fx.open().item(service: "svc", account: "ana")
        #expect(item.secret == .text("x"))
    }

    @Test func bracketedPasteNeverReachesTheField() throws {
        let fx = try Fixture()
        let tmux = try fx.start()
        try fx.unlock(tmux)
        try tmux.press("C-o")
        try tmux.type("svc")
        try tmux.press("Tab")
        try tmux.type("ana")
        try tmux.press("Tab")
        let pasted = "Pasted-Heron-2024"
        try tmux.run(["set-buffer", "-b", "p", pasted])
        try tmux.run(["paste-buffer", "-p", "-d", "-b", "p", "-t", "s"])
        let screen = try tmux.waitFor(String(repeating: "•", count: pasted.count))
        #expect(!screen.contains(pasted))
        #expect(!screen.contains("200~"))
        try tmux.press("Enter", "Enter")
        try tmux.waitFor("Saved")
        #expect(try fx.open().item(service: "svc", account: "ana").secret == .text(pasted))
    }

    @Test func plainCLocaleShowsReplacements() throws {
        let fx = try Fixture(items: [item("café", "密码", "pw")])
        let tmux = try fx.start(environment: ["LANG": "C", "LC_ALL": "C"])
        try tmux.waitFor("Master password")
        try tmux.type(fx.password)
        try tmux.waitFor(String(repeating: "*", count: fx.password.count))
        try tmux.press("Enter")
        let screen = try tmux.waitForAll("Items 1", "caf?")
        #expect(screen.contains("caf?"))
        #expect(screen.contains("??"))
        #expect(try stillRunning(tmux))
    }

    @Test func monochromeTerminalWorks() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "pw")])
        let tmux = try fx.start(environment: ["TERM": "vt100"])
        try fx.unlock(tmux)
        try tmux.waitFor("github.com")
        try tmux.press("C-e")
        try tmux.type("x")
        try tmux.press("Escape")
        try tmux.waitFor("Unsaved edits")
        try tmux.press("C-d") // discard: back to the list
        try tmux.waitForAbsence(of: "Unsaved edits")
        let screen = try tmux.capture(escapes: true)
        #expect(screen.range(of: #"\x1b\[[0-9;]*3[0-7]m"#, options: .regularExpression) == nil)
        try tmux.press("C-q")
        try expectExit(tmux, status: 0)
    }

    /// Under `TERM=linux` (the kernel console, whose fonts lack them) the
    /// symbols ✓ ✗ ▸ • … ● ↓ showed as blanks or boxes: each has an ASCII
    /// stand-in, at 80×24 and 120×40.
    @Test func linuxConsoleGetsAsciiSymbols() throws {
        let fx = try Fixture(items: (1...40).map { item("site\($0).example.org", "user\($0)", "pw-\($0)") })
        for (width, height) in [(80, 24), (120, 40)] {
            let tmux = try fx.start(environment: ["TERM": "linux"], width: width, height: height)
            try fx.unlock(tmux)
            try tmux.waitFor("site1.example.org")
            try tmux.press("Enter")
            // ✓ or ✗, as the pane's clipboard allows: either has its stand-in.
            var screen = try tmux.waitUntil("the copy's outcome") {
                $0.contains("+ Copied password of site1") || $0.contains("x Copy of the password of site1")
            }
            try tmux.press("C-e")
            try tmux.type("x")
            screen = try tmux.waitFor("* Editing site1.example.org")
            for symbol in ["✓", "✗", "▸", "•", "…", "●", "↓", "↑", "⏎"] {
                #expect(!screen.contains(symbol), "\(symbol) at \(width)x\(height): \(screen)")
            }
            try tmux.press("Escape")
            try tmux.waitFor("Unsaved edits")
            try tmux.press("C-d")
            try tmux.waitForAbsence(of: "Unsaved edits")
            try tmux.press("C-q")
            try expectExit(tmux, status: 0)
        }
    }

    @Test func noColorLeavesOnlyAttributes() throws {
        let fx = try Fixture(items: [item("github.com", "ana", "pw")])
        let coloured = try fx.start()
        try fx.unlock(coloured)
        let colourScreen = try coloured.capture(escapes: true)
        let plain = try fx.start(environment: ["NO_COLOR": "1"])
        try fx.unlock(plain)
        let plainScreen = try plain.capture(escapes: true)
        func hasColour(_ s: String) -> Bool {
            s.range(of: #"\x1b\[[0-9;]*(3[0-7]|4[0-7]|38;5;[0-9]+|48;5;[0-9]+)[;m]"#, options: .regularExpression)
                != nil
        }
        #expect(hasColour(colourScreen))
        #expect(!hasColour(plainScreen))
        #expect(plainScreen.contains("\u{1B}[7m") || plainScreen.contains(";7m"))
    }
}
