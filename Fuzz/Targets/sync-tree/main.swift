// The sync tree's parsers: revision and head plaintexts, the header, the state item, epoch files, index shards, the device roster, signed envelopes, tree paths.
@_spi(Fuzz) import FobSync

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = SyncFuzzEntryPoints.parse(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
