// SecItem dictionaries: what an application hands SecItemAdd, CopyMatching and Update.
@_spi(Fuzz) import FobSecurity

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = SecurityFuzzEntryPoints.decodeQuery(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
