// The loopback redirect listener's request parser (RFC 8252 §7.3).
import FobTokens

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let head = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = LoopbackRedirectListener.parse(head: head, expectedState: "st-1")
    return 0
}
