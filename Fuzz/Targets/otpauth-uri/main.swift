import FobTokens
// One-time password URIs (otpauth://, Key Uri Format) and bare secrets.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let otp = try? OneTimePassword(parsing: UnsafeBufferPointer(start: data, count: size)) {
        _ = otp.description
    }
    return 0
}
