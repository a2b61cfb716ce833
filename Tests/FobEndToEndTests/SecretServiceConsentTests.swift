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
    func bus(confirm: String) throws -> (bus: SecretServiceBus, log: URL, scripts: TemporaryDirectory) {
        let scripts = TemporaryDirectory(prefix: "fob-consent-pinentry")
        let log = scripts.file("pinentry.log")
        let pinentry = scripts.file("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            while read -r line; do
              echo "$line" >> '\(log.path)'
              case "$line" in
                CONFIRM) echo '\(confirm)';;
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

    func questions(_ url: URL) -> Int { text(url).components(separatedBy: "\n").filter { $0 == "CONFIRM" }.count }

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

    @Test(.enabled(if: toolsPresent)) func secretToolAllowedOnceIsAskedAgainNextTime() throws {
        let (bus, log, scripts) = try bus(confirm: "ERR 83886194 Not confirmed <Pinentry>")
        defer { withExtendedLifetime(scripts) {} }
        let first = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \" first=$?\"")
        #expect(first.stdoutText.contains("pw-of-ana first=0"), "\(first.stdoutText) \(first.stderrText)")
        let asked = questions(log)
        #expect(asked >= 1)
        _ = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \" second=$?\"")
        #expect(questions(log) > asked, "\(text(log))")
    }

    @Test(.enabled(if: toolsPresent)) func secretToolDeniedPrintsNothing() throws {
        let (bus, log, scripts) = try bus(confirm: "ERR 83886179 Operation cancelled <Pinentry>")
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run("setsid -w secret-tool lookup service mail account ana; echo \"status=$?\"")
        #expect(result.stdoutText == "status=1\n", "\(result.stdoutText) \(result.stderrText)")
        // A denial is not remembered: each request the client makes asks.
        #expect(questions(log) >= 1)
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

    @Test(.enabled(if: toolsPresent)) func pythonKeyringDeniedGetsNoSecret() throws {
        let (bus, log, scripts) = try bus(confirm: "ERR 83886179 Operation cancelled <Pinentry>")
        defer { withExtendedLifetime(scripts) {} }
        let result = try bus.run(
            """
            setsid -w /usr/bin/python3 -c '
            import keyring
            try:
                print("got", keyring.get_password("mail", "ana"))
            except Exception as error:
                print("refused", type(error).__name__)
            '
            """)
        #expect(!result.stdoutText.contains("pw-of-ana"), "\(result.stdoutText)")
        #expect(result.stdoutText.contains("refused") || result.stdoutText.contains("got None"))
        #expect(questions(log) >= 1)
        #expect(text(log).contains("SETDESC python3"))
    }
}
