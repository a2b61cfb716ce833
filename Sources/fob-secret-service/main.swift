// fob-secret-service: the Secret Service provider (org.freedesktop.secrets)
// that `fob secret-service` runs. sd-bus lives in this program only.
// Usage: fob-secret-service --vault PATH [--replace]
import FobSecretService
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

// No core dumps: secrets pass through here. Ptrace stays as for any program
// of the user: the agent names this provider by its /proc/PID/exe, which a
// non-dumpable process hides (see ProcessHardening).
ProcessHardening.forbidCoreDumps()

// Freed memory is overwritten (M_PERTURB, see fob_ss_tune_heap) only
// without glibc's per-thread cache, which is set when the process starts:
// run again with it off.
let heapTunable = "glibc.malloc.tcache_count=0"
let givenTunables = ProcessInfo.processInfo.environment["GLIBC_TUNABLES"]
if !(givenTunables ?? "").contains(heapTunable) {
    setenv("GLIBC_TUNABLES", givenTunables.map { $0 + ":" + heapTunable } ?? heapTunable, 1)
    var argv = CommandLine.arguments.map { strdup($0) } + [nil]
    execv("/proc/self/exe", &argv)
    // Without /proc: run on, with the cache, and the environment as given.
    if let givenTunables { setenv("GLIBC_TUNABLES", givenTunables, 1) } else { unsetenv("GLIBC_TUNABLES") }
}

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
