// Private key files given to `fob ssh import`: OpenSSH's format, PKCS #8,
// PKCS #1 and SEC 1 PEM: every byte string is keys or a typed error.
import FobSSH

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? SSHKeyFile.read(bytes)
    return 0
}
