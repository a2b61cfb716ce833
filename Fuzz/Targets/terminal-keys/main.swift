// Terminal key decoding: escape sequences, bracketed paste, any scalar value.
@_spi(Fuzz) import FobTerminal

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = TerminalFuzzEntryPoints.decodeKeys(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
