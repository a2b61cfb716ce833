import FobHTTP
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobTokens

/// Plays the browser: GETs the given URLs in order on a background thread,
/// each once the previous answered, and keeps the responses.
final class FakeBrowser: @unchecked Sendable {
    private let lock = NSLock()
    private var responses: [HTTPResponse] = []
    private let done = DispatchSemaphore(value: 0)

    init(_ urls: [String]) {
        Thread.detachNewThread { [self] in
            for url in urls {
                let response = try? CurlTransport().send(
                    HTTPRequest(method: "GET", url: URL(string: url)!, timeout: 5))
                if let response { lock.withLock { responses.append(response) } }
            }
            done.signal()
        }
    }

    /// The responses, after every request finished (at most 10 s).
    func finished() -> [HTTPResponse] {
        _ = done.wait(timeout: .now() + 10)
        return lock.withLock { responses }
    }
}

@Suite struct LoopbackRedirectListenerTests {
    @Test func listensOnLoopbackWithAnEphemeralPort() throws {
        let a = try LoopbackRedirectListener()
        let b = try LoopbackRedirectListener()
        #expect(a.port > 0)
        #expect(a.port != b.port)
        #expect(a.redirectURI == "http://127.0.0.1:\(a.port)/callback")
    }

    @Test func returnsTheCodeAndAnswersTheBrowser() throws {
        let listener = try LoopbackRedirectListener()
        let base = "http://127.0.0.1:\(listener.port)"
        let browser = FakeBrowser(["\(base)/favicon.ico", "\(base)/callback?code=abc%2B1&state=st-1"])
        let code = try listener.waitForCode(expectedState: "st-1", timeout: 10)
        #expect(code == "abc+1")
        let responses = browser.finished()
        #expect(responses.map(\.status) == [404, 200])
        let page = String(decoding: responses.last?.body ?? [], as: UTF8.self)
        #expect(page.contains("Authorization received"))
        #expect(responses.last?.headers["cache-control"] == "no-store")
    }

    /// A redirect with another `state` (any local program or page can send
    /// one) is answered 400 and ignored: the real redirect after it still
    /// completes the login.
    @Test func aForgedStateIsIgnoredAndTheRealRedirectStillWorks() throws {
        let listener = try LoopbackRedirectListener()
        let base = "http://127.0.0.1:\(listener.port)/callback"
        let browser = FakeBrowser([
            "\(base)?code=evil&state=forged", "\(base)?code=evil2",
            "\(base)?error=access_denied&state=forged", "\(base)?code=good&state=st-1",
        ])
        #expect(try listener.waitForCode(expectedState: "st-1", timeout: 10) == "good")
        #expect(browser.finished().map(\.status) == [400, 400, 400, 200])
    }

    /// With only forged redirects, the wait ends at its timeout and says why.
    @Test func onlyForgedStatesEndInStateMismatchAtTheTimeout() throws {
        let listener = try LoopbackRedirectListener()
        let browser = FakeBrowser(["http://127.0.0.1:\(listener.port)/callback?code=abc&state=forged"])
        #expect(throws: OAuthError.stateMismatch) { try listener.waitForCode(expectedState: "st-1", timeout: 1.5) }
        #expect(browser.finished().map(\.status) == [400])
    }

    @Test func missingStateIsIgnored() throws {
        let listener = try LoopbackRedirectListener()
        _ = FakeBrowser(["http://127.0.0.1:\(listener.port)/callback?code=abc"])
        #expect(throws: OAuthError.stateMismatch) { try listener.waitForCode(expectedState: "st-1", timeout: 1.5) }
    }

    /// More idle connections than the listener reads at once (kept open,
    /// silent) do not lock the browser out.
    @Test func idleConnectionsBeyondTheLimitDoNotLockTheBrowserOut() throws {
        let listener = try LoopbackRedirectListener()
        let port = listener.port
        let idle = IdleConnections()
        defer { idle.closeAll() }
        let browserStarted = DispatchSemaphore(value: 0)
        let browser = BrowserBox()
        // While the listener accepts: open more silent connections than it
        // reads at once, then let the browser send the redirect.
        Thread.detachNewThread {
            idle.open(count: LoopbackRedirectListener.maxClients + 8, port: port)
            usleep(500_000)
            browser.value = FakeBrowser(["http://127.0.0.1:\(port)/callback?code=c&state=s"])
            browserStarted.signal()
        }
        let start = Date()
        #expect(try listener.waitForCode(expectedState: "s", timeout: 20) == "c")
        #expect(Date().timeIntervalSince(start) < LoopbackRedirectListener.requestTimeout)
        browserStarted.wait()
        #expect(browser.value?.finished().map(\.status) == [200])
    }

