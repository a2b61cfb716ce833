// An item's access rule, as sealed in its record (bytes from a vault file
// or a synced tree): every byte string is a rule or a typed error, and a
// rule read, encoded again, reads back as the same rule.
import FobStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let rule = try? AccessRule(encoded: bytes) else { return 0 }
    precondition((try? AccessRule(encoded: rule.encoded)) == rule, "an access rule did not survive its encoding")
    return 0
}
