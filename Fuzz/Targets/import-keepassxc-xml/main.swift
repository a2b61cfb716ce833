// KeePassXC's XML export (XMLParser), as fob import keepassxc-xml reads it,
// with the parser in-process (fob runs the same parser in fob-xml).
import FobImport
import FobXML

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? KeePassXML.read(Array(UnsafeBufferPointer(start: data, count: size)), parser: LibXMLEvents.parser)
    return 0
}
