// The Secret Service provider's locked-search index file, past its tag.
@_spi(Fuzz) import FobSecretService

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = SecretServiceFuzzEntryPoints.parseLockedIndex(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
