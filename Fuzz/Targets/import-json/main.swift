// Bitwarden's JSON export and Fob's own fob-json.
import FobImport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? BitwardenJSON.read(bytes)
    _ = try? FobJSON.read(bytes)
    return 0
}
