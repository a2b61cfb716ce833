import Testing

@testable import FobCLI

/// `fob run`'s `NAME=SERVICE/ACCOUNT` and its env-file format.
@Suite struct EnvBindingTests {
    @Test func theServiceEndsAtTheFirstUnescapedSlash() throws {
        #expect(
            try EnvBinding.parse("TOKEN=github.com/ci")
                == EnvBinding(name: "TOKEN", service: "github.com", account: "ci"))
        #expect(
            try EnvBinding.parse(#"K=api\/v2/svc/reader"#)
                == EnvBinding(name: "K", service: "api/v2", account: "svc/reader"))
        #expect(try EnvBinding.parse(#"K=a\\/b"#) == EnvBinding(name: "K", service: #"a\"#, account: "b"))
        #expect(try EnvBinding.parse("_x1=s/a=b") == EnvBinding(name: "_x1", service: "s", account: "a=b"))
    }

    @Test func badBindingsAreTypedErrors() {
        #expect(throws: EnvBindingError.missingEquals(line: 0)) { try EnvBinding.parse("TOKEN") }
        #expect(throws: EnvBindingError.invalidName(line: 0)) { try EnvBinding.parse("1X=s/a") }
        #expect(throws: EnvBindingError.invalidName(line: 0)) { try EnvBinding.parse("A-B=s/a") }
        #expect(throws: EnvBindingError.invalidName(line: 0)) { try EnvBinding.parse("=s/a") }
        #expect(throws: EnvBindingError.invalidName(line: 0)) { try EnvBinding.parse("É=s/a") }
        #expect(throws: EnvBindingError.missingSlash(line: 0)) { try EnvBinding.parse("A=service") }
        #expect(throws: EnvBindingError.missingSlash(line: 0)) { try EnvBinding.parse("A=/account") }
        #expect(throws: EnvBindingError.missingSlash(line: 0)) { try EnvBinding.parse("A=service/") }
        #expect(throws: EnvBindingError.invalidEscape(line: 0)) { try EnvBinding.parse(#"A=s\x/a"#) }
        #expect(throws: EnvBindingError.invalidEscape(line: 0)) { try EnvBinding.parse(#"A=s\"#) }
    }

    @Test func envFiles() throws {
        let file = "# secrets\n\n  GITHUB_TOKEN=github.com/ci  \r\n\t# indented comment\nDB=db\\/main/app\n"
        #expect(
            try EnvBinding.parseFile(Array(file.utf8)) == [
                EnvBinding(name: "GITHUB_TOKEN", service: "github.com", account: "ci"),
                EnvBinding(name: "DB", service: "db/main", account: "app"),
            ])
        #expect(throws: EnvBindingError.invalidName(line: 2)) {
            try EnvBinding.parseFile(Array("A=s/a\nB C=s/a\n".utf8))
        }
        #expect(throws: EnvBindingError.duplicate("A")) { try EnvBinding.parseFile(Array("A=s/a\nA=t/b\n".utf8)) }
        #expect(throws: EnvBindingError.invalidText(line: 1)) { try EnvBinding.parseFile([0x41, 0x3D, 0xFF]) }
        #expect(throws: EnvBindingError.invalidText(line: 1)) { try EnvBinding.parseFile([0x41, 0x3D, 0x00]) }
        #expect(try EnvBinding.parseFile([]) == [])
    }
}
