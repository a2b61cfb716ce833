// What Secret Service clients send: attribute dictionaries, CreateItem's
// properties, secret structs, object path lists, OpenSession's input and
// property values, built as D-Bus messages and read by the provider's decoders.
@_spi(Fuzz) import FobSecretService

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = SecretServiceFuzzEntryPoints.decodeMessage(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
