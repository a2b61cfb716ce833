// /proc/PID/cgroup of a requester, whose paths hold names the user chose
// (a cgroup made in a delegated subtree may contain ':' and any byte but
// '/' and a line break): every byte string is a path or "".
import FobStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = ProcessInspector.cgroup(procFile: Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
