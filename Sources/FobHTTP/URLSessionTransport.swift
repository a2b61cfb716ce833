import FobTokens
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP over `URLSession` (ephemeral: no cookies, no cache), blocking the
/// calling thread. Redirects are not followed: an OAuth endpoint that
/// redirects a request carrying credentials is reported, not obeyed.
public struct URLSessionTransport: HTTPTransport {
    /// The live transport.
    public init() {}

    /// Sends `request` on an ephemeral `URLSession` and blocks until the answer or the timeout.
    /// - Throws: ``OAuthError/timeout(_:seconds:)``, ``OAuthError/network(_:)``.
    public func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData,
            timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }

        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.timeoutIntervalForRequest = request.timeout
        configuration.timeoutIntervalForResource = request.timeout
        let session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        let box = ResultBox()
        let task = session.dataTask(with: urlRequest) { data, response, error in
            box.set(data: data, response: response, error: error)
        }
        task.resume()
        guard box.wait(seconds: request.timeout + 5) else {
            task.cancel()
            throw .timeout(request.url.hostDescription, seconds: request.timeout)
        }
        let (data, response, error) = box.value
        if let error {
            if let urlError = error as? URLError, urlError.code == .timedOut {
                throw .timeout(request.url.hostDescription, seconds: request.timeout)
            }
            throw .network("\(request.url.hostDescription): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw .network("\(request.url.hostDescription): not an HTTP response")
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let k = key as? String, let v = value as? String { headers[k] = v }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data.map { Array($0) } ?? [])
    }
}

/// Refuses every redirect, so credentials are never re-sent elsewhere.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// Hands a completion handler's result to the waiting thread.
private final class ResultBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var done = false
    private var stored: (Data?, URLResponse?, Error?) = (nil, nil, nil)

    func set(data: Data?, response: URLResponse?, error: Error?) {
        condition.lock()
        stored = (data, response, error)
        done = true
        condition.signal()
        condition.unlock()
    }

    /// Waits until a result is set; `false` after `seconds` without one.
    func wait(seconds: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !done {
            if !condition.wait(until: deadline) { return done }
        }
        return true
    }

    var value: (Data?, URLResponse?, Error?) {
        condition.lock()
        defer { condition.unlock() }
        return stored
    }
}
