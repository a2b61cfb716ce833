// The access log's files and entries: header, records, sealed entries, entry plaintext.
@_spi(Fuzz) import FobStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = StoreFuzzEntryPoints.readAccessLog(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
