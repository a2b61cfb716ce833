// The SSH agent's requests (frames from a socket peer, after the length):
// every byte string is a request or a typed error; the known_hosts reader
// and the destination-constraint reader take the same bytes.
import FobSSH

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? SSHAgentRequest.decode(bytes)
    _ = try? SSHKeyConstraints.destinations(wire: bytes)
    _ = try? SSHPublicKey(blob: bytes)
    _ = KnownHosts(text: String(decoding: bytes, as: UTF8.self))
    return 0
}