    @Test func requestParserNamesEachKind() {
        let parse = { (head: String) in LoopbackRedirectListener.parse(head: head, expectedState: "s") }
        #expect(parse("") == .badRequest)
        #expect(parse("GET /callback") == .badRequest)
        #expect(parse("POST /callback?code=c&state=s HTTP/1.1") == .wrongMethod)
        #expect(parse("GET /favicon.ico HTTP/1.1") == .notFound)
        #expect(parse("GET /callback HTTP/1.1") == .notARedirect)
        #expect(parse("GET /callback?code=c&state=t HTTP/1.1") == .forgedState)
        #expect(parse("GET /callback?code=c HTTP/1.1") == .forgedState)
        #expect(parse("GET /callback?error=e&error_description=d&state=s HTTP/1.1") == .error("e", description: "d"))
        #expect(parse("GET /callback?code=&state=s HTTP/1.1") == .emptyCode)
        #expect(parse("GET /callback?code=c%2B&state=s HTTP/1.1\r\nHost: x") == .code("c+"))
    }

    @Test func errorRedirectIsReported() throws {
        let listener = try LoopbackRedirectListener()
        let browser = FakeBrowser([
            "http://127.0.0.1:\(listener.port)/callback?error=access_denied&error_description=User+said+%3Cno%3E&state=s"
        ])
        #expect(throws: OAuthError.authorization(error: "access_denied", description: "User said <no>")) {
            try listener.waitForCode(expectedState: "s", timeout: 10)
        }
        let page = String(decoding: browser.finished().first?.body ?? [], as: UTF8.self)
        #expect(page.contains("User said &lt;no&gt;"))
    }

    @Test func timesOut() throws {
        let listener = try LoopbackRedirectListener()
        let start = Date()
        #expect(throws: OAuthError.timeout("the browser to return to \(listener.redirectURI)", seconds: 0.3)) {
            try listener.waitForCode(expectedState: "s", timeout: 0.3)
        }
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test func aSilentConnectionDoesNotBlockTheRedirect() throws {
        let listener = try LoopbackRedirectListener()
        // A client that connects and sends nothing, then closes.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = listener.port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(silent, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        // Like a browser's spare connection: open, silent, never closed.
        let start = Date()
        _ = FakeBrowser(["http://127.0.0.1:\(listener.port)/callback?code=c&state=s"])
        #expect(try listener.waitForCode(expectedState: "s", timeout: 20) == "c")
        #expect(Date().timeIntervalSince(start) < LoopbackRedirectListener.requestTimeout)
    }

    @Test func loginFlowExchangesTheCodeWithTheVerifier() throws {
        let provider = FakeProvider()
        let client = OAuthClient(
            endpoints: try OAuthEndpoints(authorization: provider.authorizationURL, token: provider.tokenURL),
            clientID: "client-1", transport: provider)
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_700_000_000))
        var shown: URL?
        let set = try OAuthLogin.run(
            client: client, scope: "openid", timeout: 10, now: clock.function
        ) { url in
            shown = url
            // The provider would redirect the browser with the code and the request's state.
            let query = FormEncoding.decode(Substring(url.query ?? ""))
            let state = query.first { $0.0 == "state" }!.1
            let redirect = query.first { $0.0 == "redirect_uri" }!.1
            _ = FakeBrowser(["\(redirect)?code=good-code&state=\(state)"])
        }
        let url = try #require(shown)
        let query = Dictionary(FormEncoding.decode(Substring(url.query ?? "")), uniquingKeysWith: { a, _ in a })
        #expect(query["code_challenge_method"] == "S256")
        let exchange = try #require(provider.allRequests.last)
        let verifier = try #require(provider.form(exchange)["code_verifier"])
        #expect(try PKCE(verifier: verifier).challenge == query["code_challenge"])
        #expect(provider.form(exchange)["redirect_uri"] == query["redirect_uri"])
        #expect(set.accessToken.hasPrefix("at-"))
        #expect(set.refreshToken != nil)
        #expect(set.expiresAt == clock.now.addingTimeInterval(3600))
        #expect(set.scope == "openid")
        #expect(set.tokenEndpoint == provider.tokenURL)
        #expect(set.clientID == "client-1")
    }
}

/// Client sockets that connect to a port and never send anything.
final class IdleConnections: @unchecked Sendable {
    private let lock = NSLock()
    private var fds: [Int32] = []

    /// Opens `count` non-blocking connections to `127.0.0.1:port`.
    func open(count: Int, port: UInt16) {
        for _ in 0..<count {
            let fd = socket(
                AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            lock.withLock { fds.append(fd) }
            usleep(5_000)
        }
    }

    func closeAll() {
        lock.withLock {
            fds.forEach { close($0) }
            fds = []
        }
    }
}

/// A browser made on another thread, read after a semaphore.
final class BrowserBox: @unchecked Sendable {
    var value: FakeBrowser?
}
