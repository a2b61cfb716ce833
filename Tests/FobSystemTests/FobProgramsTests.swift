import FobSystem
import Foundation
import Glibc
import Testing

/// Which peers are Fob's own programs, with real processes: a `fob` an
/// upgrade put at the agent's path after the agent started, a helper still
/// running a file an upgrade replaced, and a program that only shows Fob's
/// path (another file bind-mounted there in a mount namespace of its own).
/// The "program" is a copy of Python that connects to a socket, so each
/// copy is a file of its own.
@Suite(.serialized) struct FobProgramsTests {
    let directory: String
    /// Python's own file (`/usr/bin/python3` is a link to it).
    let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("fob-programs-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A fresh copy of Python at `path` (written beside it, then renamed
    /// over it, as a package manager replaces a file: a new inode).
    func install(_ path: String) throws {
        let staged = path + ".new"
        try? FileManager.default.removeItem(atPath: staged)
        try FileManager.default.copyItem(atPath: python, toPath: staged)
        #expect(rename(staged, path) == 0)
    }

    /// Runs `argv` (the program connects to `socket` and waits), accepts its
    /// connection and names the peer as the agent does; the child is ended after.
    /// - Parameters:
    ///   - fob: the agent's view of Fob's programs, made after `beforeNaming`
    ///     (an agent that starts then).
    ///   - beforeNaming: runs between the accept and the naming.
    func peer(
        _ argv: [String], fob: @autoclosure () -> FobPrograms, beforeNaming: () throws -> Void = {}
    ) throws -> (
        requester: Requester, child: pid_t
    ) {
        let path = directory + "/s\(UUID().uuidString.prefix(6))"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0 && listen(listener, 1) == 0)
        let script = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(1)"
        let args: [UnsafeMutablePointer<CChar>?] = (argv + ["-c", script, path]).map { strdup($0) } + [nil]
        defer { args.forEach { free($0) } }
        var child: pid_t = 0
        #expect(posix_spawn(&child, argv[0], nil, nil, args, environ) == 0)
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 15_000) == 1 else {
            kill(child, SIGKILL)
            throw POSIXError(.ETIMEDOUT)
        }
        let connection = accept(listener, nil, nil)
        defer { close(connection) }
        try beforeNaming()
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        return (try ProcessInspector.requester(onSocket: connection, fob: fob()), child)
    }

    /// The agent started from `fob`; an upgrade then replaced that file.
    /// The terminal UI started afterwards runs the new file at the same
    /// path: it is Fob, and its request is made for the program that ran it
    /// (this test), not taken for a foreign program's.
    @Test func aFobInstalledAfterTheAgentStartedIsStillFob() throws {
        let fob = directory + "/fob"
        try install(fob)
        let programs = FobPrograms(executable: fob)
        try install(fob)
        #expect(ProcessInspector.identity(ofFile: fob)?.inode != programs.own.identity?.inode)
        let (requester, child) = try peer([fob], fob: programs)
        #expect(requester.via?.pid == child)
        #expect(requester.via?.executable == fob)
        #expect(requester.pid == getpid())
    }

    /// A helper started before an upgrade keeps running the file the
    /// upgrade replaced (`/proc/PID/exe` then ends in ` (deleted)`): still Fob.
    @Test func aHelperStillRunningAReplacedFileIsStillFob() throws {
        let fob = directory + "/fob"
        let helper = directory + "/fob-secret-service"
        try install(fob)
        try install(helper)
        let programs = FobPrograms(executable: fob)
        let (requester, child) = try peer([helper], fob: programs) { try install(helper) }
        #expect(requester.via?.pid == child)
        #expect(requester.via?.executable == helper + " (deleted)")
        #expect(programs.isSecretServiceProvider(requester.via?.executable ?? ""))
    }

    /// A terminal UI started before an upgrade replaced `fob`, named by an
    /// agent started after it (restarted by the upgrade), which never saw
    /// the file the UI runs: still Fob, as the file was at Fob's path in the
    /// agent's mount namespace when the UI started.
    @Test func aFobStartedBeforeAnUpgradeIsFobToAnAgentStartedAfter() throws {
        let fob = directory + "/fob"
        try install(fob)
        let (requester, child) = try peer([fob], fob: FobPrograms(executable: fob)) { try install(fob) }
        #expect(requester.via?.pid == child)
        #expect(requester.via?.executable == fob + " (deleted)")
        #expect(requester.pid == getpid())
    }

    /// Not Fob after a restart either: a file that only showed Fob's path
    /// (bind-mounted over it in a mount namespace of its own) and was then
    /// removed shows `fob (deleted)` too; and a removed file at Fob's path
    /// that keeps another name (a link elsewhere) is not one an upgrade removed.
    @Test func aRemovedFileThatOnlyShowedFobsPathIsNotFob() throws {
        let fob = directory + "/fob"
        let other = directory + "/other"
        try install(fob)
        try install(other)
        let mounted = try peer(
            ["/usr/bin/unshare", "-m", "sh", "-c", "mount --bind \(other) \(fob) && exec \(fob) \"$@\"", "sh"],
            fob: FobPrograms(executable: fob)
        ) { #expect(unlink(other) == 0) }
        #expect(mounted.requester.executable == fob + " (deleted)")
        #expect(mounted.requester.pid == mounted.child)
        #expect(mounted.requester.via == nil)
        let kept = directory + "/kept"
        let linked = try peer([fob], fob: FobPrograms(executable: fob)) {
            #expect(link(fob, kept) == 0)
            try install(fob)
        }
        #expect(linked.requester.executable == fob + " (deleted)")
        #expect(linked.requester.via == nil)
    }

    /// The agent's own file as it was at start counts only while unchanged:
    /// once removed, its inode number may be given to another file, which
    /// then shows the same device and inode but not the same size and time.
    @Test func anInodeNumberReusedByAnotherFileIsNotFob() throws {
        let fob = directory + "/fob"
        try install(fob)
        let programs = FobPrograms(executable: fob)
        let own = try #require(programs.own.identity)
        let elsewhere = directory + "/elsewhere"
        #expect(programs.contains(elsewhere, identity: own))
        var reused = own
        reused.size += 1
        #expect(!programs.contains(elsewhere, identity: reused))
        reused = own
        reused.modifiedNanoseconds += 1
        #expect(!programs.contains(elsewhere, identity: reused))
    }

    /// Not Fob: the same bytes at another path, and another file that a
    /// mount namespace of its own shows at Fob's path (so `/proc/PID/exe`
    /// names Fob's path) or at a helper's.
    @Test func aProgramThatOnlyShowsFobsPathIsNotFob() throws {
        let fob = directory + "/fob"
        let helper = directory + "/fob-secret-service"
        let other = directory + "/other"
        try install(fob)
        try install(helper)
        try install(other)
        let programs = FobPrograms(executable: fob)
        let copy = try peer([other], fob: programs)
        #expect(copy.requester.pid == copy.child)
        #expect(copy.requester.via == nil)
        for target in [fob, helper] {
            let mounted = try peer(
                [
                    "/usr/bin/unshare", "-m", "sh", "-c", "mount --bind \(other) \(target) && exec \(target) \"$@\"",
                    "sh",
                ],
                fob: programs)
            #expect(mounted.requester.executable == target, "the namespace shows its file at \(target)")
            #expect(mounted.requester.pid == mounted.child)
            #expect(mounted.requester.via == nil)
        }
    }
}
