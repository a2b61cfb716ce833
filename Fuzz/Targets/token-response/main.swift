import FobTokens
// OAuth token endpoint responses (RFC 6749 §5) and the stored token set they become.
import Foundation

let endpoint = URL(string: "https://idp.example/token")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    for status in [200, 400] {
        if let response = try? TokenResponse.parse(HTTPResponse(status: status, body: body), endpoint: endpoint) {
            let set = OAuthTokenSet(accessToken: "a", expiresAt: now, tokenEndpoint: endpoint, clientID: "c")
            let next = set.refreshed(with: response, now: now)
            _ = next.refreshMargin(atMost: 30)
            _ = try? OAuthTokenSet.decode(next.encoded())
        }
    }
    if let set = try? OAuthTokenSet.decode(body) {
        _ = TimeText.expiry(set.expiresAt, now: now)
        _ = set.refreshMargin(atMost: 30)
    }
    return 0
}
