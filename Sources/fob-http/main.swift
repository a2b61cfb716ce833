import FobHTTP
import FobSystem
import FobTokens
import Glibc

// fob-http: Fob's network helper. Reads one HTTP request (HTTPWire JSON) on
// standard input, sends it with libcurl, writes the outcome on standard
// output and exits 0; a malformed request is answered as a network error.
// Started only by Fob's HelperHTTPTransport, so that `fob` itself loads no
// network library. The request may hold credentials: never logged.

ProcessHardening.forbidInspection()
var input: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 65_536)
while input.count <= HTTPWire.maxMessageBytes {
    let n = chunk.withUnsafeMutableBytes { FileDescriptorIO.read(0, into: $0) }
    if n <= 0 { break }
    input += chunk[0..<n]
}
let outcome: Result<HTTPResponse, OAuthError>
do {
    let request = try HTTPWire.decodeRequest(input)
    outcome = .success(try CurlTransport().send(request))
} catch {
    outcome = .failure(error)
}
HTTPWire.wipe(&input)
var answer = HTTPWire.encode(outcome)
FileDescriptorIO.writeAll(answer, to: 1)
HTTPWire.wipe(&answer)
exit(0)
