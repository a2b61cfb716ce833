// RFC 4180 CSV and every CSV export format fob import reads.
import FobImport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? CSVReader.records(bytes)
    _ = try? CSVFormats.keepassxc(bytes)
    _ = try? CSVFormats.bitwarden(bytes)
    _ = try? CSVFormats.chrome(bytes)
    _ = try? CSVFormats.firefox(bytes)
    _ = try? CSVFormats.onePassword(bytes)
    _ = try? CSVFormats.fob(bytes)
    return 0
}
