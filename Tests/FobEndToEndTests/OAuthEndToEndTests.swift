import FobHTTP
import FobTestSupport
import FobTokens
import Foundation
@preconcurrency import Glibc
import Testing

/// The OAuth commands of the built `fob` against a real OpenID provider,
/// `oidc-provider-mock` (PyPI), started on a loopback port with a short
/// token lifetime. A counting proxy in front of it counts token requests.
@Suite(.serialized) struct OAuthEndToEndTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = repositoryRoot.appendingPathComponent(".venv/bin/python")
    static let providerInstalled = FileManager.default.isExecutableFile(atPath: python.path)

    /// Seconds access tokens from a login live at the provider. More than
    /// `fob`'s 30-second refresh margin, so a fresh login is used as it is.
    static let tokenLifetime = 36

    @Test(
        .enabled(
            if: providerInstalled,
            "skipped: .venv/bin/python is missing; run `python3 -m venv .venv && .venv/bin/pip install oidc-provider-mock` (scripts/test does)"
        ),
        .timeLimit(.minutes(3)))
    func loginTokenExpiryRefreshAndOneRefreshForConcurrentCallers() throws {
        let dir = TemporaryDirectory(prefix: "fob-oauth-e2e")
        let provider = try MockProvider(
            python: Self.python, lifetime: Self.tokenLifetime, log: dir.file("provider.log"))
        defer { provider.stop() }
        let proxy = try CountingProxy(upstreamPort: provider.port)
        defer { proxy.stop() }
        let issuer = "http://127.0.0.1:\(proxy.port)"

        let fob = FobRunner(directory: dir)
        try fob.initVault()
        try Data("any-client-secret\n".utf8).write(to: dir.file("client-secret"))
        let loginOptions = [
            "--issuer", issuer, "--client-id", "fob-e2e", "--client-secret-file", dir.file("client-secret").path,
            "--scope", "openid email", "--timeout", "60",
        ]

        // Login: fob prints the authorization URL; the test is the browser.
        try fob.login(["oauth", "login", "api", "me"] + loginOptions, user: "alice@example.com")
        try fob.login(["oauth", "login", "api", "ci"] + loginOptions, user: "bob@example.com")
        let me0 = try fob.stored("api", "me")
        let ci0 = try fob.stored("api", "ci")
        #expect(me0.refreshToken != nil)
        #expect(me0.tokenEndpoint.absoluteString == "\(issuer)/oauth2/token")
        // The client secret is kept in the item (hidden field), not a path to read.
        #expect(try fob.run(["get", "api", "me", "--field", "client_secret"]).stdoutText == "any-client-secret\n")
        #expect(me0.scope == "openid email")
        #expect(me0.expiresAt.timeIntervalSinceNow > 30)
        #expect(me0.expiresAt.timeIntervalSinceNow <= Double(Self.tokenLifetime))
        let idToken = try JWT(decoding: try #require(me0.idToken))
        #expect(idToken.claims["sub"]?.string == "alice@example.com")
        #expect(
            !String(decoding: try fob.run(["get", "api", "me"]).stdout, as: UTF8.self).contains("any-client-secret"))
        #expect(proxy.count(grantType: "authorization_code") == 2)
        #expect(try provider.userinfoStatus(token: me0.accessToken) == 200)

        // Before expiry: the stored token, no refresh.
        let before = try fob.run(["oauth", "token", "api", "me"])
        #expect(before.status == 0, "\(before.stderrText)")
        #expect(before.stdoutText == me0.accessToken + "\n")
        #expect(proxy.count(grantType: "refresh_token") == 0)

        // Wait until the provider itself rejects the token.
        try provider.waitUntilRejected(token: me0.accessToken, timeout: Double(Self.tokenLifetime) + 20)

        // After expiry: one refresh with the stored refresh token; the new token works.
        let after = try fob.run(["oauth", "token", "api", "me"])
        #expect(after.status == 0, "\(after.stderrText)")
        let me1 = try fob.stored("api", "me")
        #expect(after.stdoutText == me1.accessToken + "\n")
        #expect(me1.accessToken != me0.accessToken)
        #expect(proxy.count(grantType: "refresh_token") == 1)
        #expect(proxy.refreshTokensSent() == [try #require(me0.refreshToken)])
        #expect(try provider.userinfoStatus(token: me1.accessToken) == 200)
        // This provider does not rotate refresh tokens: the old one is kept (RFC 6749 §6).
        #expect(me1.refreshToken == me0.refreshToken)
        #expect(me1.idToken != nil)
        #expect(me1.expiresAt > Date().addingTimeInterval(30))

        // Fresh again: no further refresh.
        #expect(try fob.run(["oauth", "token", "api", "me"]).stdoutText == me1.accessToken + "\n")
        #expect(proxy.count(grantType: "refresh_token") == 1)

        // A forced refresh replaces the access token and uses the refresh token now stored.
        let forced = try fob.run(["oauth", "refresh", "api", "me"])
        #expect(forced.status == 0, "\(forced.stderrText)")
        #expect(forced.stdoutText.hasPrefix("refreshed service \"api\", account \"me\": expires in "))
        let me2 = try fob.stored("api", "me")
        #expect(me2.accessToken != me1.accessToken)
        #expect(proxy.count(grantType: "refresh_token") == 2)
        #expect(proxy.refreshTokensSent().last == me1.refreshToken)

        // Two processes need a fresh token at once (the provider answers slowly
        // to widen the race): exactly one refresh reaches it, both print its token.
        #expect(try provider.userinfoStatus(token: ci0.accessToken) == 401)
        proxy.setRefreshDelay(1.5)
        let first = try fob.start(["oauth", "token", "api", "ci"])
        let second = try fob.start(["oauth", "token", "api", "ci"])
        let results = [first.wait(timeout: 60), second.wait(timeout: 60)]
        let ci1 = try fob.stored("api", "ci")
        for result in results {
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stdoutText == ci1.accessToken + "\n")
        }
        #expect(ci1.accessToken != ci0.accessToken)
        #expect(proxy.count(grantType: "refresh_token") == 3)
        #expect(proxy.refreshTokensSent().last == ci0.refreshToken)

        // A missing item is exit 44, with one line on stderr.
        let missing = try fob.run(["oauth", "token", "api", "nobody"])
        #expect(missing.status == 44)
        #expect(missing.stderrText.split(separator: "\n").count == 1)
    }

    @Test(.enabled(if: providerInstalled, "skipped: .venv/bin/python is missing"), .timeLimit(.minutes(2)))
    func providerErrorsLeaveTheItemAndExitOne() throws {
        let dir = TemporaryDirectory(prefix: "fob-oauth-e2e")
        let provider = try MockProvider(python: Self.python, lifetime: 600, log: dir.file("provider.log"))
        defer { provider.stop() }
        let fob = FobRunner(directory: dir)
        try fob.initVault()
        try Data("s\n".utf8).write(to: dir.file("client-secret"))
        try fob.login(
            [
                "oauth", "login", "api", "me", "--authorization-endpoint",
                "http://127.0.0.1:\(provider.port)/oauth2/authorize",
                "--token-endpoint", "http://127.0.0.1:\(provider.port)/oauth2/token", "--client-id", "fob-e2e",
                "--scope", "openid",
                "--client-secret-file", dir.file("client-secret").path,
            ], user: "carol")
        let stored = try fob.run(["get", "api", "me"]).stdout

        // The provider goes away: a network error, one line, exit 1, the item unchanged.
        provider.stop()
        let refused = try fob.run(["oauth", "refresh", "api", "me"])
        #expect(refused.status == 1)
        #expect(refused.stderrText.hasPrefix("fob: "))
        #expect(refused.stderrText.split(separator: "\n").count == 1)
        #expect(try fob.run(["get", "api", "me"]).stdout == stored)

        // A wrong state in the redirect is refused.
        let login = try fob.start([
            "oauth", "login", "api", "x", "--authorization-endpoint", "http://127.0.0.1:1/authorize",
            "--token-endpoint", "http://127.0.0.1:1/token", "--client-id", "c", "--timeout", "5",
        ])
        let url = try login.waitForAuthorizationURL()
        let query = Dictionary(FormEncoding.decode(Substring(url.query ?? "")), uniquingKeysWith: { a, _ in a })
        let redirect = try #require(query["redirect_uri"])
        _ = try CurlTransport().send(
            HTTPRequest(method: "GET", url: URL(string: "\(redirect)?code=c&state=forged")!, timeout: 10))
        // A forged state is ignored; when the real redirect never comes, the
        // login ends (after its 5 s) saying a forged one was seen.
        let result = login.wait(timeout: 60)
        #expect(result.status == 1)
        #expect(result.stderrText.contains("state does not match"))
        #expect(try fob.run(["get", "api", "x"]).status == 44)
    }
}

