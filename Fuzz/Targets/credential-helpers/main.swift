// What git (gitcredentials(7)) and docker (docker-credential-helpers) send
// the credential helpers on standard input, and fob run's --env-file.
import FobCLI

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = try? GitCredentialMessage.parse(bytes)
    _ = try? DockerCredentialRequest.parse(bytes)
    _ = try? EnvBinding.parseFile(Array(bytes))
    return 0
}
