// Vault opening: a whole file as `fob` finds it, checked before any password.
@_spi(Fuzz) import FobStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = StoreFuzzEntryPoints.openVault(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
