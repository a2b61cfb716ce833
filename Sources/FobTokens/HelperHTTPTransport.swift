@preconcurrency import Glibc
import Foundation
import FobSystem

/// The live HTTP transport: each request runs in `fob-http`, a small helper
/// installed next to `fob`, which sends it with URLSession and answers on
/// its standard output (``HTTPWire``). So `fob` loads no network library
/// (FoundationNetworking pulls libcurl and its whole tree) for commands that
/// never reach the network; only OAuth's token requests start the helper.
///
/// The request, credentials included, goes to the helper's standard input;
/// its arguments and environment hold nothing secret.
public struct HelperHTTPTransport: HTTPTransport {
    /// The helper's program name.
    public static let helperName = "fob-http"

    private let environment: [String: String]

    /// - Parameter environment: the environment the helper gets (proxy and
    ///   certificate variables matter to it) and where `FOB_HTTP_HELPER`
    ///   may name the helper's path.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Where the helper is: `FOB_HTTP_HELPER`, else next to the running
    /// program (`/proc/self/exe`), else on `PATH`.
    public static func locate(environment: [String: String]) -> String? {
        if let path = environment["FOB_HTTP_HELPER"], !path.isEmpty { return ExecutableLookup.find(path, environment: environment) }
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(helperName).path
            if access(sibling, X_OK) == 0 { return sibling }
        }
        return ExecutableLookup.find(helperName, environment: environment)
    }

    /// Sends `request` through the helper and waits, at most the request's
    /// timeout and 10 seconds more.
    /// - Throws: ``OAuthError/timeout(_:seconds:)``, ``OAuthError/network(_:)``
    ///   (also when the helper is missing or fails).
    public func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse {
        guard let path = HelperHTTPTransport.locate(environment: environment) else {
            throw .network("\(HelperHTTPTransport.helperName) is not installed next to fob")
        }
        signal(SIGPIPE, SIG_IGN)
        let input: (read: Int32, write: Int32), output: (read: Int32, write: Int32)
        do {
            input = try ChildProcessSpawner.makePipe()
            output = try ChildProcessSpawner.makePipe()
        } catch {
            throw .network("cannot start \(HelperHTTPTransport.helperName): \(error.description)")
        }
        let pid: pid_t
        do {
            pid = try ChildProcessSpawner.spawn(executable: path, arguments: [], environment: environment,
                                                standardInput: .descriptor(input.read), standardOutput: .descriptor(output.write),
                                                standardError: .null)
        } catch {
            [input.read, input.write, output.read, output.write].forEach { close($0) }
            throw .network("cannot start \(HelperHTTPTransport.helperName): \(error.description)")
        }
        close(input.read)
        close(output.write)
        let deadline = FileDescriptorIO.monotonicNow() + request.timeout + 10
        var message = HTTPWire.encode(request)
        let written = message.withUnsafeBytes { FileDescriptorIO.writeAll($0, to: input.write, deadline: deadline) }
        HTTPWire.wipe(&message)
        close(input.write)
        var answer: [UInt8] = []
        defer { HTTPWire.wipe(&answer) }
        var timedOut = written != .written
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !timedOut {
            var poller = pollfd(fd: output.read, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - FileDescriptorIO.monotonicNow()
            if remaining <= 0 { timedOut = true; break }
            let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR { break }
            if ready <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { FileDescriptorIO.read(output.read, into: $0) }
            if n <= 0 { break }
            answer += chunk[0..<n]
            if answer.count > HTTPWire.maxMessageBytes { timedOut = true; break }
        }
        HTTPWire.wipe(&chunk)
        close(output.read)
        if timedOut { kill(pid, SIGKILL) }
        let status = FileDescriptorIO.waitForExit(pid)
        if timedOut { throw .timeout(request.url.hostDescription, seconds: request.timeout) }
        guard let status, ChildProcessSpawner.exitCode(waitStatus: status) == 0 else {
            throw .network("\(HelperHTTPTransport.helperName) failed")
        }
        return try HTTPWire.decodeOutcome(answer)
    }
}
