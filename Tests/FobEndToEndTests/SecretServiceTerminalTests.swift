import Dispatch
import FobTestSupport
import Foundation
import Synchronization
import Testing

/// The terminal UI and the Secret Service provider on one vault: what a
/// client stores shows in the UI, and the UI's logout wipe (`W`) reaches the
/// provider's clients as the collection locking.
@Suite(.serialized) struct SecretServiceTerminalTests {
    @Test(.enabled(if: SecretServiceTests.toolsPresent))
    func theUIShowsWhatAClientStoresAndItsLogoutWipeLocksTheClientsCollection() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        // A token, so that the logout wipe has something to delete and asks.
        let token = jwt(exp: 4_000_000_000)
        #expect(try bus.agent.run(["add", "api", "ci", "--kind", "token"], input: token).status == 0)
        let command = ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", FobProcess.binaryURL.path, "--clipboard", "none"]
        let tmux = try TmuxSession(command: command, environment: bus.agent.environment)
        _ = try tmux.waitUntil("the main screen") { $0.contains("type to find") && !$0.contains("Master password") }
        // Keys are taken once the first second on a vault unlocked already is over.
        // (The line may wrap, and may then give way to another notice.)
        try tmux.waitUntil("keys taken again") {
            !$0.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("keys ignored for 1 s")
        }
        // A client stores an item while the UI runs: it appears in the list.
        let stored = try bus.run("printf 'tok' | secret-tool store --label 'Build token' service build username bot")
        #expect(stored.status == 0, "\(stored.stderrText)")
        _ = try tmux.waitUntil("the item build listed") { screen in
            screen.split(separator: "\n").contains { $0.split(separator: " ").contains("build") }
        }
        // A client holds the collection and waits for it to lock.
        let ready = bus.directory.file("ready").path
        let answer = Mutex<String?>(nil)
        let program = """
            import secretstorage
            from jeepney import MatchRule, message_bus
            from jeepney.io.blocking import Proxy
            from secretstorage.util import open_session
            conn = secretstorage.dbus_init()
            session = open_session(conn)
            col = secretstorage.get_default_collection(conn)
            item = next(col.search_items({"service": "build"}))
            rule = MatchRule(type="signal", interface="org.freedesktop.DBus.Properties", member="PropertiesChanged",
                             path=col.collection_path)
            Proxy(message_bus, conn).AddMatch(rule)
            with conn.filter(rule) as queue:
                open("\(ready)", "w").close()
                changed = conn.recv_until_filtered(queue, timeout=60).body
            print("changed", changed[1]["Locked"], item.is_locked(), col.is_locked())
            from jeepney import DBusAddress, new_method_call
            svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                              interface="org.freedesktop.Secret.Service")
            unlocked, locked = conn.send_and_get_reply(
                new_method_call(svc, "SearchItems", "a{ss}", ({"service": "build"},))).body
            print("search", unlocked, locked == [item.item_path])
            """
        DispatchQueue.global().async {
            let result = try? bus.python(program)
            answer.withLock { $0 = (result?.stdoutText ?? "") + (result?.stderrText ?? "") }
        }
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: ready) && Date() < deadline { usleep(50_000) }
        #expect(FileManager.default.fileExists(atPath: ready), "the client never got ready")
        try tmux.press("F8")
        _ = try tmux.waitFor("Enter deletes")
        try tmux.press("Enter")
        _ = try tmux.waitFor("Master password")
        while answer.withLock({ $0 }) == nil && Date() < deadline { usleep(50_000) }
        let out = answer.withLock { $0 } ?? "(no answer)"
        #expect(out.contains("changed ('b', True) True True"), "\(out)")
        #expect(out.contains("search [] True"), "\(out)")
        try tmux.press("C-q")
    }
}