// MARK: - Helpers

/// A failure of the test's own machinery (provider, proxy, child process).
struct OAuthTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// How a child process ended, and what it wrote.
struct ChildResult {
    var status: Int32
    var stdout: [UInt8]
    var stderr: [UInt8]
    var timedOut: Bool
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs the built `fob` with a vault and password file in a directory.
struct FobRunner {
    let directory: TemporaryDirectory
    var vault: String { directory.file("vault.db").path }
    var passwordFile: String { directory.file("password").path }

    func initVault() throws {
        try Data("e2e master password\n".utf8).write(to: directory.file("password"))
        let result = try run(["init", "--kdf", "interactive"])
        guard result.status == 0 else { throw OAuthTestError("fob init: \(result.stderrText)") }
    }

    func run(_ arguments: [String]) throws -> ChildResult {
        try start(arguments).wait(timeout: 60)
    }

    func start(_ arguments: [String]) throws -> StreamingChild {
        try StreamingChild(
            executable: FobProcess.binaryURL.path,
            arguments: ["--vault", vault, "--password-file", passwordFile] + arguments,
            environment: FobProcess.baseEnvironment)
    }

    /// The stored token set of an oauth item.
    func stored(_ service: String, _ account: String) throws -> OAuthTokenSet {
        let result = try run(["get", service, account, "--raw"])
        guard result.status == 0 else { throw OAuthTestError("fob get: \(result.stderrText)") }
        return try OAuthTokenSet.decode(result.stdout)
    }

