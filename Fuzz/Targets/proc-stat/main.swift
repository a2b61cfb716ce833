// /proc/PID/stat, whose second field is a name the process chose (spaces
// and parentheses included): every byte string is the fields or nil.
import FobStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = ProcStat.parse(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
