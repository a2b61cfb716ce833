import FobTokens
// JWT decoding (RFC 7519): a token item's secret or a provider's token.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let jwt = try? JWT(decoding: text) {
        _ = try? jwt.checkTimeClaims()
        _ = jwt.isExpired(at: Date(timeIntervalSince1970: 1_700_000_000))
        _ = jwt.expiresAt.date?.iso8601
        _ = jwt.algorithm
        _ = jwt.claims.count
    }
    return 0
}
