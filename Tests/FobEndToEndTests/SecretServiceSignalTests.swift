import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Changes made by Fob itself, and locks, reaching Secret Service clients
/// as signals and as fresh answers.
@Suite(.serialized) struct SecretServiceSignalTests {
    static let toolsPresent = SecretServiceTests.toolsPresent

    @Test(.enabled(if: toolsPresent)) func fobLockElsewhereReachesClientsAsPropertiesChanged() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import os, subprocess, secretstorage
            from jeepney import MatchRule, message_bus
            from jeepney.io.blocking import Proxy
            from secretstorage.util import open_session
            conn = secretstorage.dbus_init()
            session = open_session(conn)
            col = secretstorage.get_default_collection(conn)
            print("locked-before", col.is_locked())
            rule = MatchRule(type="signal", interface="org.freedesktop.DBus.Properties", member="PropertiesChanged",
                             path=col.collection_path)
            Proxy(message_bus, conn).AddMatch(rule)
            with conn.filter(rule) as queue:
                subprocess.run([os.environ["FOB"], "lock"], check=True, capture_output=True)
                changed = conn.recv_until_filtered(queue, timeout=10).body
                print("changed", changed[1]["Locked"])
            """)
        let out = result.stdoutText
        #expect(out.contains("locked-before False"), "\(out) \(result.stderrText)")
        #expect(out.contains("changed ('b', True)"))
    }

    @Test(.enabled(if: toolsPresent)) func writesByFobReachClientsAsItemSignals() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import os, subprocess, secretstorage
            from jeepney import HeaderFields, MatchRule, message_bus
            from jeepney.io.blocking import Proxy
            from secretstorage.util import open_session
            conn = secretstorage.dbus_init()
            session = open_session(conn)
            col = secretstorage.get_default_collection(conn)
            own = col.create_item("Own", {"service": "own"}, b"x")
            print("items", len(list(col.get_all_items())))
            rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Collection", path=col.collection_path)
            Proxy(message_bus, conn).AddMatch(rule)
            def fob(*args, stdin=b""):
                subprocess.run([os.environ["FOB"], *args], input=stdin, check=True, capture_output=True)
            with conn.filter(rule) as queue:
                fob("add", "mail", "ana", stdin=b"pw\\n")
                created = conn.recv_until_filtered(queue, timeout=10)
                print("created", created.header.fields[HeaderFields.member], created.body[0] != own.item_path)
                fob("update", "mail", "ana", "--label", "Mail", "--keep-secret")
                changed = conn.recv_until_filtered(queue, timeout=10)
                print("changed", changed.header.fields[HeaderFields.member], changed.body[0] == created.body[0])
                fob("rm", "mail", "ana")
                deleted = conn.recv_until_filtered(queue, timeout=10)
                print("deleted", deleted.header.fields[HeaderFields.member], deleted.body[0] == created.body[0])
            """)
        let out = result.stdoutText
        #expect(out.contains("items 1"), "\(out) \(result.stderrText)")
        #expect(out.contains("created ItemCreated True"), "\(result.stderrText)")
        #expect(out.contains("changed ItemChanged True"))
        #expect(out.contains("deleted ItemDeleted True"))
    }

    /// The agent's change feed, not the vault file, tells the provider of
    /// `fob add`: a client that holds no session (the provider then watched
    /// nothing) hears `ItemCreated` and finds the item by a search.
    @Test(.enabled(if: toolsPresent)) func fobAddReachesAClientWithoutASessionThroughTheFeed() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import os, subprocess, time, secretstorage
            from jeepney import HeaderFields, MatchRule, message_bus
            from jeepney.io.blocking import Proxy
            conn = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(conn)
            print("items", len(list(col.search_items({"service": "mail"}))))
            rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Collection", path=col.collection_path)
            Proxy(message_bus, conn).AddMatch(rule)
            with conn.filter(rule) as queue:
                subprocess.run([os.environ["FOB"], "add", "mail", "ana"], input=b"pw\\n", check=True,
                               capture_output=True)
                start = time.monotonic()
                created = conn.recv_until_filtered(queue, timeout=5)
                print("created", created.header.fields[HeaderFields.member])
            found = list(col.search_items({"service": "mail"}))
            print("found", len(found), found[0].item_path == created.body[0])
            """)
        let out = result.stdoutText
        #expect(out.contains("items 0"), "\(out) \(result.stderrText)")
        #expect(out.contains("created ItemCreated"), "\(out) \(result.stderrText)")
        #expect(out.contains("found 1 True"), "\(out)")
    }

    @Test(.enabled(if: toolsPresent)) func aWriteByFobIsReadFreshByTheNextGetSecretsAndGetAll() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import os, subprocess, secretstorage
            from jeepney import DBusAddress, new_method_call
            conn = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(conn)
            # GetSecrets reads the secrets of the paths named in one request and holds them.
            items = [col.create_item("L%d" % i, {"service": "s%d" % i, "username": "u%d" % i}, b"old-%d" % i)
                     for i in range(10)]
            svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                              interface="org.freedesktop.Secret.Service")
            def call(method, signature, *args):
                return conn.send_and_get_reply(new_method_call(svc, method, signature, args), timeout=10).body
            plain = call("OpenSession", "sv", "plain", ("s", ""))[1]
            paths = [item.item_path for item in items]
            def secrets():
                return {path: bytes(value[2]).decode() for path, value in call("GetSecrets", "aoo", paths, plain)[0].items()}
            def fob(*args, stdin=b""):
                subprocess.run([os.environ["FOB"], *args], input=stdin, check=True, capture_output=True)
            print("before", secrets()[paths[3]], items[3].get_label())
            fob("update", "s3", "u3", "--label", "New", stdin=b"fresh")
            print("after", secrets()[paths[3]], items[3].get_label(), items[3].get_secret().decode())
            fob("rm", "s5", "u5")
            found = secrets()
            print("deleted", paths[5] in found, len(found))
            try:
                items[5].get_label()
                print("still there")
            except Exception as error:
                print("gone", type(error).__name__)
            """)
        let out = result.stdoutText
        #expect(out.contains("before old-3 L3"), "\(out) \(result.stderrText)")
        #expect(out.contains("after fresh New fresh"), "\(out)")
        #expect(out.contains("deleted False 9"), "\(out)")
        #expect(out.contains("gone "), "\(out)")
    }

    @Test(.enabled(if: toolsPresent)) func collectionChangedFollowsWritesOfClientsAndOfFobAndLocks() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let result = try bus.python(
            """
            import os, subprocess, secretstorage
            from jeepney import HeaderFields, MatchRule, message_bus
            from jeepney.io.blocking import Proxy
            from secretstorage.util import open_session
            conn = secretstorage.dbus_init()
            session = open_session(conn)
            col = secretstorage.get_default_collection(conn)
            memory = secretstorage.Collection(conn, "/org/freedesktop/secrets/collection/session")
            rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Service", member="CollectionChanged")
            Proxy(message_bus, conn).AddMatch(rule)
            def changed(action):
                with conn.filter(rule) as queue:
                    action()
                    message = conn.recv_until_filtered(queue, timeout=10)
                    return message.header.fields[HeaderFields.path], message.body[0]
            def fob(*args, stdin=b""):
                subprocess.run([os.environ["FOB"], *args], input=stdin, check=True, capture_output=True)
            print("client", changed(lambda: col.create_item("C", {"service": "c"}, b"x")))
            print("fob", changed(lambda: fob("add", "mail", "ana", stdin=b"pw\\n")))
            print("memory", changed(lambda: memory.create_item("M", {"scope": "m"}, b"m")))
            print("lock", changed(lambda: fob("lock")))
            """)
        let out = result.stdoutText
        let login = "'/org/freedesktop/secrets/collection/login'"
        #expect(out.contains("client ('/org/freedesktop/secrets', \(login))"), "\(out) \(result.stderrText)")
        #expect(out.contains("fob ('/org/freedesktop/secrets', \(login))"))
        #expect(out.contains("memory ('/org/freedesktop/secrets', '/org/freedesktop/secrets/collection/session')"))
        #expect(out.contains("lock ('/org/freedesktop/secrets', \(login))"))
    }
}
