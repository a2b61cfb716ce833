import FobStore
import Foundation
import Testing

@testable import FobCLI

/// The pure parsers of the credential helpers' input.
@Suite struct CredentialParserTests {
    @Test func gitMessageFields() throws {
        let m = try GitCredentialMessage.parse(
            """
            protocol=https
            host=example.com:8443
            path=org/repo.git
            username=ana
            password=p=w
            password_expiry_utc=1700000000
            oauth_refresh_token=rt
            capability[]=authtype
            capability[]=state
            wwwauth[]=Basic realm="x"

            username=ignored after the blank line
            """)
        #expect(m.protocol == "https")
        #expect(m.host == "example.com")
        #expect(m.port == 8443)
        #expect(m.path == "org/repo.git")
        #expect(m.username == "ana")
        #expect(m.password?.unsafeString == "p=w")
        #expect(m.passwordExpiry == 1_700_000_000)
        #expect(m.oauthRefreshToken?.unsafeString == "rt")
        #expect(m.capabilities == ["authtype", "state"])
    }

    @Test func gitURLIsTakenApart() throws {
        let m = try GitCredentialMessage.parse("url=https://ana%40x:pw@git.example:444/a%20b\n")
        #expect(m.protocol == "https")
        #expect(m.host == "git.example")
        #expect(m.port == 444)
        #expect(m.username == "ana@x")
        #expect(m.password?.unsafeString == "pw")
        #expect(m.path == "a b")
        let v6 = try GitCredentialMessage.parse("host=[::1]\n")
        #expect(v6.host == "[::1]")
        #expect(v6.port == nil)
    }

    @Test func gitBadInputIsATypedError() {
        #expect(throws: GitCredentialError.missingEquals(line: 2)) {
            try GitCredentialMessage.parse("protocol=https\nhost\n")
        }
        #expect(throws: GitCredentialError.invalidExpiry) {
            try GitCredentialMessage.parse("password_expiry_utc=soon\n")
        }
        #expect(throws: GitCredentialError.invalidURL) { try GitCredentialMessage.parse("host=h:99999\n") }
        #expect(throws: GitCredentialError.invalidURL) { try GitCredentialMessage.parse("url=nothing\n") }
        #expect(throws: GitCredentialError.invalidText(line: 1)) {
            try [UInt8]([0x68, 0x6F, 0x73, 0x74, 0x3D, 0xFF, 0x0A]).withUnsafeBytes { raw in
                try Result { () throws(GitCredentialError) in try GitCredentialMessage.parse(raw) }.get()
            }
        }
        let huge = [UInt8](repeating: 0x61, count: GitCredentialMessage.maxInputBytes + 1)
        #expect(throws: GitCredentialError.tooLong) {
            try huge.withUnsafeBytes { raw in
                try Result { () throws(GitCredentialError) in try GitCredentialMessage.parse(raw) }.get()
            }
        }
    }

    @Test func gitAnswerHoldsOnlyWhatIsStored() throws {
        var m = GitCredentialMessage()
        m.protocol = "https"
        m.host = "h"
        m.username = "ana"
        m.password = SecretBytes(utf8: "pw")
        #expect(String(decoding: try #require(m.answer()), as: UTF8.self) == "username=ana\npassword=pw\n")
    }

    /// git-credential(1): a value may hold any byte but newline and NUL. A
    /// `url=` whose parts decode to one is refused (so `store` keeps
    /// none), and a stored value holding one is never answered.
    @Test func gitValuesWithLineBreaksAreRefusedOnStoreAndNeverAnswered() throws {
        for url in [
            "url=https://a%0Ab:pw@h/\n", "url=https://ana:p%0Aw@h/\n", "url=https://ana:pw@h/r%0Aepo\n",
            "url=https://ana:p%00w@h/\n",
        ] {
            #expect(throws: GitCredentialError.invalidURL, "\(url)") { try GitCredentialMessage.parse(url) }
        }
        var m = GitCredentialMessage()
        m.username = "ana\npassword=evil"
        m.password = SecretBytes(utf8: "pw")
        #expect(m.answer() == nil)
        m.username = "ana"
        m.password = SecretBytes(utf8: "pw\nusername=evil")
        #expect(m.answer() == nil)
        m.password = SecretBytes(utf8: "pw")
        m.oauthRefreshToken = SecretBytes([0x72, 0x00, 0x74])
        #expect(m.answer() == nil)
        m.oauthRefreshToken = SecretBytes(utf8: "rt")
        #expect(m.answer() != nil)
    }

    @Test func dockerStoreJSON() throws {
        func parse(_ text: String) throws(DockerCredentialError) -> DockerCredentialRequest {
            try Array(text.utf8).withUnsafeBytes { raw in
                Result { () throws(DockerCredentialError) in try DockerCredentialRequest.parse(raw) }
            }.get()
        }
        let r = try parse(#"{"ServerURL":"https://index.docker.io/v1/","Username":"ana","Secret":"s\"x"}"#)
        #expect(r.serverURL == "https://index.docker.io/v1/")
        #expect(r.username == "ana")
        #expect(r.secret.unsafeString == "s\"x")
        #expect(throws: DockerCredentialError.malformed) { try parse("[]") }
        #expect(throws: DockerCredentialError.malformed) { try parse(#"{"ServerURL":"a","Username":"b"}"#) }
        #expect(throws: DockerCredentialError.missingServerURL) {
            try parse(#"{"ServerURL":"","Username":"b","Secret":"c"}"#)
        }
        #expect(throws: DockerCredentialError.missingUsername) {
            try parse(#"{"ServerURL":"a","Username":"","Secret":"c"}"#)
        }
        #expect(DockerCredentialCommand.host(of: "https://r.example:5000/v2/") == "r.example:5000")
        #expect(DockerCredentialCommand.host(of: "r.example") == "r.example")
    }

    @Test func helperLinksRunTheirCommand() {
        #expect(
            FobCLI.arguments(program: "/usr/bin/git-credential-fob", arguments: ["get"]) == ["git-credential", "get"])
        #expect(
            FobCLI.arguments(program: "docker-credential-fob", arguments: ["list"]) == ["docker-credential", "list"])
        #expect(FobCLI.arguments(program: "/x/fob", arguments: ["ls"]) == ["ls"])
    }
}
