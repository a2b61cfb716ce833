import FobTokens
import Foundation
import Testing

/// The request and outcome that `fob` and `fob-http` exchange on a pipe.
@Suite struct HTTPWireTests {
    @Test func aRequestTravelsWhole() throws {
        let request = HTTPRequest(
            method: "POST", url: URL(string: "https://idp.example.com/oauth2/token?x=1")!,
            headers: ["Authorization": "Basic Zm9iOnM=", "Content-Type": "application/x-www-form-urlencoded"],
            body: Array("grant_type=refresh_token&refresh_token=rt%2B1".utf8) + [0, 0xFF], timeout: 12.5)
        #expect(try HTTPWire.decodeRequest(HTTPWire.encode(request)) == request)
    }

    @Test func aResponseTravelsWhole() throws {
        let response = HTTPResponse(
            status: 401, headers: ["WWW-Authenticate": "Basic"], body: [0x7B, 0x7D, 0x00, 0xFE])
        #expect(try HTTPWire.decodeOutcome(HTTPWire.encode(.success(response))) == response)
    }

    @Test func transportErrorsComeBackAsTheyWere() {
        #expect(throws: OAuthError.timeout("https://idp.example.com", seconds: 5)) {
            try HTTPWire.decodeOutcome(HTTPWire.encode(.failure(.timeout("https://idp.example.com", seconds: 5))))
        }
        #expect(throws: OAuthError.network("network error: https://idp.example.com: refused")) {
            try HTTPWire.decodeOutcome(HTTPWire.encode(.failure(.network("https://idp.example.com: refused"))))
        }
    }

    @Test(arguments: ["", "[]"])
    func nonObjectsAreRefused(text: String) {
        #expect(throws: OAuthError.network("the HTTP helper's message is not a JSON object")) {
            try HTTPWire.decodeRequest(Array(text.utf8))
        }
    }

    @Test(arguments: [
        "{}", #"{"method":"DELETE","url":"https://x","headers":{},"body":"","timeout":5}"#,
        #"{"method":"GET","url":"https://x","headers":{},"body":"***","timeout":5}"#,
        #"{"method":"GET","url":"https://x","headers":{},"body":"","timeout":-1}"#,
        #"{"method":"GET","url":"https://x","headers":{"a":1},"body":"","timeout":5}"#,
    ])
    func malformedRequestsAreRefused(text: String) {
        #expect(throws: OAuthError.network("the HTTP helper got a malformed request")) {
            try HTTPWire.decodeRequest(Array(text.utf8))
        }
    }

    @Test(arguments: [
        #"{"status":42,"headers":{},"body":""}"#, #"{"status":200,"headers":{},"body":"%"}"#,
        #"{"error":"other"}"#, "[1]",
    ])
    func malformedOutcomesAreNetworkErrors(text: String) {
        let error = #expect(throws: OAuthError.self) { try HTTPWire.decodeOutcome(Array(text.utf8)) }
        guard case .network? = error else {
            Issue.record("not a network error: \(String(describing: error))")
            return
        }
    }

    @Test func aMissingHelperIsANetworkError() {
        let transport = HelperHTTPTransport(environment: [
            "FOB_HTTP_HELPER": "/nonexistent/fob-http", "PATH": "/nonexistent",
        ])
        #expect(throws: OAuthError.network("fob-http is not installed next to fob")) {
            try transport.send(HTTPRequest(method: "GET", url: URL(string: "https://x.example")!, timeout: 1))
        }
    }
}
