import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Secret Service clients on a vault whose default rule is `ask`, as every
/// new vault's: the provider passes on each D-Bus sender's pid, so the
/// agent asks about `secret-tool` or `python3` (not the provider), and with
/// no terminal to ask on it asks through pinentry (a script speaking Assuan
/// that presses one button and logs what it was told).
@Suite(.serialized) struct SecretServiceConsentTests {
    static let toolsPresent = SecretServiceTests.toolsPresent

    /// A bus whose agent asks with a pinentry that answers `CONFIRM` with `confirm`.
    /// The directory of the script lives as long as the test's tuple.
    /// A bus, an agent and a pinentry whose `CONFIRM` of each dialog is
    /// answered by the next of `confirm` (the last one again past its end).
    func bus(confirm: String...) throws -> (bus: SecretServiceBus, log: URL, scripts: TemporaryDirectory) {
        let scripts = TemporaryDirectory(prefix: "fob-consent-pinentry")
        let log = scripts.file("pinentry.log")
        let pinentry = scripts.file("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            set -- \(confirm.map { "'\($0)'" }.joined(separator: " "))
            while read -r line; do
              echo "$line" >> '\(log.path)'
              case "$line" in
                CONFIRM) echo "$1"; [ $# -gt 1 ] && shift;;
                BYE) echo OK; exit 0;;
                *) echo OK;;
              esac
            done
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: pinentry))
        chmod(pinentry, 0o755)
        let bus = try SecretServiceBus(agentEnvironment: ["FOB_PINENTRY": pinentry]) { (agent: AgentFixture) throws in
            #expect(try agent.run(["access", "default", "ask"], password: true).status == 0)
            #expect(try agent.run(["add", "mail", "ana"], input: "pw-of-ana\n", password: true).status == 0)
        }
        try bus.install()
        return (bus, log, scripts)
    }

    func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    /// The questions asked: each begins with the dialog whose OK allows until
    /// lock (an answer behind "Other answers…" takes a second dialog).
    func questions(_ url: URL) -> Int {
        text(url).components(separatedBy: "\n").filter { $0 == "SETOK Allow until lock" }.count
    }

    /// A pinentry answer that presses the third button: "Other answers…"
    /// in the first dialog, "Allow for longer…" in the second.
    static let thirdButton = "ERR 83886194 Not confirmed <Pinentry>"
    /// A pinentry answer that presses Cancel: "Deny".
    static let cancel = "ERR 83886179 Operation cancelled <Pinentry>"

    @Test(.enabled(if: toolsPresent)) func secretToolAllowedUntilLockIsAskedOnceAndNamed() throws {
        let (bus, log, scripts) = try bus(confirm: "OK")
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run(
            """
            setsid -w secret-tool lookup service mail account ana; echo " first=$?"
            setsid -w secret-tool lookup service mail account ana; echo " second=$?"
            """)
        let out = result.stdoutText
        #expect(out.contains("pw-of-ana first=0"), "\(out) \(result.stderrText) \(text(log))")
        #expect(out.contains("pw-of-ana second=0"))
        // "Allow until lock" covers the listing, the secret and the next run.
        #expect(questions(log) == 1, "\(text(log))")
        let description = text(log).components(separatedBy: "\n").first { $0.hasPrefix("SETDESC ") } ?? ""
        #expect(description.contains("SETDESC secret-tool (pid "), "\(description)")
        #expect(description.contains("through Secret Service."))
        #expect(description.contains("service \"mail\", account \"ana\""))
        #expect(!description.contains("fob-secret-service (pid"))
        #expect(text(log).contains("SETOK Allow until lock"))
        #expect(text(log).contains("SETNOTOK Other answers…"))
        #expect(text(log).contains("SETCANCEL Deny"))
        // A lock ends the lease: asked again.
        #expect(try bus.agent.run(["lock"]).status == 0)
        #expect(try bus.agent.unlock().status == 0)
        let again = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \" third=$?\"")
        #expect(again.stdoutText.contains("pw-of-ana third=0"))
        #expect(questions(log) == 2)
    }

    /// `secret-tool lookup` searches (the attributes, not secret), then reads
    /// the secret: one read, one question. Before, the search read every
    /// attribute through the rules and "allow once" was asked twice.
    @Test(.enabled(if: toolsPresent)) func secretToolAllowedOnceIsOneQuestionAndTheNextLookupAsksAgain() throws {
        let (bus, log, scripts) = try bus(confirm: SecretServiceConsentTests.thirdButton, "OK")
        defer { withExtendedLifetime(scripts) {} }
        let first = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \" first=$?\"")
        #expect(first.stdoutText.contains("pw-of-ana first=0"), "\(first.stdoutText) \(first.stderrText)")
        #expect(questions(log) == 1, "\(text(log))")
        #expect(text(log).contains("SETOK Allow once"))
        let second = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \" second=$?\"")
        #expect(second.stdoutText.contains("pw-of-ana second=0"))
        #expect(questions(log) == 2, "\(text(log))")
    }

    /// "Allow for 15 minutes", the third dialog's OK: the lease the terminal
    /// channels give, kept by the agent (the next lookup is not asked) and
    /// recorded as a lease in the access log.
    @Test(.enabled(if: toolsPresent)) func secretToolAllowedForMinutesIsALease() throws {
        let third = SecretServiceConsentTests.thirdButton
        let (bus, log, scripts) = try bus(confirm: third, third, "OK")
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run(
            """
            setsid -w secret-tool lookup service mail account ana; echo " first=$?"
            setsid -w secret-tool lookup service mail account ana; echo " second=$?"
            """)
        #expect(result.stdoutText.contains("pw-of-ana first=0"), "\(result.stdoutText) \(result.stderrText)")
        #expect(result.stdoutText.contains("pw-of-ana second=0"))
        #expect(questions(log) == 1, "\(text(log))")
        #expect(text(log).contains("SETOK Allow for 15 minutes"))
        let entries = try bus.agent.run(["log", "--json", "--item", "mail", "ana"])
        let listed = (try? JSONSerialization.jsonObject(with: Data(entries.stdout)) as? [[String: Any]]) ?? []
        let kinds = listed.map { "\($0["event"] ?? "") \($0["decision"] ?? "-")" }
        #expect(kinds.contains("lease allowed-lease"), "\(kinds)")
        #expect(kinds.filter { $0 == "read allowed-lease" }.count == 2, "\(kinds)")
    }

    /// Deny: the D-Bus call fails with `org.freedesktop.DBus.Error.AccessDenied`
    /// naming the refusal; secret-tool prints it on stderr, nothing on stdout.
    @Test(.enabled(if: toolsPresent)) func secretToolDeniedPrintsNothing() throws {
        let (bus, log, scripts) = try bus(confirm: SecretServiceConsentTests.cancel)
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \"status=$?\"")
        #expect(result.stdoutText == "status=1\n", "\(result.stdoutText) \(result.stderrText)")
        #expect(
            result.stderrText.contains(
                "access denied: secret-tool may not read service \"mail\", account \"ana\": the user refused"),
            "\(result.stderrText)")
        #expect(questions(log) == 1, "\(text(log))")
        #expect(text(log).contains("SETDESC secret-tool (pid "))
    }

    @Test(.enabled(if: toolsPresent)) func noPinentryIsInteractionNotAllowed() throws {
        let bus = try SecretServiceBus(agentEnvironment: ["FOB_PINENTRY": "/nonexistent/pinentry"]) {
            (agent: AgentFixture) throws in
            #expect(try agent.run(["access", "default", "ask"], password: true).status == 0)
            #expect(try agent.run(["add", "mail", "ana"], input: "pw-of-ana\n", password: true).status == 0)
        }
        try bus.install()
        let result = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \"status=$?\"")
        #expect(result.stdoutText == "status=1\n", "\(result.stdoutText) \(result.stderrText)")
        // The refusal names why: consent was needed and no one could be asked.
        #expect(
            result.stderrText.contains(
                "consent needed for service \"mail\", account \"ana\": the vault's default rule is 'ask'"),
            "\(result.stderrText)")
    }

    @Test(.enabled(if: toolsPresent)) func pythonKeyringIsNamedAndAskedThroughPinentry() throws {
        let (bus, log, scripts) = try bus(confirm: "OK")
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run(
            """
            setsid -w /usr/bin/python3 -c 'import keyring; print("got", keyring.get_password("mail", "ana"))'
            """)
        #expect(result.stdoutText.contains("got pw-of-ana"), "\(result.stdoutText) \(result.stderrText)")
        #expect(questions(log) == 1)
        #expect(text(log).contains("SETDESC python3"), "\(text(log))")
    }

    @Test(.enabled(if: toolsPresent)) func pythonKeyringDeniedGetsAccessDenied() throws {
        let (bus, log, scripts) = try bus(confirm: SecretServiceConsentTests.cancel)
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run(
            """
            setsid -w /usr/bin/python3 -c '
            import keyring
            try:
                print("got", keyring.get_password("mail", "ana"))
            except Exception as error:
                print("refused", type(error).__name__, error.name)
            '
            """)
        #expect(!result.stdoutText.contains("pw-of-ana"), "\(result.stdoutText)")
        #expect(
            result.stdoutText == "refused DBusErrorResponse org.freedesktop.DBus.Error.AccessDenied\n",
            "\(result.stdoutText) \(result.stderrText)")
        #expect(questions(log) == 1, "\(text(log))")
        #expect(text(log).contains("SETDESC python3"))
    }

    /// secretstorage, as applications use it: search by attributes, then
    /// `get_secret`. Allow once: one question, the secret; the next read asks again.
    static let secretstorageRead = """
        setsid -w /usr/bin/python3 -c '
        import secretstorage
        bus = secretstorage.dbus_init()
        collection = secretstorage.get_default_collection(bus)
        try:
            for item in collection.search_items({"service": "mail", "username": "ana"}):
                print("got", item.get_secret().decode())
        except Exception as error:
            print("refused", type(error).__name__, error.name)
        '
        """

    @Test(.enabled(if: toolsPresent)) func pythonSecretstorageAllowedOnceIsOneQuestion() throws {
        let (bus, log, scripts) = try bus(confirm: SecretServiceConsentTests.thirdButton, "OK")
        defer { withExtendedLifetime(scripts) {} }
        let first = try bus.run(SecretServiceConsentTests.secretstorageRead)
        #expect(first.stdoutText == "got pw-of-ana\n", "\(first.stdoutText) \(first.stderrText)")
        #expect(questions(log) == 1, "\(text(log))")
        #expect(text(log).contains("SETDESC python3"))
        let second = try bus.run(SecretServiceConsentTests.secretstorageRead)
        #expect(second.stdoutText == "got pw-of-ana\n")
        #expect(questions(log) == 2, "\(text(log))")
    }

    @Test(.enabled(if: toolsPresent)) func pythonSecretstorageDeniedGetsAccessDenied() throws {
        let (bus, log, scripts) = try bus(confirm: SecretServiceConsentTests.cancel)
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run(SecretServiceConsentTests.secretstorageRead)
        #expect(
            result.stdoutText == "refused DBusErrorResponse org.freedesktop.DBus.Error.AccessDenied\n",
            "\(result.stdoutText) \(result.stderrText)")
        #expect(questions(log) == 1, "\(text(log))")
    }
}