    /// Runs `fob oauth login …` and plays the browser: opens the printed
    /// URL, submits the provider's form as `user`, follows the redirect to
    /// fob's listener.
    func login(_ arguments: [String], user: String) throws {
        let child = try start(arguments)
        let url = try child.waitForAuthorizationURL()
        let http = CurlTransport()
        let form = try http.send(HTTPRequest(method: "GET", url: url, timeout: 10))
        guard form.status == 200 else { throw OAuthTestError("authorization form: HTTP \(form.status)") }
        let submitted = try http.send(
            HTTPRequest(
                method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array(FormEncoding.encode([("sub", user)]).utf8), timeout: 10))
        guard submitted.status == 302, let location = submitted.headers["location"], let next = URL(string: location)
        else {
            throw OAuthTestError("authorization: HTTP \(submitted.status), not a redirect")
        }
        let page = try http.send(HTTPRequest(method: "GET", url: next, timeout: 10))
        let result = child.wait(timeout: 60)
        guard page.status == 200, result.status == 0 else {
            throw OAuthTestError("login: page HTTP \(page.status), fob exit \(result.status): \(result.stderrText)")
        }
    }
}

/// A child process whose standard error can be read while it runs.
final class StreamingChild: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var out: [UInt8] = []
    private var err: [UInt8] = []
    private let outDone = DispatchSemaphore(value: 0)
    private let errDone = DispatchSemaphore(value: 0)

    init(executable: String, arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outPipe
        process.standardError = errPipe
        try process.run()
        for (pipe, isError) in [(outPipe, false), (errPipe, true)] {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    lock.withLock { if isError { err += chunk } else { out += chunk } }
                }
                (isError ? errDone : outDone).signal()
            }
        }
    }

    var stderrText: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

    /// Polls standard error for the authorization URL `fob oauth login` prints.
    func waitForAuthorizationURL(timeout: TimeInterval = 30) throws -> URL {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            for line in stderrText.split(separator: "\n") where line.hasPrefix("  http") {
                if let url = URL(string: line.trimmingCharacters(in: .whitespaces)) { return url }
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw OAuthTestError("no authorization URL from fob: \(stderrText)")
    }

    /// Waits for the end (killing the child after `timeout` seconds).
    func wait(timeout: TimeInterval) -> ChildResult {
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                timedOut = true
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.waitUntilExit()
        _ = outDone.wait(timeout: .now() + 10)
        _ = errDone.wait(timeout: .now() + 10)
        return lock.withLock {
            ChildResult(status: process.terminationStatus, stdout: out, stderr: err, timedOut: timedOut)
        }
    }
}

/// `oidc-provider-mock` on a free loopback port.
final class MockProvider: @unchecked Sendable {
    let port: UInt16
    private let process = Process()
    private let logURL: URL

