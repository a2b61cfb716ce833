// fob-secret-service: the Secret Service provider (org.freedesktop.secrets)
// that `fob secret-service` runs. sd-bus lives in this program only.
// Usage: fob-secret-service --vault PATH [--replace]
import FobSecretService
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

// No core dumps, no ptrace by other users' processes: secrets pass through here.
ProcessHardening.apply()

var arguments = CommandLine.arguments.dropFirst()
var vaultPath: String? = nil
var replace = false
while let argument = arguments.popFirst() {
    switch argument {
    case "--replace": replace = true
    case "--vault": vaultPath = arguments.popFirst()
    default:
        _ = FileDescriptorIO.writeAll(Array("fob-secret-service: unknown argument '\(argument)'\n".utf8), to: 2)
        exit(2)
    }
}
guard let vaultPath else {
    _ = FileDescriptorIO.writeAll(Array("usage: fob-secret-service --vault PATH [--replace]\n".utf8), to: 2)
    exit(2)
}
let store = AgentSecretStore(vaultPath: vaultPath, environment: ProcessInfo.processInfo.environment)
exit(SecretServiceServer.run(vaultPath: vaultPath, store: store, replace: replace))
