import FobImport
import FobStore
import FobSystem
import FobXML
import Glibc

// fob-xml: Fob's XML helper. Reads one XML document on standard input,
// parses it with libxml2's SAX2 parser and writes its events
// (XMLEventWire) on standard output, then exits 0. Started only by
// HelperXMLParser (`fob import keepassxc-xml`), so that `fob` itself loads
// no XML library. The document holds secrets: never logged, no core dumps.

ProcessHardening.forbidInspection()
let limit = 512 << 20
var input: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 65_536)
while input.count <= limit {
    let n = chunk.withUnsafeMutableBytes { FileDescriptorIO.read(0, into: $0) }
    if n <= 0 { break }
    input += chunk[0..<n]
}
chunk.wipe()
guard input.count <= limit else { exit(1) }
var answer = XMLEventWire.encode(LibXMLEvents.parse(input))
input.wipe()
FileDescriptorIO.writeAll(answer, to: 1)
answer.wipe()
exit(0)