    init(python: URL, lifetime: Int, log: URL) throws {
        // The kernel picks a free port; it is released just before the provider binds it.
        port = try LoopbackRedirectListener().port
        logURL = log
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.executableURL = python
        process.arguments = ["-m", "oidc_provider_mock", "-p", String(port), "-e", String(lifetime)]
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "NO_COLOR": "1"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        let discovery = URL(string: "http://127.0.0.1:\(port)/.well-known/openid-configuration")!
        while Date() < deadline {
            if let response = try? CurlTransport().send(HTTPRequest(method: "GET", url: discovery, timeout: 2)),
                response.status == 200
            {
                return
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        stop()
        throw OAuthTestError("oidc-provider-mock did not start: \(logText)")
    }

    var logText: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Kills the provider (SIGKILL: its graceful shutdown waits for idle
    /// keep-alive connections) and waits for it.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The status of `/userinfo` with `token`: 200 while the provider accepts it.
    func userinfoStatus(token: String) throws -> Int {
        try CurlTransport().send(
            HTTPRequest(
                method: "GET", url: URL(string: "http://127.0.0.1:\(port)/userinfo")!,
                headers: ["Authorization": "Bearer \(token)"], timeout: 10)
        ).status
    }

    /// Polls `/userinfo` until the provider rejects `token` as expired.
    func waitUntilRejected(token: String, timeout: TimeInterval) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try userinfoStatus(token: token) == 401 { return }
            Thread.sleep(forTimeInterval: 0.5)
        }
        throw OAuthTestError("the provider still accepts the token after \(timeout) s")
    }
}

/// An HTTP/1.1 forwarder on a loopback port that records token requests
/// (grant type and refresh token) and can slow down refreshes. Each
/// connection carries one request (`Connection: close`); the `Host` header
/// passes unchanged, so the provider names the proxy in its discovery document.
final class CountingProxy: @unchecked Sendable {
    let port: UInt16
    private let upstreamPort: UInt16
    private let listenFD: Int32
    private let lock = NSLock()
    private var tokenRequests: [[String: String]] = []
    private var refreshDelay: TimeInterval = 0
    private var stopped = false

    init(upstreamPort: UInt16) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 32) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, ok else { throw OAuthTestError("proxy: cannot listen") }
        listenFD = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func stop() {
        lock.withLock { stopped = true }
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
    }

    func setRefreshDelay(_ seconds: TimeInterval) { lock.withLock { refreshDelay = seconds } }

    func count(grantType: String) -> Int {
        lock.withLock { tokenRequests.filter { $0["grant_type"] == grantType }.count }
    }

    func refreshTokensSent() -> [String] {
        lock.withLock {
            tokenRequests.filter { $0["grant_type"] == "refresh_token" }.compactMap { $0["refresh_token"] }
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listenFD, nil, nil)
            if client < 0 {
                if lock.withLock({ stopped }) { return }
                if errno == EINTR { continue }
                return
            }
            Thread.detachNewThread { [self] in
                handle(client)
                close(client)
            }
        }
    }

    private func handle(_ client: Int32) {
        guard let (head, body) = readRequest(client) else { return }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst()
        lines.removeAll { $0.lowercased().hasPrefix("connection:") || $0.lowercased().hasPrefix("keep-alive:") }
        let path = requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        if path.hasPrefix("/oauth2/token") {
            var fields: [String: String] = [:]
            for (k, v) in FormEncoding.decode(Substring(String(decoding: body, as: UTF8.self))) { fields[k] = v }
            let delay = lock.withLock { () -> TimeInterval in
                tokenRequests.append(fields)
                return refreshDelay
            }
            if fields["grant_type"] == "refresh_token" && delay > 0 { Thread.sleep(forTimeInterval: delay) }
        }
        let request =
            Array(([requestLine] + lines + ["Connection: close", "", ""]).joined(separator: "\r\n").utf8) + body
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0, sendAll(upstream, request) else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(upstream, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0, sendAll(client, Array(buffer[0..<n])) else { break }
        }
    }

    /// The request head (without the blank line) and its `Content-Length` body.
    private func readRequest(_ fd: Int32) -> (String, [UInt8])? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        let terminator: [UInt8] = [13, 10, 13, 10]
        while data.firstRange(of: terminator) == nil {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0, data.count < 1 << 20 else { return nil }
            data += buffer[0..<n]
        }
        let end = data.firstRange(of: terminator)!
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self)
        var body = Array(data[end.upperBound...])
        let length =
            head.components(separatedBy: "\r\n").compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first ?? 0
        while body.count < length {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            body += buffer[0..<n]
        }
        return (head, body)
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }
}
