import FobSSH
import FobTestSupport
import Foundation
import Testing

@Suite struct KnownHostsTests {
    @Test func hashedPlainRevokedAndCertificateAuthorityLines() throws {
        let dir = TemporaryDirectory()
        let a = try SSHPrivateKey.generate(.ed25519).publicKey
        let b = try SSHPrivateKey.generate(.ed25519).publicKey
        let c = try SSHPrivateKey.generate(.ed25519).publicKey
        let path = dir.file("known_hosts").path
        let text = """
            plain.test,!bad.test \(a.line(comment: ""))
            hashed.test \(b.line(comment: ""))
            @revoked evil.test \(c.line(comment: ""))
            @cert-authority *.test \(a.line(comment: "ca"))

            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        _ = try sshKeygen(["-H", "-f", path]) // hashes every plain name
        let hosts = KnownHosts(paths: [path])
        let matchB = hosts.lookup(b)
        #expect(matchB.names.isEmpty)
        #expect(matchB.hashed.count == 1)
        #expect(matchB.hashed[0].matches("hashed.test"))
        #expect(!matchB.hashed[0].matches("other.test"))
        #expect(hosts.lookup(c).revoked)
        let plain = KnownHosts(text: text)
        #expect(plain.lookup(a).names == ["plain.test"])
        #expect(try plain.lookup(SSHPrivateKey.generate(.ed25519).publicKey).isKnown == false)
        let destination = SSHDestination(
            state: .verified, hostKey: b, hashed: matchB.hashed)
        #expect(SSHHostRules(patterns: ["hashed.test"]).allows(destination))
        #expect(!SSHHostRules(patterns: ["other.test"]).allows(destination))
    }

    @Test func patternsWildcardsNegationPortsAndFingerprints() throws {
        let key = try SSHPrivateKey.generate(.ed25519).publicKey
        let destination = SSHDestination(state: .verified, hostKey: key, names: ["[git.example.com]:2222"])
        #expect(SSHHostRules(patterns: ["*.example.com"]).allows(destination))
        #expect(SSHHostRules(patterns: ["[git.example.com]:2222"]).allows(destination))
        #expect(!SSHHostRules(patterns: ["*.example.com", "!git.*"]).allows(destination))
        #expect(SSHHostRules(patterns: [key.fingerprint]).allows(destination))
        #expect(!SSHHostRules(patterns: ["*"]).allows(.unverified))
        #expect(SSHHostRules(patterns: []).allows(.unverified))
        #expect(SSHHostRules.wildcardMatch("g?t.*", "GIT.example.com"))
    }
}
