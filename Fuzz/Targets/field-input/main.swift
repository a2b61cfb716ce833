// --field NAME=VALUE arguments and the terminal UI's generator settings.
import FobStore
import FobViewModels

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? ItemFieldInput.visibleField(text)
    _ = try? GeneratorSpec.parse(text)
    return 0
}
