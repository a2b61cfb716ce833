// Base32 (RFC 4648 §6): one-time secrets as people paste them.
import FobTokens

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let decoded = try? Base32.decode(bytes: UnsafeBufferPointer(start: data, count: size)) {
        let again = Base32.encode(decoded)
        precondition((try? Base32.decode(again)) == decoded, "base32 round trip")
    }
    return 0
}
