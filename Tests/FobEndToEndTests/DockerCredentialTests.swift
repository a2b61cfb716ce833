import FobStore
import FobTestSupport
import Foundation
import Testing

/// `fob docker-credential` (as `docker-credential-fob`) by the documented
/// JSON of github.com/docker/docker-credential-helpers.
@Suite struct DockerCredentialTests {
    /// Runs the helper through a link named as docker finds it.
    static func helper(
        _ v: ProcessTestVault, _ link: TemporaryDirectory, _ action: String,
        input: String = "", environment: [String: String]? = nil
    ) throws -> ProcessResult {
        let path = link.file("docker-credential-fob").path
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: FobProcess.binaryURL.path)
        }
        return try ChildProcess.run(
            executable: path, arguments: [action],
            environment: FobProcess.baseEnvironment.merging(environment ?? v.environment) { $1 },
            stdin: Array(input.utf8))
    }

    @Test func storeGetListErase() throws {
        let v = try ProcessTestVault()
        let link = TemporaryDirectory(prefix: "fob-docker")
        let store = try Self.helper(
            v, link, "store",
            input: #"{"ServerURL":"https://index.docker.io/v1/","Username":"ana","Secret":"tok\"en"}"#)
        #expect(store.status == 0, "\(store.stdoutText)\(store.stderrText)")
        #expect(store.stdout.isEmpty)
        _ = try Self.helper(
            v, link, "store", input: #"{"ServerURL":"registry.example:5000","Username":"bob","Secret":"two"}"#)

        let get = try Self.helper(v, link, "get", input: "https://index.docker.io/v1/\n")
        #expect(get.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(get.stdout)) as? [String: String]
        #expect(object == ["ServerURL": "https://index.docker.io/v1/", "Username": "ana", "Secret": "tok\"en"])

        let list = try Self.helper(v, link, "list")
        let map = try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [String: String]
        #expect(map == ["https://index.docker.io/v1/": "ana", "registry.example:5000": "bob"])
        #expect(!list.stdoutText.contains("tok"))

        // Storing again replaces the credential of that server URL.
        _ = try Self.helper(
            v, link, "store", input: #"{"ServerURL":"registry.example:5000","Username":"carol","Secret":"three"}"#)
        let replaced = try Self.helper(v, link, "get", input: "registry.example:5000")
        #expect(replaced.stdoutText.contains(#""Username":"carol""#))

        // Kept as internet passwords that `fob ls` shows.
        #expect(try v.run(["ls"]).stdoutText.contains("Docker Credentials"))

        #expect(try Self.helper(v, link, "erase", input: "registry.example:5000").status == 0)
        let gone = try Self.helper(v, link, "get", input: "registry.example:5000")
        #expect(gone.status == 1)
        #expect(gone.stdoutText == "credentials not found in native keychain\n")
        let eraseAgain = try Self.helper(v, link, "erase", input: "registry.example:5000")
        #expect(eraseAgain.status == 1)
        #expect(eraseAgain.stdoutText == "credentials not found in native keychain\n")
        #expect(try Self.helper(v, link, "get", input: "https://index.docker.io/v1/").status == 0)
    }

    @Test func theProtocolsErrorMessages() throws {
        let v = try ProcessTestVault()
        let link = TemporaryDirectory(prefix: "fob-docker")
        let noURL = try Self.helper(v, link, "store", input: #"{"ServerURL":"","Username":"a","Secret":"s"}"#)
        #expect(noURL.status == 1)
        #expect(noURL.stdoutText == "no credentials server URL\n")
        let noUser = try Self.helper(v, link, "store", input: #"{"ServerURL":"r","Username":"","Secret":"s"}"#)
        #expect(noUser.stdoutText == "no credentials username\n")
        let bad = try Self.helper(v, link, "store", input: "not json")
        #expect(bad.status == 1)
        #expect(!bad.stdoutText.isEmpty)
        let unknown = try Self.helper(v, link, "frobnicate")
        #expect(unknown.status != 0)
        let emptyList = try Self.helper(v, link, "list")
        #expect(emptyList.stdoutText == "{}\n")
        // Locked, no terminal: a non-zero exit at once, never a hang.
        let locked = try Self.helper(v, link, "get", input: "r", environment: ["FOB_VAULT": v.path])
        #expect(locked.status == 36)
        #expect(!locked.timedOut)
    }
}
