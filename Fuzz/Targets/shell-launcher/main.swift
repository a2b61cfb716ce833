// A requester's parent's argv, as /proc/PID/cmdline gives it (words a
// process chose): whether that shell only started Fob's program. The input
// is the shell's argv, NUL-separated, then a 0xFF byte and the started
// program's argv, NUL-separated. Every byte string is an answer, never a crash.
import FobStore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let halves = bytes.split(separator: 0xFF, maxSplits: 1, omittingEmptySubsequences: false)
    func argv(_ part: ArraySlice<UInt8>) -> [String] {
        part.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
    _ = ShellLauncher.onlyStarts(argv(halves.count > 1 ? halves[1] : []), shell: argv(halves[0]))
    return 0
}
