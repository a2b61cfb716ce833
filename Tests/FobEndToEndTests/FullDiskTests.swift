import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// A full disk with no agent: every item can still be read, as on a
/// read-only file system (a 1 MiB tmpfs, filled; needs root to mount).
@Suite(.serialized) struct FullDiskTests {
    @Test func getLsAndExportReadAVaultOnAFullDisk() throws {
        let directory = TemporaryDirectory(prefix: "fob-full")
        let disk = directory.file("disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try ChildProcess.run(
            executable: "/bin/mount", arguments: ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk],
            environment: FobProcess.baseEnvironment, stdin: [], timeout: 30)
        guard mounted.status == 0 else {
            print("FullDiskTests skipped: cannot mount a tmpfs here (\(mounted.stderrText))")
            return
        }
        defer {
            _ = try? ChildProcess.run(
                executable: "/bin/umount", arguments: [disk], environment: FobProcess.baseEnvironment, stdin: [],
                timeout: 30)
        }
        let password = directory.file("password").path
        try Data("correct horse\n".utf8).write(to: URL(fileURLWithPath: password))
        let environment = [
            "FOB_VAULT": disk + "/vault.db", "FOB_PASSWORD_FILE": password, "FOB_AGENT": "0",
            "HOME": directory.url.path, "XDG_STATE_HOME": directory.file("state").path,
        ]
        #expect(try FobProcess.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        #expect(try FobProcess.run(["add", "mail", "ana"], environment: environment, input: "s1\n").status == 0)
        // Fill the disk, and leave no -wal or -shm: opening must make them.
        let fill = try ChildProcess.run(
            executable: "/bin/sh", arguments: ["-c", "dd if=/dev/zero of='\(disk)/fill' bs=4k 2>/dev/null; true"],
            environment: FobProcess.baseEnvironment, stdin: [], timeout: 30)
        #expect(fill.status == 0)
        for suffix in ["-wal", "-shm"] { unlink(disk + "/vault.db" + suffix) }
        let get = try FobProcess.run(["get", "mail", "ana"], environment: environment)
        #expect(get.status == 0, "\(get.stderrText)")
        #expect(get.stdoutText == "s1\n")
        let list = try FobProcess.run(["ls"], environment: environment)
        #expect(list.status == 0 && list.stdoutText.contains("mail"), "\(list.stderrText)")
        let export = try FobProcess.run(
            ["export", "--format", "csv", "--output", directory.file("out.csv").path, "--force"],
            environment: environment)
        #expect(export.status == 0, "\(export.stderrText)")
        #expect(try String(contentsOfFile: directory.file("out.csv").path, encoding: .utf8).contains("s1"))
        let add = try FobProcess.run(["add", "web", "bo"], environment: environment, input: "x\n")
        #expect(add.status == 1, "a write still fails, saying why")
    }
}
