import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Who owns the bus name `org.freedesktop.secrets`: a taken name, its
/// replacement, the activation file, and git's libsecret helper through
/// the provider.
@Suite(.serialized) struct SecretServiceNameTests {
    static let toolsPresent = SecretServiceTests.toolsPresent

    @Test(.enabled(if: toolsPresent)) func aNameAlreadyTakenIsReportedWithItsOwner() throws {
        let bus = try SecretServiceBus()
        let result = try bus.run(
            """
            "$FOB" secret-service 2>/dev/null &
            first=$!
            i=0
            until busctl --user status org.freedesktop.secrets >/dev/null 2>&1; do
              i=$((i+1)); [ $i -gt 200 ] && break; sleep 0.05
            done
            start=$(date +%s%N)
            "$FOB" secret-service; echo "status=$?"
            end=$(date +%s%N)
            echo "ms=$(( (end - start) / 1000000 ))"
            echo "first=$first"
            kill $first
            """)
        let out = result.stdoutText
        let err = result.stderrText
        #expect(out.contains("status=1"), "\(out) \(err)")
        guard let first = out.split(separator: "\n").first(where: { $0.hasPrefix("first=") })?.dropFirst(6) else {
            Issue.record("no pid: \(out)")
            return
        }
        #expect(err.contains("org.freedesktop.secrets is already provided by pid \(first) ("), "\(err)")
        #expect(err.contains("fob-secret-service)"))
        let ms = out.split(separator: "\n").first { $0.hasPrefix("ms=") }.flatMap { Int($0.dropFirst(3)) } ?? 99_999
        #expect(ms < 1000, "took \(ms) ms")
    }

    @Test(.enabled(if: toolsPresent)) func replaceTakesTheNameAndTheOldProviderStops() throws {
        let bus = try SecretServiceBus()
        #expect(try bus.agent.run(["add", "mail", "ana"], input: "pw-of-ana\n").status == 0)
        let result = try bus.run(
            """
            "$FOB" secret-service 2>"$HOME/first.err" &
            first=$!
            i=0
            until busctl --user status org.freedesktop.secrets >/dev/null 2>&1; do
              i=$((i+1)); [ $i -gt 200 ] && break; sleep 0.05
            done
            "$FOB" secret-service --replace 2>/dev/null &
            second=$!
            wait $first; echo "first=$?"
            secret-tool lookup service mail account ana; echo " lookup=$?"
            busctl --user status org.freedesktop.secrets | grep -c "^PID=$second$"
            kill $second
            cat "$HOME/first.err"
            """)
        let out = result.stdoutText
        #expect(out.contains("first=0"), "\(out) \(result.stderrText)")
        #expect(out.contains("pw-of-ana lookup=0"))
        #expect(out.contains("\n1\n"), "the second provider owns the name")
        #expect(out.contains("another provider took org.freedesktop.secrets; stopping"))
    }

    @Test(.enabled(if: toolsPresent)) func replaceSaysWhenTheOwnerRefusesReplacement() throws {
        let bus = try SecretServiceBus()
        // An owner that, like gnome-keyring, takes the name without allowing replacement.
        let result = try bus.run(
            """
            /usr/bin/python3 -c '
            import sys, time
            from jeepney import DBus, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            conn = open_dbus_connection(bus="SESSION")
            conn.send_and_get_reply(DBus().RequestName("org.freedesktop.secrets", 0))
            print("owned", flush=True)
            time.sleep(30)
            ' > "$HOME/owner.out" &
            owner=$!
            i=0
            until grep -q owned "$HOME/owner.out"; do i=$((i+1)); [ $i -gt 200 ] && break; sleep 0.05; done
            "$FOB" secret-service --replace; echo "status=$?"
            kill $owner
            """)
        #expect(result.stdoutText.contains("status=1"), "\(result.stdoutText) \(result.stderrText)")
        #expect(result.stderrText.contains("which does not allow replacement; stop it first"), "\(result.stderrText)")
    }

    static let gitHelperSource = "/usr/share/doc/git/contrib/credential/libsecret"

    @Test(
        .enabled(
            if: toolsPresent && FileManager.default.fileExists(atPath: gitHelperSource + "/Makefile")
                && FileManager.default.fileExists(atPath: "/usr/include/libsecret-1/libsecret/secret.h"))
    )
    func gitsLibsecretCredentialHelperStoresAndFills() throws {
        let bus = try SecretServiceBus()
        try bus.install()
        let build = bus.directory.file("git-libsecret").path
        let make = try ChildProcess.run(
            executable: "/bin/sh",
            arguments: ["-c", "cp -r \(Self.gitHelperSource)/. '\(build)' && make -s -C '\(build)'"],
            environment: FobProcess.baseEnvironment, stdin: [], timeout: 300)
        #expect(make.status == 0, "\(make.stderrText)")
        let helper = build + "/git-credential-libsecret"
        let result = try bus.run(
            """
            export GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
            git() { /usr/bin/git -c credential.helper= -c "credential.helper=\(helper)" "$@"; }
            printf 'protocol=https\\nhost=example.com\\nusername=ana\\npassword=s3cret\\n\\n' | git credential approve
            echo "approve=$?"
            printf 'protocol=https\\nhost=example.com\\n\\n' | git credential fill; echo "fill=$?"
            """)
        let out = result.stdoutText
        #expect(out.contains("approve=0"), "\(out) \(result.stderrText)")
        #expect(out.contains("protocol=https\nhost=example.com\nusername=ana\npassword=s3cret\n"))
        #expect(out.contains("fill=0"))
        // The credential is a vault item, listed by `fob ls` (never with its secret).
        let list = try bus.agent.run(["ls"]).stdoutText
        #expect(list.contains("ana"), "\(list)")
        #expect(!list.contains("s3cret"))
    }

    @Test func installWritesAndUninstallRemovesExactlyTheActivationFile() throws {
        let bus = try SecretServiceBus()
        let file = bus.serviceDirectory + "/org.freedesktop.secrets.service"
        try bus.install()
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("Name=org.freedesktop.secrets\n"))
        #expect(text.contains("Exec='\(FobProcess.binaryURL.path)' secret-service --vault '\(bus.agent.vault.path)'"))
        try Data("keep".utf8).write(to: URL(fileURLWithPath: bus.serviceDirectory + "/other.service"))
        let removed = try FobProcess.run(["secret-service", "uninstall"], environment: bus.environment)
        #expect(removed.status == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(FileManager.default.fileExists(atPath: bus.serviceDirectory + "/other.service"))
        // A file fob did not write is neither replaced nor removed.
        try Data("[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/usr/bin/gnome-keyring-daemon\n".utf8).write(
            to: URL(fileURLWithPath: file))
        #expect(try FobProcess.run(["secret-service", "install"], environment: bus.environment).status == 1)
        #expect(try FobProcess.run(["secret-service", "uninstall"], environment: bus.environment).status == 1)
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("gnome-keyring"))
    }
}
