// KeePassXC's XML export (XMLParser), as fob import keepassxc-xml reads it.
import FobImport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? KeePassXML.read(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
