// A decrypted password-store entry: password line, key: value lines, notes.
import FobImport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? PassStore.parse(Array(UnsafeBufferPointer(start: data, count: size)), name: "site/entry")
    return 0
}
