import FobSystem
import FoundationEssentials

/// The live HTTP transport: each request runs in `fob-http`, a small helper
/// installed next to `fob`, which sends it with libcurl and answers on
/// its standard output (``HTTPWire``). So `fob` loads no network library
/// (libcurl pulls TLS, HTTP/2 and its whole tree) for commands that
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
        ExecutableLookup.helper(helperName, override: "FOB_HTTP_HELPER", environment: environment)
    }

    /// Sends `request` through the helper and waits, at most the request's
    /// timeout and 10 seconds more.
    /// - Throws: ``OAuthError/timeout(_:seconds:)``, ``OAuthError/network(_:)``
    ///   (also when the helper is missing or fails).
    public func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse {
        guard let path = HelperHTTPTransport.locate(environment: environment) else {
            throw .network("\(HelperHTTPTransport.helperName) is not installed next to fob")
        }
        var message = HTTPWire.encode(request)
        defer { HTTPWire.wipe(&message) }
        var result: ChildProcessResult
        do {
            result = try ChildProcessRunner.run(
                path, environment: environment, input: message, maxOutput: HTTPWire.maxMessageBytes,
                timeout: request.timeout + 10)
        } catch .timedOut, .tooLarge {
            throw .timeout(request.url.hostDescription, seconds: request.timeout)
        } catch .notStarted(let why) {
            throw .network("cannot start \(HelperHTTPTransport.helperName): \(why)")
        } catch {
            throw .network("\(HelperHTTPTransport.helperName) failed")
        }
        defer { result.wipe() }
        guard result.succeeded else { throw .network("\(HelperHTTPTransport.helperName) failed") }
        return try HTTPWire.decodeOutcome(result.output)
    }
}
