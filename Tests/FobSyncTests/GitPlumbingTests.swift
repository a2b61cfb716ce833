import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// The tree is written and merged through git's objects alone: commits
/// with `git fast-import`, merges of trees in a private index, nothing
/// checked out.
@Suite struct GitPlumbingTests {
    /// A new repository in `lab` and a ``Git`` for it.
    static func repository(_ lab: SyncLab) throws -> Git {
        let path = lab.directory.url.path + "/repo"
        try lab.git(["init", "-q", "-b", "main", path])
        var environment = lab.gitEnvironment
        environment["PATH"] = "/usr/bin:/bin"
        return try Git(directory: path, environment: environment, messages: { _ in })
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// `path blob-contents` of every file of `commit`.
    static func files(_ git: Git, _ commit: String) throws -> [String] {
        try git.files(of: commit).map { "\($0.key) \(String(decoding: $0.value, as: UTF8.self))" }.sorted()
    }

    @Test func aCommitWritesAndRemovesFilesWithoutAWorkTree() throws {
        let lab = try SyncLab()
        let git = try Self.repository(lab)
        let first = try git.commit(
            writes: ["items/aa/x/d.1.rec": Self.bytes("one"), "devices/d.head": Self.bytes("h1")], removals: [],
            parent: nil, message: "first")
        #expect(try git.resolve("HEAD") == first)
        let second = try git.commit(
            writes: ["items/bb/y/d.2.rec": Self.bytes("two"), "devices/d.head": Self.bytes("h2")],
            removals: ["items/aa/x/d.1.rec", "items/never/there"], parent: first, message: "second")
        #expect(try git.resolve("HEAD") == second)
        #expect(try Self.files(git, second) == ["devices/d.head h2", "items/bb/y/d.2.rec two"])
        #expect(try git.file("items/bb/y/d.2.rec") == Self.bytes("two"))
        #expect(try git.file("items/aa/x/d.1.rec") == nil)
        #expect(try git.contains(first, head: second))
        // Nothing is checked out, and git's own view agrees with the commit.
        #expect(try FileManager.default.contentsOfDirectory(atPath: git.directory) == [".git"])
        #expect(try lab.git(["log", "--format=%s", "main"], in: git.directory) == "second\nfirst\n")
    }

    @Test func aPathTheStreamCannotCarryIsRefused() throws {
        let lab = try SyncLab()
        let git = try Self.repository(lab)
        #expect(throws: SyncError.git("git fast-import: cannot carry the path a\nM 100644 inline b")) {
            try git.commit(writes: ["a\nM 100644 inline b": [1]], removals: [], parent: nil, message: "bad")
        }
        #expect(try git.resolve("HEAD") == nil)
    }

    @Test func aMergeTakesEachSidesChangesAndFastForwardsWhenItCan() throws {
        let lab = try SyncLab()
        let git = try Self.repository(lab)
        let base = try git.commit(
            writes: ["items/0/old/a.1.rec": Self.bytes("old"), "devices/a.head": Self.bytes("a1")], removals: [],
            parent: nil, message: "base")
        let ours = try git.commit(
            writes: ["items/1/new/a.2.rec": Self.bytes("ours"), "devices/a.head": Self.bytes("a2")],
            removals: ["items/0/old/a.1.rec"], parent: base, message: "ours")
        try git.moveBranch(to: base)
        let theirs = try git.commit(
            writes: ["items/2/other/b.1.rec": Self.bytes("theirs"), "devices/b.head": Self.bytes("b1")], removals: [],
            parent: base, message: "theirs")
        let merged = try git.merge(ours, into: theirs)
        #expect(try git.resolve("HEAD") == merged)
        #expect(
            try Self.files(git, merged) == [
                "devices/a.head a2", "devices/b.head b1", "items/1/new/a.2.rec ours", "items/2/other/b.1.rec theirs",
            ])
        #expect(
            try lab.git(["log", "-1", "--format=%P", merged], in: git.directory) == "\(theirs) \(ours)\n")
        // A commit the branch holds already changes nothing; one ahead of it is taken as it is.
        #expect(try git.merge(base, into: merged) == merged)
        try git.moveBranch(to: base)
        #expect(try git.merge(ours, into: base) == ours)
        #expect(try git.resolve("HEAD") == ours)
    }

    @Test func aPathBothSidesChangedFailsAndLeavesTheBranch() throws {
        let lab = try SyncLab()
        let git = try Self.repository(lab)
        let base = try git.commit(
            writes: ["devices/a.head": Self.bytes("a1")], removals: [], parent: nil, message: "base")
        let ours = try git.commit(
            writes: ["devices/a.head": Self.bytes("a2")], removals: [], parent: base, message: "ours")
        try git.moveBranch(to: base)
        let theirs = try git.commit(
            writes: ["devices/a.head": Self.bytes("forged")], removals: [], parent: base, message: "theirs")
        let error = #expect(throws: SyncError.self) { try git.merge(ours, into: theirs) }
        guard case .git(let why)? = error else {
            Issue.record("not a git failure: \(String(describing: error))")
            return
        }
        #expect(why.hasPrefix("git merge: the trees conflict"), "\(why)")
        #expect(try git.resolve("HEAD") == theirs)
        #expect(!FileManager.default.fileExists(atPath: git.directory + "/.git/fob-merge-index"))
    }

    /// A sync checks nothing out, and a tree an older Fob checked out
    /// (files and index) is emptied by the next sync, which goes on as usual.
    @Test func aSyncLeavesOnlyTheRepositoryInTheTreeDirectory() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        #expect(try FileManager.default.contentsOfDirectory(atPath: a.tree) == [".git"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: b.tree) == [".git"])
        try lab.git(["reset", "-q", "--hard", "HEAD"], in: a.tree)
        #expect(FileManager.default.fileExists(atPath: a.tree + "/devices"))
        try a.ok(["update", "mail", "ana"], input: "checked out\n")
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: a.tree) == [".git"])
        #expect(!FileManager.default.fileExists(atPath: a.tree + "/.git/index"))
        #expect(try b.sync() == "merged 1, conflicts 0\n")
        #expect(try b.secret("mail", "ana") == "checked out")
    }
}
