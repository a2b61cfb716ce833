import FobSystem
import FoundationEssentials

/// How `fob` and its network helper, `fob-http`, exchange one HTTP request
/// and its outcome over a pipe: one JSON object each way (RFC 8259), bodies
/// in standard base64. The helper runs libcurl, so `fob` itself never
/// loads a network library.
///
/// Request: `{"method", "url", "headers": {name: value}, "body": base64, "timeout": seconds}`.
/// Outcome: `{"status", "headers", "body": base64}`, or
/// `{"error": "timeout", "what", "seconds"}` / `{"error": "network", "message"}`.
///
/// - Important: both hold credentials (an `Authorization` header, a code or
///   refresh token in a body); they travel only through the helper's pipes.
public enum HTTPWire {
    /// The longest message either side reads, in bytes (16 MiB).
    public static let maxMessageBytes = 16 << 20

    /// The request as the helper reads it.
    public static func encode(_ request: HTTPRequest) -> [UInt8] {
        json([
            "method": .string(request.method), "url": .string(request.url.absoluteString),
            "headers": strings(request.headers), "body": .string(Data(request.body).base64EncodedString()),
            "timeout": .double(request.timeout),
        ])
    }

    /// Reads a request written by ``encode(_:)-(HTTPRequest)``.
    /// - Throws: ``OAuthError/network(_:)`` naming what is malformed.
    public static func decodeRequest(_ bytes: [UInt8]) throws(OAuthError) -> HTTPRequest {
        let object = try parse(bytes)
        guard let method = object["method"]?.string, ["GET", "POST"].contains(method),
            let text = object["url"]?.string, let url = URL(string: text),
            let headers = strings(object["headers"]),
            let body = object["body"]?.string.flatMap({ Data(base64Encoded: $0) }),
            let timeout = object["timeout"]?.number, timeout.isFinite, timeout > 0, timeout <= 3600
        else {
            throw .network("the HTTP helper got a malformed request")
        }
        return HTTPRequest(method: method, url: url, headers: headers, body: Array(body), timeout: timeout)
    }

    /// The helper's answer: the response, or the transport error.
    public static func encode(_ outcome: Result<HTTPResponse, OAuthError>) -> [UInt8] {
        switch outcome {
        case .success(let response):
            return json([
                "status": .integer(Int64(response.status)), "headers": strings(response.headers),
                "body": .string(Data(response.body).base64EncodedString()),
            ])
        case .failure(.timeout(let what, let seconds)):
            return json(["error": "timeout", "what": .string(what), "seconds": .double(seconds)])
        case .failure(let error):
            return json(["error": "network", "message": .string(error.description)])
        }
    }

    /// Reads the helper's answer.
    /// - Returns: the response, whatever its status.
    /// - Throws: the ``OAuthError/timeout(_:seconds:)`` or ``OAuthError/network(_:)``
    ///   the helper reported, or `.network` for a malformed answer.
    public static func decodeOutcome(_ bytes: [UInt8]) throws(OAuthError) -> HTTPResponse {
        let object = try parse(bytes)
        switch object["error"]?.string {
        case "timeout":
            let seconds = object["seconds"]?.number ?? 0
            throw .timeout(object["what"]?.string ?? "the provider", seconds: seconds.isFinite ? seconds : 0)
        case "network":
            throw .network(object["message"]?.string ?? "the HTTP helper failed")
        case nil:
            guard let number = object["status"]?.number, let status = Int(exactly: number.rounded(.towardZero)),
                (100...599).contains(status),
                let headers = strings(object["headers"]),
                let body = object["body"]?.string.flatMap({ Data(base64Encoded: $0) })
            else {
                throw .network("the HTTP helper answered something malformed")
            }
            return HTTPResponse(status: status, headers: headers, body: Array(body))
        default:
            throw .network("the HTTP helper answered something malformed")
        }
    }

    /// Zeroes `bytes` (`sodium_memzero`) and empties it: a message held a credential.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.wipe()
        bytes.removeAll()
    }

    private static func json(_ object: [String: JSONValue]) -> [UInt8] {
        Array(JSONText.text(object).utf8)
    }

    private static func strings(_ map: [String: String]) -> JSONValue { .object(map.mapValues { .string($0) }) }

    /// An object whose members are all strings, as a dictionary.
    private static func strings(_ value: JSONValue?) -> [String: String]? {
        guard let members = value?.object else { return nil }
        var map: [String: String] = [:]
        for (name, member) in members {
            guard let text = member.string else { return nil }
            map[name] = text
        }
        return map
    }

    private static func parse(_ bytes: [UInt8]) throws(OAuthError) -> [String: JSONValue] {
        guard bytes.count <= maxMessageBytes, let object = (try? JSONText.parse(bytes))?.object else {
            throw .network("the HTTP helper's message is not a JSON object")
        }
        return object
    }
}
