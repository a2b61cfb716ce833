// The Secret Service's DH transfer: a client's public key, IV and ciphertext.
@_spi(Fuzz) import FobSecretService

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = SecretServiceFuzzEntryPoints.openTransfer(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
