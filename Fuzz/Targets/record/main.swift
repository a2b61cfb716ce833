// Record decoding: the plaintext layout inside each item's authenticated encryption.
@_spi(Fuzz) import FobStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = StoreFuzzEntryPoints.decodeRecord(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
