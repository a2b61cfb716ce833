import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The Secret Service provider's figures, beside gnome-keyring's when it is
/// installed (same machine, same run, same items): `secret-tool lookup`,
/// `secret-tool search --all`, `GetSecrets` of every item in one call, and
/// the provider's peak memory. Each provider runs on its own private bus
/// (`dbus-run-session`) whose configuration activates nothing.
/// `fob-bench secret-service [N …] [--fob-only]` runs these alone.
enum SecretServiceBenchmark {
    /// Milliseconds with one decimal, for the figures' columns.
    static func ms(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let text = "\(tenths / 10).\(abs(tenths % 10))"
        return String(repeating: " ", count: max(0, 10 - text.count)) + text + " ms"
    }

    static func run(scratch: URL, counts: [Int] = [1_000, 10_000]) throws {
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let fob = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("fob").path
        let tools = ["/usr/bin/dbus-run-session", "/usr/bin/secret-tool", "/usr/bin/python3"]
        guard FileManager.default.isExecutableFile(atPath: fob),
            tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) })
        else {
            print("\nSecret Service: needs fob beside fob-bench, \(tools.joined(separator: ", ")); skipped")
            return
        }
        let gnomeKeyring =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon")
            && !CommandLine.arguments.contains("--fob-only")
        for count in counts {
            section("Secret Service at \(count) items (median of 3; secret-tool, DH transfer)")
            let root = scratch.appendingPathComponent("secret-service-\(count)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let fobFigures = try measureFob(fob: fob, count: count, root: root)
            // Storing thousands of items into gnome-keyring takes minutes: 1,000 only.
            let gnomeFigures = gnomeKeyring && count <= 1_000 ? try measureGnomeKeyring(count: count, root: root) : [:]
            for (key, title) in [
                ("lookup", "secret-tool lookup (one item)"),
                ("search", "secret-tool search --all (every item, with secrets)"),
                ("searchcpu", "  the provider's CPU time in it"),
                ("floor", "  the same of in-memory items (client's floor)"),
                ("searchitems", "SearchItems {} (one call)"),
                ("getsecrets", "GetSecrets of every item (one call)"),
                ("same", "1,000 CreateItem of the same attributes"),
            ] {
                var line = "  " + pad(title) + (fobFigures[key].map(ms) ?? "         ?   ")
                if let theirs = gnomeFigures[key], let ours = fobFigures[key], theirs > 0 {
                    line += "   gnome-keyring " + ms(theirs) + "   ratio \(Double(Int(ours / theirs * 100)) / 100)"
                }
                print(line)
            }
            if let kib = fobFigures["hwm"] {
                var line = "  " + pad("peak memory of the provider (VmHWM)") + "\(Int(kib / 102.4) / 10) MiB"
                if let theirs = gnomeFigures["hwm"] { line += "   gnome-keyring \(Int(theirs / 102.4) / 10) MiB" }
                print(line)
            }
            if let kib = fobFigures["agenthwm"] {
                print("  " + pad("peak memory of Fob's agent (VmHWM)") + "\(Int(kib / 102.4) / 10) MiB")
            }
            let found = [fobFigures, gnomeFigures].compactMap { $0["found"].map { "\(Int($0))" } }
            let sent = [fobFigures, gnomeFigures].compactMap { $0["items"].map { "\(Int($0))" } }
            print(
                "  (secrets found by search --all: \(found.joined(separator: ", ")); sent by GetSecrets: \(sent.joined(separator: ", ")))"
            )
            if !gnomeKeyring { print("  (gnome-keyring-daemon not installed or --fob-only: no comparison)") }
        }
    }

    /// A bus configuration that listens in `root` and activates nothing,
    /// with the limits of the desktop's session bus (libsecret's search
    /// keeps a match rule and a call pending for every item).
    static func busConfig(_ root: URL) throws -> String {
        let path = root.appendingPathComponent("session.conf").path
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(root.path)</listen>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
              <limit name="max_match_rules_per_connection">50000</limit>
              <limit name="max_replies_per_connection">50000</limit>
              <limit name="max_message_size">1000000000</limit>
              <limit name="max_incoming_bytes">1000000000</limit>
              <limit name="max_outgoing_bytes">1000000000</limit>
            </busconfig>
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Times, in the shell run on the private bus, each figure three times
    /// (`key=ms` lines), and the provider's `hwm=KiB`; sets `$PROVIDER` to its pid.
    static let timings = """
        t() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo "$((e - s))"; }
        median() { printf '%s\\n' "$@" | sort -n | sed -n 2p; }
        secret-tool lookup service svc7 username user7 >/dev/null 2>&1
        echo "lookup=$(median $(t secret-tool lookup service svc7 username user7) \\
          $(t secret-tool lookup service svc7 username user7) $(t secret-tool lookup service svc7 username user7))"
        PROVIDER=$(busctl --user status org.freedesktop.secrets 2>/dev/null | sed -n 's/^PID=//p')
        cpu() { awk '{ print $14 + $15 }' /proc/$PROVIDER/stat; }
        before=$(cpu)
        echo "search=$(median $(t secret-tool search --all bench all) $(t secret-tool search --all bench all) \\
          $(t secret-tool search --all bench all))"
        echo "searchcpu=$(( ($(cpu) - before) * 1000000000 / $(getconf CLK_TCK) / 3 ))"
        echo "found=$(secret-tool search --all bench all 2>/dev/null | grep -c '^secret = secret-')"
        /usr/bin/python3 "$ROOT/calls.py" 2>"$ROOT/calls.err" || echo "failed: calls.py: $(tail -n 1 "$ROOT/calls.err")"
        [ -n "$FLOOR" ] && /usr/bin/python3 "$ROOT/floor.py" && echo "floor=$(median $(t secret-tool search --all floor all) \\
          $(t secret-tool search --all floor all) $(t secret-tool search --all floor all))"
        echo "hwm=$(sed -n 's/^VmHWM:[[:space:]]*\\([0-9]*\\) kB/\\1/p' /proc/$PROVIDER/status)"
        [ -n "$SAME" ] && { /usr/bin/python3 "$ROOT/same.py" 2>"$ROOT/same.err" || \
          echo "failed: same.py: $(tail -n 1 "$ROOT/same.err")"; }
        """

    /// `SAME` items created one after another with the same attributes and
    /// `replace` false (each a new item: Fob names them `Same`, `Same (2)`, …),
    /// in ns; after the other figures, so they are taken on the vault of N items.
    static let same = """
        import os, time, secretstorage
        conn = secretstorage.dbus_init()
        col = secretstorage.get_default_collection(conn)
        start = time.monotonic_ns()
        for i in range(int(os.environ["SAME"])):
            col.create_item("Same", {"same": "all"}, b"same-%d" % i)
        print("same=%d" % (time.monotonic_ns() - start))
        """

    /// SearchItems and GetSecrets (a DH session, as libsecret opens) in one call each, in ns.
    static let calls = """
        import time, secretstorage
        from jeepney import DBusAddress, new_method_call
        from secretstorage.util import open_session
        # After a search of 10,000 items the bus daemon is still dropping that
        # client's match rules: a connection may miss jeepney's 1 s to authenticate.
        for attempt in range(60):
            try:
                conn = secretstorage.dbus_init()
                break
            except Exception:
                if attempt == 59:
                    raise
                time.sleep(1)
        session = open_session(conn)
        svc = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                          interface="org.freedesktop.Secret.Service")
        def timed(method, signature, *args):
            runs = []
            for _ in range(3):
                start = time.monotonic_ns()
                body = conn.send_and_get_reply(new_method_call(svc, method, signature, args), timeout=600).body
                runs.append(time.monotonic_ns() - start)
            return sorted(runs)[1], body
        ns, (unlocked, locked) = timed("SearchItems", "a{ss}", {"bench": "all"})
        print("searchitems=%d" % ns)
        # Only the elapsed nanoseconds and the number of answers are printed, never a value.
        elapsed_ns, reply = timed("GetSecrets", "aoo", unlocked, session.object_path)
        print("getsecrets=%d" % elapsed_ns)
        print("items=%d" % len(reply[0]))
        """

    /// The client's floor: `secret-tool search --all` of as many items kept
    /// in the provider's memory (the `session` collection: no agent, no
    /// vault, no decryption), stored here first; matched by `floor` = `all`.
    static let floor = """
        import os, secretstorage
        conn = secretstorage.dbus_init()
        col = secretstorage.Collection(conn, "/org/freedesktop/secrets/collection/session")
        for i in range(int(os.environ["FLOOR"])):
            col.create_item("Floor %d" % i, {"floor": "all", "service": "floor%d" % i, "username": "user%d" % i},
                            b"floor-%d-xxxxxxxxxxxxxxxxxxxxxxxx" % i)
        """

    /// Runs `script` on a private bus; returns its `key=value` lines (values in ns or KiB).
    static func onBus(_ script: String, root: URL, environment: [String: String]) throws -> [String: Double] {
        try Data(calls.utf8).write(to: root.appendingPathComponent("calls.py"))
        try Data(floor.utf8).write(to: root.appendingPathComponent("floor.py"))
        try Data(same.utf8).write(to: root.appendingPathComponent("same.py"))
        let result = try ChildProcessRunner.run(
            "/usr/bin/dbus-run-session",
            arguments: ["--config-file=\(try busConfig(root))", "--", "/bin/sh", "-c", script],
            environment: environment.merging(["ROOT": root.path]) { $1 }, maxOutput: 1 << 20, timeout: 3600)
        var figures: [String: Double] = [:]
        for line in String(decoding: result.output, as: UTF8.self).split(separator: "\n") {
            // A step that failed says why (an exception's last line: names and error messages, never a value).
            if line.hasPrefix("failed: ") { print("  " + line) }
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            let key = String(parts[0])
            figures[key] = ["hwm", "items", "found"].contains(key) ? value : value / 1e6
        }
        return figures
    }

    /// The items every provider holds: `service` svcI, `username` userI, `bench` all.
    static func attributes(_ i: Int) -> [(String, String)] {
        [("bench", "all"), ("service", "svc\(i)"), ("username", "user\(i)")]
    }

    static func measureFob(fob: String, count: Int, root: URL) throws -> [String: Double] {
        let vaultURL = root.appendingPathComponent("fob/vault.db")
        let runtime = root.appendingPathComponent("fob-run")
        try BenchFiles.privateDirectory(runtime)
        let (password, passwordFile) = try BenchFiles.password(in: root)
        let vault = try Vault.create(
            at: vaultURL, password: password, kdf: KDFParameters(opslimit: 1, memlimit: 8192), accessDefault: .any)
        try vault.add(
            contentsOf: (0..<count).map { i in
                Item(
                    service: "svc\(i)", account: "user\(i)", label: "Label \(i)",
                    customFields: attributes(i).map {
                        CustomField(name: "attr:" + $0.0, value: SecretBytes(utf8: $0.1))
                    },
                    secret: SecretBytes(utf8: "secret-\(i)-xxxxxxxxxxxxxxxxxxxxxxxx"))
            })
        vault.lock()
        let environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root.path, "XDG_RUNTIME_DIR": runtime.path,
            "FOB_VAULT": vaultURL.path, "FOB_AGENT": "1", "FOB": fob,
            // The floor's search of 10,000 items would take minutes more: 1,000 at most.
            "FLOOR": count <= 1_000 ? "\(count)" : "",
            "SAME": count <= 1_000 ? "1000" : "",
        ]
        let unlocked = try ChildProcessRunner.run(
            fob, arguments: ["unlock", "--password-file", passwordFile], environment: environment, timeout: 120)
        guard unlocked.status == 0 else {
            print("  fob unlock failed (\(unlocked.status)); skipped")
            return [:]
        }
        let agent = AgentBenchmark.agentPID(fob, environment: environment)
        defer { agent.map { _ = kill(pid_t($0), SIGTERM) } }
        let script = """
            "$FOB" secret-service 2>/dev/null &
            i=0; until gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets \\
              -m org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 600 ] && break; sleep 0.05; done
            \(timings)
            kill $PROVIDER
            """
        var figures = try onBus(script, root: root, environment: environment)
        // The agent's peak over the same steps (the vault's KDF is the benchmark's small one).
        if let agent, let status = FileManager.default.contents(atPath: "/proc/\(agent)/status"),
            let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix("VmHWM:")
            }), let kib = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        {
            figures["agenthwm"] = kib
        }
        return figures
    }

    static func measureGnomeKeyring(count: Int, root: URL) throws -> [String: Double] {
        let home = root.appendingPathComponent("gnome-keyring")
        let runtime = home.appendingPathComponent("run")
        try BenchFiles.privateDirectory(runtime)
        let store = """
            import secretstorage
            conn = secretstorage.dbus_init()
            col = secretstorage.get_default_collection(conn)
            for i in range(\(count)):
                col.create_item("Label %d" % i, {"bench": "all", "service": "svc%d" % i, "username": "user%d" % i},
                                b"secret-%d-xxxxxxxxxxxxxxxxxxxxxxxx" % i)
            """
        try Data(store.utf8).write(to: home.appendingPathComponent("store.py"))
        let environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home.path, "XDG_RUNTIME_DIR": runtime.path,
            "XDG_DATA_HOME": home.appendingPathComponent("data").path, "SAME": "1000",
        ]
        let script = """
            eval "$(printf 'benchmark' | gnome-keyring-daemon --unlock --components=secrets)"
            i=0; until gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets \\
              -m org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 600 ] && break; sleep 0.05; done
            /usr/bin/python3 "$HOME/store.py"
            \(timings)
            kill $PROVIDER
            """
        return try onBus(script, root: root, environment: environment)
    }
}
