import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobSystem

/// Fob's own files (the vault's lock file, the clipboard clearer's state
/// file) never follow a symbolic link, never open a FIFO or device, and are 0600.
@Suite struct PrivateFileTests {
    @Test func createsARegularFileWithMode0600() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("state").path
        let old = umask(0)
        defer { umask(old) }
        let fd = try PrivateFile.open(path)
        defer { close(fd) }
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o600)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func refusesASymbolicLinkAndLeavesItsTargetAlone() throws {
        let directory = TemporaryDirectory()
        let victim = directory.file("victim").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o644)
        let link = directory.file("state").path
        #expect(symlink(victim, link) == 0)
        #expect(throws: PrivateFile.OpenError(code: ELOOP, path: link)) { try PrivateFile.open(link, truncate: true) }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
        var info = stat()
        #expect(stat(victim, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o644)
    }

    @Test func refusesAFIFOWithoutBlocking() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("fifo").path
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: PrivateFile.OpenError(code: EINVAL, path: path)) { try PrivateFile.open(path) }
    }

    @Test func truncatesOnlyWhenAsked() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("state").path
        try Data("12345\n".utf8).write(to: URL(fileURLWithPath: path))
        close(try PrivateFile.open(path))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "12345\n")
        close(try PrivateFile.open(path, truncate: true))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "")
    }
}
