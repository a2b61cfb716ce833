import FobSystem
import FobTestSupport
import Foundation
import Glibc
import Testing

@Suite struct RequesterTests {
    @Test func procStatParsesACommWithParenthesesAndSpaces() throws {
        let line = "4242 (a) b (c) S 100 4242 90 34817 4242 4194304 1 2 3 4 5 6 7 8 20 0 1 0 123456 0 0\n"
        let stat = try #require(ProcStat.parse(Array(line.utf8)))
        #expect(stat.comm == "a) b (c")
        #expect(stat.parent == 100)
        #expect(stat.session == 90)
        #expect(stat.terminalDevice == 34817)
        #expect(stat.startTime == 123456)
    }

    @Test func procStatRefusesALineWithoutItsFields() {
        #expect(ProcStat.parse(Array("12 (x) S 1 2".utf8)) == nil)
        #expect(ProcStat.parse(Array("garbage".utf8)) == nil)
        #expect(ProcStat.parse([]) == nil)
    }

    @Test func aPeerOnASocketIsNamedFromTheKernel() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { fds.forEach { close($0) } }
        let requester = try ProcessInspector.requester(
            onSocket: fds[0], fob: FobPrograms(executable: "/nonexistent/fob"))
        #expect(requester.pid == getpid())
        #expect(requester.uid == getuid())
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(requester.executable == exe)
        #expect(requester.identity == ProcessInspector.identity(ofFile: exe))
        #expect(requester.via == nil)
        #expect(!requester.arguments.isEmpty)
        #expect(requester.parents.first?.pid == getppid())
        #expect(requester.workingDirectory == FileManager.default.currentDirectoryPath)
    }

    @Test func fobsOwnPeerStandsForTheProgramThatRanIt() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { fds.forEach { close($0) } }
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let requester = try ProcessInspector.requester(onSocket: fds[0], fob: FobPrograms(executable: exe))
        #expect(requester.pid == getppid())
        #expect(requester.via?.pid == getpid())
        #expect(requester.via?.arguments.isEmpty == false)
    }

    /// A process that leads its own session (a command run with setsid, as
    /// a test harness or a service manager may) still names the program
    /// that started it: without it, Fob's own command stood for itself.
    @Test func aSessionLeaderStillNamesItsParent() throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // 0x80 is glibc's POSIX_SPAWN_SETSID, which Swift does not import.
        posix_spawnattr_setflags(&attributes, Int16(0x80))
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("30"), nil]
        defer { argv.forEach { free($0) } }
        #expect(posix_spawn(&child, "/bin/sleep", nil, &attributes, argv, environ) == 0)
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        let fob = ProcessSummary(pid: 1, executable: "/usr/bin/fob", name: "fob")
        let requester = try ProcessInspector.requester(pid: child, forwardedBy: fob)
        #expect(requester.parents.map(\.pid) == [getpid()])
    }

    @Test func aReplacedFileHasAnotherIdentity() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fob-req-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("sh").path
        try Data("one".utf8).write(to: URL(fileURLWithPath: file))
        let before = try #require(ProcessInspector.identity(ofFile: file))
        try FileManager.default.removeItem(atPath: file)
        try Data("two!".utf8).write(to: URL(fileURLWithPath: file))
        #expect(ProcessInspector.identity(ofFile: file) != before)
    }

    @Test func flatpakInfoAndSystemdUnitsAreRead() {
        let info = "[Instance]\nname=no\n[Application]\nname=org.example.App\nruntime=x\n"
        #expect(ProcessInspector.flatpakAppID(info: Array(info.utf8)) == "org.example.App")
        #expect(ProcessInspector.flatpakAppID(info: Array("[Application]\n".utf8)) == nil)
        #expect(
            ProcessInspector.systemdUnit(inCgroup: "/user.slice/user-0.slice/user@0.service/app.slice/foo.service")
                == "foo.service")
        #expect(ProcessInspector.systemdUnit(inCgroup: "/") == nil)
    }

    /// `/proc/PID/cgroup` on the three layouts systemd mounts: unified
    /// (cgroup v2 only), hybrid (v1 controllers, the path on the `0::` line
    /// too) and legacy (v1 only, as RHEL 8 by default: the `0::` line, when
    /// present, is `/`, and the unit is on the `name=systemd` line).
    @Test func theCgroupIsReadOnEveryLayout() {
        let unit = "/user.slice/user-1000.slice/user@1000.service/app.slice/backup.service"
        let unified = "0::\(unit)\n"
        let hybrid = "4:memory:/user.slice\n1:name=systemd:\(unit)\n0::\(unit)\n"
        let legacy = "9:name=systemd:\(unit)\n4:memory:/user.slice/user-1000.slice\n1:cpu:/\n0::/\n"
        let legacyWithoutUnified = "4:memory:/user.slice\n1:name=systemd:\(unit)\n"
        for file in [unified, hybrid, legacy, legacyWithoutUnified] {
            let path = ProcessInspector.cgroup(procFile: Array(file.utf8))
            #expect(path == unit, "\(file)")
            #expect(ProcessInspector.systemdUnit(inCgroup: path) == "backup.service")
        }
        #expect(ProcessInspector.cgroup(procFile: Array("0::/\n".utf8)) == "/")
        #expect(ProcessInspector.cgroup(procFile: Array("4:memory:/a\n".utf8)) == "")
    }

    /// A process of a systemd system service is strong (only root puts a
    /// process into its cgroup); one of the user's own manager, however its
    /// cgroups are named, or of a login session is not. Each case is a
    /// `/proc/PID/cgroup` of the proc-cgroup fuzz target's corpus, read by
    /// its parser.
    @Test func aSystemServiceIsAStrongIdentityAndAUserUnitIsNot() throws {
        let expected = [
            "colon-in-name": false, "legacy": true, "session-scope": false, "system-name-in-user-manager": false,
            "system-service": true, "unified": false,
        ]
        let inputs = FuzzCorpus.inputs("proc-cgroup")
        #expect(Set(inputs.map(\.name)) == Set(expected.keys))
        for (name, bytes) in inputs {
            let cgroup = ProcessInspector.cgroup(procFile: bytes)
            let requester = Requester(
                pid: 40, uid: 1000, executable: "/home/ana/bin/backup",
                identity: ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 1000),
                cgroup: cgroup, systemdUnit: ProcessInspector.systemdUnit(inCgroup: cgroup))
            #expect(requester.isSystemService == expected[name], "\(name): \(cgroup)")
            #expect(requester.isStrong == expected[name], "\(name): \(cgroup)")
        }
    }

    @Test func theChainIsShortenedForAPrompt() {
        let parents = (1...6).map { ProcessSummary(pid: Int32($0), executable: "/bin/p\($0)", name: "p\($0)") }
        let r = Requester(pid: 9, uid: 0, executable: "/bin/x", identity: nil, parents: parents)
        #expect(r.chain(limit: 2) == "p1[1] ← p2[2] ← …")
    }

    /// git runs a helper with arguments through `sh -c`: that shell only
    /// starts Fob's program, so the program behind it is git. A shell that
    /// runs more than one command, a script or an interactive shell decides
    /// to read a secret itself.
    @Test func aShellThatOnlyStartsOneProgramIsALauncher() {
        let helper = ["/home/ana/bin/git-credential-fob", "get"]
        #expect(ShellLauncher.onlyStarts(helper, shell: ["/bin/sh", "-c", "/home/ana/bin/git-credential-fob get"]))
        #expect(
            ShellLauncher.onlyStarts(["fob", "git-credential", "get"], shell: ["sh", "-c", "fob git-credential get"]))
        #expect(
            ShellLauncher.onlyStarts(
                helper, shell: ["sh", "-c", "/home/ana/bin/git-credential-fob \"$@\"", "x", "get"]))
        #expect(ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["bash", "-ec", "exec fob get a b"]))
        #expect(ShellLauncher.onlyStarts(["fob", "get", "a b"], shell: ["dash", "-c", "X=1 fob get 'a b'"]))
        #expect(ShellLauncher.onlyStarts(["fob", "get"], shell: ["-zsh", "-o", "errexit", "-c", "fob get"]))
        // More than one command, another program, a script, an interactive shell.
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["sh", "-c", "fob get a b; exit $?"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["sh", "-c", "fob get a b | cat"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["sh", "-c", "cat x && fob get a b"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["sh", "-c", "git status"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["sh", "-c", "fob get a c"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["sh", "deploy.sh"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["-bash"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get", "a", "b"], shell: ["sh", "-c"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get"], shell: ["sh", "-c", "'fob get"]))
        #expect(!ShellLauncher.onlyStarts(["fob", "get"], shell: ["python3", "-c", "fob get"]))
        #expect(!ShellLauncher.onlyStarts([], shell: ["sh", "-c", "fob get"]))
    }

    /// A `sh -c` that only runs Fob's command stands for the program that
    /// ran it (here, this test), whichever shell `/bin/sh` is.
    @Test func aLauncherShellIsSkippedForTheProgramThatRanIt() throws {
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("sh"), strdup("-c"), strdup("sleep 30"), nil]
        defer { argv.forEach { free($0) } }
        // dash, which keeps itself the parent of a `-c` command (bash would exec it).
        #expect(posix_spawn(&child, "/bin/dash", nil, nil, argv, environ) == 0)
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        // Wait for dash's child, `sleep 30`, which stands in for Fob's program here.
        var sleeper: Int32 = 0
        for _ in 0..<200 where sleeper == 0 {
            let children = (try? String(contentsOfFile: "/proc/\(child)/task/\(child)/children", encoding: .utf8)) ?? ""
            sleeper = Int32(children.split(separator: " ").first ?? "") ?? 0
            if sleeper == 0 { usleep(10_000) }
        }
        try #require(sleeper > 0)
        let via = ProcessSummary(pid: sleeper, executable: "/usr/bin/fob", name: "fob")
        let shell = try ProcessInspector.requester(pid: child, forwardedBy: via)
        #expect(shell.programName == "dash")
        let named = ProcessInspector.behindLaunchers(shell, started: ["sleep", "30"])
        #expect(named.pid == getpid())
        #expect(named.via?.pid == sleeper)
        // The same shell running a second command is the requester itself.
        #expect(ProcessInspector.behindLaunchers(shell, started: ["sleep", "31"]).pid == child)
    }
}
