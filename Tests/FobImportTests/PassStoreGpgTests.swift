import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobImport

/// `fob import pass` runs the user's `gpg` once an entry; these stand a
/// small script in for it, first on `PATH`.
@Suite struct PassStoreGpgTests {
    let directory = TemporaryDirectory(prefix: "fob-pass")
    var store: String { directory.file("store").path }
    var environment: [String: String] { ["PATH": directory.file("bin").path + ":/usr/bin:/bin"] }

    /// A store with one entry, `web/x.example.gpg` holding `content`, and
    /// `gpg` the shell script `body`.
    func make(entry content: String, gpg body: String) throws {
        try FileManager.default.createDirectory(
            at: directory.file("store/web"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.file("bin"), withIntermediateDirectories: true)
        try Data(content.utf8).write(to: directory.file("store/web/x.example.gpg"))
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: directory.file("bin/gpg"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.file("bin/gpg").path)
    }

    /// The entry file reaches gpg on its standard input and the plaintext
    /// comes back from its standard output.
    @Test func theEntryIsDecryptedThroughGpgsStandardStreams() throws {
        try make(entry: "s3cret\nuser: ana\n", gpg: "exec cat")
        let read = try PassStore.read(directory: store, environment: environment)
        #expect(read.entries.map(\.item.service) == ["web/x.example"])
        #expect(read.entries.first?.item.account == "ana")
        #expect(read.entries.first?.item.secret?.unsafeString == "s3cret")
    }

    /// A gpg that never finishes (waiting on a passphrase nobody types)
    /// once hung the import for ever; it is now stopped at the deadline.
    @Test func aGpgThatNeverFinishesIsStoppedAtTheDeadline() throws {
        try make(entry: "x", gpg: "exec sleep 60")
        let started = FileDescriptorIO.monotonicNow()
        #expect(
            throws: ImportError.io("gpg could not decrypt \(store)/web/x.example.gpg: did not finish within 0.5 s")
        ) {
            try PassStore.read(directory: store, environment: environment, timeout: 0.5)
        }
        #expect(FileDescriptorIO.monotonicNow() - started < 10)
    }

    /// More plaintext than an item can hold is refused, not cut short.
    @Test func plaintextLargerThanAnItemIsRefusedNotTruncated() throws {
        try make(entry: "x", gpg: "exec head -c 3000000 /dev/zero")
        let limit = Item.maxSecretBytes + Item.maxNotesBytes
        #expect(
            throws: ImportError.io(
                "gpg could not decrypt \(store)/web/x.example.gpg: printed more than \(limit) bytes")
        ) {
            try PassStore.read(directory: store, environment: environment)
        }
    }

    @Test func aFailingGpgIsNamedWithItsStatusAndFirstMessage() throws {
        try make(entry: "x", gpg: "echo 'gpg: decryption failed: No secret key' >&2; echo more >&2; exit 2")
        #expect(
            throws: ImportError.io(
                "gpg could not decrypt \(store)/web/x.example.gpg (exit 2): gpg: decryption failed: No secret key")
        ) {
            try PassStore.read(directory: store, environment: environment)
        }
    }
}
