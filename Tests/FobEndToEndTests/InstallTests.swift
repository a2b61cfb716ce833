import FobTestSupport
import Foundation
import Testing

/// `scripts/install PREFIX` and `scripts/uninstall PREFIX` against a temporary prefix.
@Suite struct InstallTests {
    static func script(_ name: String, _ prefix: String) throws -> ProcessResult {
        try ChildProcess.run(
            executable: FobProcess.packageRoot.appendingPathComponent("scripts/\(name)").path,
            arguments: [prefix],
            environment: FobProcess.baseEnvironment.merging(["FOB_INSTALL_BINARY": FobProcess.binaryURL.path]) { $1 })
    }

    static func files(under root: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(
                atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                continue
            }
            found.append(path)
        }
        return found.sorted()
    }

    @Test func installPutsEverythingInPlaceAndUninstallTakesExactlyThat() throws {
        let root = TemporaryDirectory(prefix: "fob-install")
        let prefix = root.file("prefix")
        // Something of the user's already there stays.
        try FileManager.default.createDirectory(
            at: prefix.appendingPathComponent("bin"), withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: prefix.appendingPathComponent("bin/other"))

        let install = try Self.script("install", prefix.path)
        #expect(install.status == 0, "\(install.stderrText)")
        #expect(
            Self.files(under: prefix) == [
                "bin/docker-credential-fob", "bin/fob", "bin/fob-http", "bin/fob-secret-service", "bin/fob-xml",
                "bin/git-credential-fob",
                "bin/other",
                "share/bash-completion/completions/fob", "share/fish/vendor_completions.d/fob.fish",
                "share/man/man1/fob.1", "share/zsh/site-functions/_fob",
            ])
        let fob = prefix.appendingPathComponent("bin/fob").path
        #expect(FileManager.default.isExecutableFile(atPath: fob))
        for link in ["git-credential-fob", "docker-credential-fob"] {
            #expect(
                try FileManager.default.destinationOfSymbolicLink(
                    atPath: prefix.appendingPathComponent("bin/\(link)").path) == "fob")
        }
        // The links run their helper: a docker `list` on an empty vault.
        let v = try ProcessTestVault()
        let list = try ChildProcess.run(
            executable: prefix.appendingPathComponent("bin/docker-credential-fob").path, arguments: ["list"],
            environment: FobProcess.baseEnvironment.merging(v.environment) { $1 })
        #expect(list.stdoutText == "{}\n")
        let man = try Data(contentsOf: prefix.appendingPathComponent("share/man/man1/fob.1"))
        #expect(man == (try Data(contentsOf: FobProcess.packageRoot.appendingPathComponent("Assets/fob.1"))))
        let bash = try String(
            contentsOf: prefix.appendingPathComponent("share/bash-completion/completions/fob"), encoding: .utf8)
        #expect(bash.contains("complete -F _fob fob"))

        // Installing again over it is fine.
        #expect(try Self.script("install", prefix.path).status == 0)

        let uninstall = try Self.script("uninstall", prefix.path)
        #expect(uninstall.status == 0, "\(uninstall.stderrText)")
        #expect(Self.files(under: prefix) == ["bin/other"])
        #expect(!FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share").path))
        // Nothing left to remove: still fine.
        #expect(try Self.script("uninstall", prefix.path).status == 0)
        // A PREFIX that install made and that holds nothing else goes too.
        try FileManager.default.removeItem(at: prefix.appendingPathComponent("bin/other"))
        #expect(try Self.script("install", prefix.path).status == 0)
        #expect(try Self.script("uninstall", prefix.path).status == 0)
        #expect(!FileManager.default.fileExists(atPath: prefix.path))
    }
}
