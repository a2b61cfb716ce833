import CCurl
import FobSystem
import FobTokens
import FoundationEssentials

/// Sends HTTP requests with libcurl's easy interface, for the `fob-http`
/// helper: no redirect is followed (a 3xx comes back as it is), nothing is
/// cached and no cookie is kept; only `http` and `https` URLs are fetched,
/// with the system's certificate store for TLS.
///
/// - Important: the request may hold a credential (an `Authorization`
///   header, a code or refresh token in the body): it goes to libcurl and
///   nowhere else, and the body buffer is wiped after the transfer.
public struct CurlTransport: HTTPTransport {
    /// The largest response body accepted, in bytes (8 MiB): an answer
    /// must fit the helper's message to `fob` once in base64.
    public static let maxBodyBytes = 8 << 20

    /// A transport; each request gets its own libcurl handle.
    public init() {}

    /// Sends `request` and waits for the whole response, at most
    /// `request.timeout` seconds.
    /// - Returns: the response, whatever its status.
    /// - Throws: ``OAuthError/timeout(_:seconds:)`` when the time runs
    ///   out, ``OAuthError/network(_:)`` with libcurl's reason otherwise.
    public func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse {
        CurlTransport.initialise
        guard let handle = curl_easy_init() else {
            throw .network("\(request.url.hostDescription): cannot start libcurl")
        }
        defer { curl_easy_cleanup(handle) }
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            headers = curl_slist_append(headers, "\(name): \(value)")
        }
        var body = request.body
        defer { body.wipe() }
        let sink = ResponseSink()
        let context = Unmanaged.passUnretained(sink).toOpaque()
        let timeout = max(1, Int((request.timeout * 1000).rounded(.up)))

        let code: CURLcode = body.withUnsafeBytes { bodyBytes in
            var setup = [
                fob_curl_set_text(handle, CURLOPT_URL, request.url.absoluteString),
                fob_curl_set_text(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                fob_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                fob_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
                fob_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeout),
                fob_curl_set_text(handle, CURLOPT_ACCEPT_ENCODING, ""),
                fob_curl_set_list(handle, CURLOPT_HTTPHEADER, headers),
                fob_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, ResponseSink.receiveBody),
                fob_curl_set_pointer(handle, CURLOPT_WRITEDATA, context),
                fob_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, ResponseSink.receiveHeader),
                fob_curl_set_pointer(handle, CURLOPT_HEADERDATA, context),
            ]
            if request.method == "POST" {
                setup.append(fob_curl_set_long(handle, CURLOPT_POST, 1))
                setup.append(fob_curl_set_size(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyBytes.count)))
                setup.append(
                    fob_curl_set_pointer(
                        handle, CURLOPT_POSTFIELDS, bodyBytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)))
            } else {
                setup.append(fob_curl_set_text(handle, CURLOPT_CUSTOMREQUEST, request.method))
            }
            if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
            return curl_easy_perform(handle)
        }
        switch code {
        case CURLE_OK:
            return HTTPResponse(status: Int(fob_curl_response_code(handle)), headers: sink.headers, body: sink.body)
        case CURLE_OPERATION_TIMEDOUT:
            throw .timeout(request.url.hostDescription, seconds: request.timeout)
        case CURLE_WRITE_ERROR where sink.tooLarge:
            throw .network(
                "\(request.url.hostDescription): the response is larger than \(CurlTransport.maxBodyBytes >> 20) MiB")
        default:
            let reason = String(cString: curl_easy_strerror(code))
            throw .network("\(request.url.hostDescription): \(reason)")
        }
    }

    /// `curl_global_init`, once per process, before the first handle.
    private static let initialise: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()
}

/// What libcurl hands the callbacks: the body, and the header lines of
/// the last response (a `100 Continue` or proxy answer before it is dropped).
private final class ResponseSink {
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var tooLarge = false

    static let receiveBody: fob_curl_data_callback = { data, size, count, context in
        let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        guard sink.body.count + length <= CurlTransport.maxBodyBytes else {
            sink.tooLarge = true
            return 0
        }
        if let data, length > 0 {
            sink.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
        }
        return length
    }

    static let receiveHeader: fob_curl_data_callback = { data, size, count, context in
        let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        guard let data, length > 0 else { return length }
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            sink.headers = [:]
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingSpacesAndNewlines()
            if let earlier = sink.headers[name] {
                sink.headers[name] = earlier + ", " + value
            } else {
                sink.headers[name] = value
            }
        }
        return length
    }
}
