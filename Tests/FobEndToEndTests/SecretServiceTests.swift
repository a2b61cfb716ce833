import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The provider driven by real Secret Service clients: `secret-tool`
/// (libsecret), Python's `keyring` and `secretstorage`, and raw calls
/// through `jeepney`.
@Suite(.serialized) struct SecretServiceTests {
    static let toolsPresent =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-run-session")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/secret-tool")

    @Test(.enabled(if: toolsPresent)) func secretToolStoresLooksUpSearchesAndClears() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        #expect(try bus.agent.run(["add", "mail", "ana"], input: "pw-of-ana\n").status == 0)
        let result = try bus.run(
            """
            secret-tool lookup service mail account ana; echo " lookup=$?"
            printf 'tok-1' | secret-tool store --label 'Build token' service ci username bot; echo "store=$?"
            printf 'tok-2' | secret-tool store --label 'Build token' service ci username bot; echo "again=$?"
            secret-tool lookup service ci username bot; echo " lookup2=$?"
            secret-tool search --all service ci
            "$FOB" get ci bot; echo "get=$?"
            secret-tool clear service ci; echo "clear=$?"
            secret-tool lookup service ci username bot; echo " gone=$?"
            """)
        let out = result.stdoutText
        #expect(out.contains("pw-of-ana lookup=0"), "\(out) \(result.stderrText)")
        #expect(out.contains("store=0") && out.contains("again=0"))
        // libsecret's store replaces the item with the same attributes.
        #expect(out.contains("tok-2 lookup2=0"))
        #expect(out.contains("label = Build token"))
        // secret-tool prints the attributes on standard error.
        #expect(result.stderrText.contains("attribute.service = ci"))
        #expect(result.stderrText.contains("attribute.username = bot"))
        #expect(out.components(separatedBy: "label = Build token").count == 2, "one item, not two")
        #expect(out.contains("tok-2\nget=0"))
        #expect(out.contains("clear=0"))
        #expect(out.contains(" gone=1"))
        #expect(try bus.agent.run(["get", "mail", "ana"]).stdoutText == "pw-of-ana\n")
    }

    @Test(.enabled(if: toolsPresent)) func pythonKeyringAndSecretStorageUseTheVault() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        #expect(try bus.agent.run(["add", "mail", "ana"], input: "pw-of-ana\n").status == 0)
        let result = try bus.python(
            """
            import keyring, secretstorage
            from secretstorage.util import open_session
            # With libsecret's GObject bindings installed keyring chains its two
            # Secret Service backends; either way nothing but the Secret Service.
            chosen = keyring.get_keyring()
            backends = getattr(chosen, "backends", [chosen])
            secret_service = ("keyring.backends.SecretService", "keyring.backends.libsecret")
            print("backend", all(type(b).__module__ in secret_service for b in backends) and len(backends) > 0)
            print("fob-item", keyring.get_password("mail", "ana"))
            keyring.set_password("pysvc", "bob", "py-secret")
            print("roundtrip", keyring.get_password("pysvc", "bob"))
            conn = secretstorage.dbus_init()
            print("encrypted", open_session(conn).encrypted)
            col = secretstorage.get_default_collection(conn)
            print("collection", col.get_label(), col.is_locked())
            a = col.create_item("Chrome Safe Storage", {"application": "chrome"}, b"c1")
            b = col.create_item("Chrome Safe Storage", {"application": "chrome"}, b"c2")
            found = sorted(i.get_secret() for i in col.search_items({"application": "chrome"}))
            print("duplicates", found)
            a.set_secret(b"c1-new")
            a.set_label("Renamed")
            a.set_attributes({"application": "chrome", "n": "1"})
            print("changed", a.get_label(), sorted(a.get_attributes().items()), a.get_secret(), a.is_locked())
            b.delete()
            print("after-delete", len(list(col.search_items({"application": "chrome"}))))
            print("all", len(list(col.get_all_items())))
            """)
        let out = result.stdoutText
        #expect(out.contains("backend True"), "\(out) \(result.stderrText)")
        #expect(out.contains("fob-item pw-of-ana"))
        #expect(out.contains("roundtrip py-secret"))
        #expect(out.contains("encrypted True"))
        #expect(out.contains("collection Login False"))
        #expect(out.contains("duplicates [b'c1', b'c2']"))
        #expect(out.contains("changed Renamed [('application', 'chrome'), ('n', '1')] b'c1-new' False"))
        #expect(out.contains("after-delete 1"))
        #expect(out.contains("all 3"))
        // keyring.set_password(S, A, …) is `fob get S A`; the Chromium-like item is listed apart.
        #expect(try bus.agent.run(["get", "pysvc", "bob"]).stdoutText == "py-secret\n")
        let list = try bus.agent.run(["ls"]).stdoutText
        #expect(list.contains("Chrome Safe Storage"))
        #expect(!list.contains("c1-new"))
    }

    @Test(.enabled(if: toolsPresent)) func plainTransferAndTheSpecsErrors() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            from jeepney.wrappers import DBusErrorResponse, unwrap_msg
            name = "org.freedesktop.secrets"
            svc = DBusAddress("/org/freedesktop/secrets", bus_name=name, interface="org.freedesktop.Secret.Service")
            col = DBusAddress("/org/freedesktop/secrets/collection/login", bus_name=name,
                              interface="org.freedesktop.Secret.Collection")
            def call(conn, address, method, signature, *args):
                try:
                    return unwrap_msg(conn.send_and_get_reply(new_method_call(address, method, signature, args)))
                except DBusErrorResponse as error:
                    return "error " + error.name
            conn = open_dbus_connection(bus="SESSION")
            other = open_dbus_connection(bus="SESSION")
            print("unknown-algorithm", call(conn, svc, "OpenSession", "sv", "rot13", ("s", "")))
            _, session = call(conn, svc, "OpenSession", "sv", "plain", ("s", ""))
            props = {"org.freedesktop.Secret.Item.Label": ("s", "Plain"),
                     "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"service": "plainsvc", "username": "u"})}
            item, prompt = call(conn, col, "CreateItem", "a{sv}(oayays)b", props,
                                (session, b"", b"plain secret", "text/plain"), False)
            print("prompt", prompt)
            unlocked, locked = call(conn, svc, "SearchItems", "a{ss}", {"service": "plainsvc"})
            print("search", unlocked == [item], locked)
            secrets = call(conn, svc, "GetSecrets", "aoo", unlocked, session)[0]
            print("secret", secrets[item][2])
            print("other-connection", call(other, svc, "GetSecrets", "aoo", unlocked, session))
            print("alias", call(conn, svc, "ReadAlias", "s", "default")[0])
            print("no-alias", call(conn, svc, "ReadAlias", "s", "nonesuch")[0])
            ghost = DBusAddress("/org/freedesktop/secrets/collection/login/" + "0" * 32, bus_name=name,
                                interface="org.freedesktop.Secret.Item")
            print("no-item", call(conn, ghost, "GetSecret", "o", session))
            nowhere = DBusAddress("/org/freedesktop/secrets/nowhere", bus_name=name, interface="org.freedesktop.Secret.Item")
            print("unknown-path", call(conn, nowhere, "GetSecret", "o", session))
            sess = DBusAddress(session, bus_name=name, interface="org.freedesktop.Secret.Session")
            print("close", call(conn, sess, "Close", ""))
            print("closed", call(conn, svc, "GetSecrets", "aoo", unlocked, session))
            print("create-other", call(conn, svc, "CreateCollection", "a{sv}s", {}, "work"))
            """)
        let out = result.stdoutText
        #expect(
            out.contains("unknown-algorithm error org.freedesktop.DBus.Error.NotSupported"),
            "\(out) \(result.stderrText)")
        #expect(out.contains("prompt /"))
        #expect(out.contains("search True []"))
        #expect(out.contains("secret b'plain secret'"))
        #expect(out.contains("other-connection error org.freedesktop.Secret.Error.NoSession"))
        #expect(out.contains("alias /org/freedesktop/secrets/collection/login"))
        #expect(out.contains("no-alias /\n"))
        #expect(out.contains("no-item error org.freedesktop.DBus.Error.UnknownObject"))
        #expect(out.contains("unknown-path error org.freedesktop.DBus.Error.UnknownObject"))
        #expect(out.contains("close ()"))
        #expect(
            out.contains("closed error org.freedesktop.DBus.Error.UnknownObject")
                || out.contains("closed error org.freedesktop.Secret.Error.NoSession"))
        #expect(out.contains("create-other error org.freedesktop.DBus.Error.NotSupported"))
        #expect(try bus.agent.run(["get", "plainsvc", "u"]).stdoutText == "plain secret\n")
    }

    @Test(.enabled(if: toolsPresent)) func lockLocksTheVaultAndSearchStillAnswersWithLockedMatches() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import secretstorage
            from jeepney import DBusAddress, new_method_call
            from jeepney.wrappers import DBusErrorResponse
            conn = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(conn)
            item = col.create_item("L", {"service": "locksvc", "username": "u"}, b"x")
            col.create_item("M", {"service": "other"}, b"y")
            svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                              interface="org.freedesktop.Secret.Service")
            def call(method, signature, *args):
                try:
                    return conn.send_and_get_reply(new_method_call(svc, method, signature, args)).body
                except DBusErrorResponse as error:
                    return "error " + error.name
            print("before", call("SearchItems", "a{ss}", {"service": "locksvc"}) == ([item.item_path], []))
            from jeepney import MatchRule, message_bus
            from jeepney.io.blocking import Proxy
            rule = MatchRule(type="signal", interface="org.freedesktop.DBus.Properties", member="PropertiesChanged",
                             path=col.collection_path)
            Proxy(message_bus, conn).AddMatch(rule)
            with conn.filter(rule) as queue:
                print("lock", call("Lock", "ao", [col.collection_path]) == ([col.collection_path], "/"))
                changed = conn.recv_until_filtered(queue, timeout=10).body
                print("changed", changed[0], changed[1]["Locked"], item.item_path in changed[1]["Items"][1], len(changed[1]["Items"][1]))
            print("after", call("SearchItems", "a{ss}", {"service": "locksvc"}) == ([], [item.item_path]))
            print("none", call("SearchItems", "a{ss}", {"service": "nonesuch"}))
            print("locked", col.is_locked(), item.is_locked())
            try:
                item.get_secret()
                print("secret given")
            except secretstorage.exceptions.LockedException:
                print("secret refused")
            """)
        let out = result.stdoutText
        #expect(out.contains("before True"), "\(out) \(result.stderrText)")
        #expect(out.contains("lock True"))
        // Locked, and the items still listed (from the index), both of them.
        #expect(out.contains("changed org.freedesktop.Secret.Collection ('b', True) True 2"))
        #expect(out.contains("after True"))
        #expect(out.contains("none ([], [])"))
        #expect(out.contains("locked True True"))
        #expect(out.contains("secret refused"))
        let status = try bus.agent.run(["status"]).stdoutText
        #expect(status.contains("locked") && !status.contains("unlocked"), "\(status)")
    }

    @Test(.enabled(if: toolsPresent)) func aProviderStartedWhileLockedSearchesTheSavedIndex() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import os, signal, subprocess, time, secretstorage
            from jeepney import DBusAddress, new_method_call
            def provider():
                out = subprocess.run(["busctl", "--user", "status", "org.freedesktop.secrets"],
                                     capture_output=True, text=True).stdout
                pids = [line[4:] for line in out.splitlines() if line.startswith("PID=")]
                return int(pids[0]) if pids else None
            conn = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(conn)
            item = col.create_item("L", {"service": "idx", "username": "u"}, b"x")
            col.create_item("M", {"service": "other"}, b"y")
            print("listed", len(list(col.search_items({"service": "idx"}))))
            first = provider()
            os.kill(first, signal.SIGTERM)
            while provider() == first:
                time.sleep(0.05)
            subprocess.run([os.environ["FOB"], "lock"], check=True, capture_output=True)
            svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                              interface="org.freedesktop.Secret.Service")
            def search(query):
                return conn.send_and_get_reply(new_method_call(svc, "SearchItems", "a{ss}", (query,))).body
            # The call activates a new provider, which has never seen the vault unlocked.
            print("locked-search", search({"service": "idx"}) == ([], [item.item_path]))
            print("restarted", provider() not in (None, first))
            print("none", search({"service": "nonesuch"}))
            print("all", len(search({})[1]))
            """)
        let out = result.stdoutText
        #expect(out.contains("listed 1"), "\(out) \(result.stderrText)")
        #expect(out.contains("locked-search True"), "\(result.stderrText)")
        #expect(out.contains("restarted True"))
        #expect(out.contains("none ([], [])"))
        #expect(out.contains("all 2"))
    }

    @Test(.enabled(if: toolsPresent)) func unlockPromptCompletesWhenFobUnlockRunsAndCanBeDismissed() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        #expect(try bus.agent.run(["lock"]).status == 0)
        let result = try bus.python(
            """
            import os, subprocess
            from jeepney import DBusAddress, MatchRule, new_method_call, message_bus
            from jeepney.io.blocking import open_dbus_connection, Proxy
            conn = open_dbus_connection(bus="SESSION")
            name = "org.freedesktop.secrets"
            svc = DBusAddress("/org/freedesktop/secrets", bus_name=name, interface="org.freedesktop.Secret.Service")
            login = "/org/freedesktop/secrets/collection/login"
            def completed(prompt_path, action):
                rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Prompt", member="Completed",
                                 path=prompt_path)
                Proxy(message_bus, conn).AddMatch(rule)
                with conn.filter(rule) as queue:
                    prompt = DBusAddress(prompt_path, bus_name=name, interface="org.freedesktop.Secret.Prompt")
                    action(prompt)
                    return conn.recv_until_filtered(queue, timeout=30).body
            unlocked, prompt_path = conn.send_and_get_reply(new_method_call(svc, "Unlock", "ao", ([login],))).body
            print("first", unlocked, prompt_path.startswith("/org/freedesktop/secrets/prompt/"))
            def dismiss(prompt):
                conn.send_and_get_reply(new_method_call(prompt, "Dismiss", "", ()))
            print("dismissed", completed(prompt_path, dismiss))
            unlocked, prompt_path = conn.send_and_get_reply(new_method_call(svc, "Unlock", "ao", ([login],))).body
            def prompt_then_unlock(prompt):
                conn.send_and_get_reply(new_method_call(prompt, "Prompt", "s", ("",)))
                env = dict(os.environ, FOB_PASSWORD_FILE="\(bus.agent.vault.passwordFile)")
                subprocess.run([os.environ["FOB"], "unlock"], env=env, check=True, capture_output=True)
            print("completed", completed(prompt_path, prompt_then_unlock))
            print("again", conn.send_and_get_reply(new_method_call(svc, "Unlock", "ao", ([login],))).body)
            # A client that leaves mid-prompt: its prompt ends with it.
            subprocess.run([os.environ["FOB"], "lock"], check=True, capture_output=True)
            gone = open_dbus_connection(bus="SESSION")
            _, orphan = gone.send_and_get_reply(new_method_call(svc, "Unlock", "ao", ([login],))).body
            orphan_address = DBusAddress(orphan, bus_name=name, interface="org.freedesktop.Secret.Prompt")
            gone.send_and_get_reply(new_method_call(orphan_address, "Prompt", "s", ("",)))
            gone.close()
            from jeepney.wrappers import DBusErrorResponse, unwrap_msg
            import time
            answer = None
            # Poll until the provider has seen the client leave (Prompt again has no effect meanwhile).
            for _ in range(200):
                try:
                    unwrap_msg(conn.send_and_get_reply(new_method_call(orphan_address, "Prompt", "s", ("",))))
                except DBusErrorResponse as error:
                    answer = error.name
                    break
                time.sleep(0.05)
            print("orphan", answer)
            """)
        let out = result.stdoutText
        #expect(out.contains("first [] True"), "\(out) \(result.stderrText)")
        #expect(out.contains("dismissed (True, ('ao', []))"))
        #expect(out.contains("completed (False, ('ao', ['/org/freedesktop/secrets/collection/login']))"))
        #expect(out.contains("again (['/org/freedesktop/secrets/collection/login'], '/')"))
        #expect(out.contains("orphan org.freedesktop.DBus.Error.UnknownObject"))
    }

    @Test(.enabled(if: toolsPresent)) func theSessionCollectionKeepsItemsInMemoryOnly() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import secretstorage
            from jeepney import DBusAddress, new_method_call
            conn = secretstorage.dbus_init()
            svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                              interface="org.freedesktop.Secret.Service")
            alias = conn.send_and_get_reply(new_method_call(svc, "ReadAlias", "s", ("session",))).body[0]
            print("alias", alias)
            col = secretstorage.Collection(conn, alias)
            item = col.create_item("Temporary", {"scope": "memory"}, b"in-memory")
            print("search", [(i.item_path == item.item_path, i.get_secret()) for i in
                             secretstorage.search_items(conn, {"scope": "memory"})])
            print("collection", col.get_label(), col.is_locked(), len(list(col.get_all_items())))
            item.set_label("Renamed"); item.set_secret(b"changed")
            print("item", item.get_label(), item.get_attributes(), item.get_secret(), item.is_locked())
            print("collections", sorted(c.collection_path for c in secretstorage.get_all_collections(conn)))
            item.delete()
            print("deleted", len(list(col.get_all_items())))
            col.create_item("Kept", {"scope": "memory"}, b"kept")
            """)
        let out = result.stdoutText
        #expect(out.contains("alias /org/freedesktop/secrets/collection/session"), "\(out) \(result.stderrText)")
        #expect(out.contains("search [(True, b'in-memory')]"))
        #expect(out.contains("collection Session False 1"))
        #expect(out.contains("item Renamed {'scope': 'memory'} b'changed' False"))
        #expect(
            out.contains(
                "collections ['/org/freedesktop/secrets/collection/login', '/org/freedesktop/secrets/collection/session']"
            ))
        #expect(out.contains("deleted 0"))
        // Nothing of it reached the vault.
        let list = try bus.agent.run(["ls"])
        #expect(!list.stdoutText.contains("Temporary") && !list.stdoutText.contains("Kept"), "\(list.stdoutText)")
    }

    /// `GetSecrets` of many items of the session collection answers them
    /// while the vault is locked: they need no vault (it used to ask the
    /// agent for every secret of the vault first, and answered `IsLocked`).
    @Test(.enabled(if: toolsPresent)) func getSecretsOfManyMemoryItemsAnswersWhileTheVaultIsLocked() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import secretstorage
            from jeepney import DBusAddress, new_method_call
            from secretstorage.util import open_session
            conn = secretstorage.dbus_init()
            svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                              interface="org.freedesktop.Secret.Service")
            col = secretstorage.Collection(conn, "/org/freedesktop/secrets/collection/session")
            paths = [col.create_item("Many %d" % i, {"scope": "many"}, b"m%d" % i).item_path for i in range(10)]
            conn.send_and_get_reply(new_method_call(svc, "Lock", "ao", (["/org/freedesktop/secrets/collection/login"],)))
            print("locked", secretstorage.Collection(conn, "/org/freedesktop/secrets/collection/login").is_locked())
            session = open_session(conn)
            reply = conn.send_and_get_reply(new_method_call(svc, "GetSecrets", "aoo", (paths, session.object_path)))
            print("answered", sorted(reply.body[0]) == sorted(paths) if isinstance(reply.body[0], dict) else reply.body)
            """)
        let out = result.stdoutText
        #expect(out.contains("locked True"), "\(out) \(result.stderrText)")
        #expect(out.contains("answered True"), "\(out) \(result.stderrText)")
    }

    @Test(.enabled(if: toolsPresent)) func twoClientsAtOnce() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.run(
            """
            store() {
              for i in 1 2 3 4 5 6 7 8; do
                printf "$1-$i" | secret-tool store --label "$1 $i" service "$1" username "u$i" || echo "failed $1 $i"
                printf "$1" | secret-tool store --label same service same username shared || echo "failed same $1"
              done
            }
            store one & a=$!
            store two & b=$!
            wait $a; wait $b
            for c in one two; do for i in 1 2 3 4 5 6 7 8; do
              printf '%s ' "$(secret-tool lookup service $c username u$i)"
            done; done; echo
            secret-tool search --all service same 2>/dev/null | grep -c '^label = same$'
            """)
        let out = result.stdoutText
        #expect(!out.contains("failed"), "\(out) \(result.stderrText)")
        #expect(
            out.contains(
                "one-1 one-2 one-3 one-4 one-5 one-6 one-7 one-8 two-1 two-2 two-3 two-4 two-5 two-6 two-7 two-8"))
        // Every store of the same attributes replaced the one item.
        #expect(out.hasSuffix("\n1\n"))
    }

    @Test(.enabled(if: toolsPresent)) func promptAsksTheMasterPasswordWithPinentry() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        // A pinentry speaking the Assuan protocol: a wrong password first, then the right one.
        let pinentry = bus.directory.file("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            tries=0
            while read -r line; do
              case "$line" in
                GETPIN)
                  tries=$((tries+1))
                  if [ $tries -eq 1 ]; then echo "D wrong%25one"; else printf 'D %s\\n' "$(cat '\(bus.agent.vault.passwordFile)')"; fi
                  echo OK;;
                BYE) echo OK; exit 0;;
                *) echo "$line" >> '\(bus.directory.file("pinentry.log").path)'; echo OK;;
              esac
            done
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: pinentry))
        chmod(pinentry, 0o755)
        bus.extraEnvironment = ["FOB_PINENTRY": pinentry]
        #expect(try bus.agent.run(["lock"]).status == 0)
        let result = try bus.python(
            """
            import secretstorage
            conn = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(conn)
            print("locked", col.is_locked())
            print("dismissed", col.unlock())
            print("locked-after", col.is_locked())
            """)
        let out = result.stdoutText
        #expect(out.contains("locked True"), "\(out) \(result.stderrText)")
        #expect(out.contains("dismissed False"))
        #expect(out.contains("locked-after False"))
        let log = (try? String(contentsOf: bus.directory.file("pinentry.log"), encoding: .utf8)) ?? ""
        #expect(log.contains("SETERROR Wrong password"), "\(log)")
        let status = try bus.agent.run(["status"]).stdoutText
        #expect(status.contains("unlocked"), "\(status)")
    }

    /// A pinentry that ends without a password (Cancel, or no display to
    /// run on) left the prompt open for its whole 5 minutes, the client
    /// hanging: it is dismissed at once.
    @Test(.enabled(if: toolsPresent)) func aPromptWhosePinentryIsCancelledIsDismissed() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let pinentry = bus.directory.file("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            while read -r line; do
              case "$line" in
                GETPIN) echo "ERR 83886179 Operation cancelled <Pinentry>";;
                BYE) echo OK; exit 0;;
                *) echo OK;;
              esac
            done
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: pinentry))
        chmod(pinentry, 0o755)
        bus.extraEnvironment = ["FOB_PINENTRY": pinentry]
        #expect(try bus.agent.run(["lock"]).status == 0)
        let result = try bus.run(
            """
            cat > "$HOME/client.py" <<'PY'
            import time, secretstorage
            conn = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(conn)
            started = time.monotonic()
            print("dismissed", col.unlock())
            print("fast", time.monotonic() - started < 20)
            print("locked-after", col.is_locked())
            PY
            timeout 60 /usr/bin/python3 "$HOME/client.py"
            """)
        let out = result.stdoutText
        #expect(out.contains("dismissed True"), "\(out) \(result.stderrText)")
        #expect(out.contains("fast True"))
        #expect(out.contains("locked-after True"))
    }
}
