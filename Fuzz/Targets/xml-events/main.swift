// The fob-xml helper's answer (XMLEventWire), as fob decodes it.
import FobImport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let list = try? XMLEventWire.decode(bytes) {
        // What decodes must encode back to the same events.
        precondition((try? XMLEventWire.decode(XMLEventWire.encode(list))) == list)
    }
    return 0
}
