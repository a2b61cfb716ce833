import FobAgent
import FobStore
import FobSystem
import Foundation
@preconcurrency import Glibc

/// SSH agent figures (`fob-bench ssh`): `ssh-keygen -Y sign` through Fob's
/// SSH socket and through OpenSSH's own ssh-agent on the same Ed25519 key,
/// run in turn (the key's rule settled: the vault's default `any`), and
/// REQUEST_IDENTITIES answered for 100 keys, timed on one connection as
/// ssh keeps it. Runs the `fob` built next to this program and the system's
/// ssh-keygen, ssh-add and ssh-agent.
enum SSHBenchmark {
    static func run(scratch: URL) throws {
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let fob = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("fob").path
        guard FileManager.default.isExecutableFile(atPath: fob),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-agent")
        else {
            print("\nSSH agent: no fob next to fob-bench, or no OpenSSH; skipped")
            return
        }
        section("SSH agent (100 keys)")
        let runtime = scratch.appendingPathComponent("ssh-run")
        try BenchFiles.privateDirectory(runtime)
        let (password, passwordFile) = try BenchFiles.password(in: scratch)
        let url = scratch.appendingPathComponent("ssh/vault.db")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = try Vault.create(
            at: url, password: password, kdf: KDFParameters(opslimit: 1, memlimit: 8192), accessDefault: .any)
        let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        let env = ["PATH": path, "XDG_RUNTIME_DIR": runtime.path, "FOB_VAULT": url.path, "HOME": scratch.path]
        guard AgentBenchmark.run(fob, ["unlock", "--password-file", passwordFile], environment: env).status == 0 else {
            print("  unlock failed; skipped")
            return
        }
        defer {
            if let pid = AgentBenchmark.agentPID(fob, environment: env) { kill(pid_t(pid), SIGTERM) }
        }
        let key = scratch.appendingPathComponent("ssh/bench").path
        _ = AgentBenchmark.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key], environment: env)
        _ = AgentBenchmark.run(fob, ["ssh", "import", key], environment: env)
        for i in 1..<100 { _ = AgentBenchmark.run(fob, ["ssh", "keygen", "k\(i)"], environment: env) }
        let socket = SSHAgentListener.socketPath(for: AgentEndpoint(vaultURL: url, environment: env))
        identities(socket: socket)
        sign(key: key, fobSocket: socket, environment: env, scratch: scratch)
        try SSHPartsBenchmark.run(scratch: scratch)
    }

    /// REQUEST_IDENTITIES on one connection: the first answer, then the median of 200.
    static func identities(socket: String) {
        guard let fd = connect(socket) else {
            print("  cannot connect to \(socket)")
            return
        }
        defer { close(fd) }
        var count = 0
        func ask() {
            let request: [UInt8] = [0, 0, 0, 1, 11]
            _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard let head = readExactly(fd, 4) else { return }
            let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
            guard length >= 5, length < 1 << 20, let answer = readExactly(fd, length) else { return }
            count = Int(answer[1]) << 24 | Int(answer[2]) << 16 | Int(answer[3]) << 8 | Int(answer[4])
        }
        let first = (try? time(ask)) ?? 0
        let t = AgentBenchmark.median(200, ask)
        print("  " + pad("REQUEST_IDENTITIES, first") + String(format: "%10.2f ms   %d keys", first * 1000, count))
        print("  " + pad("REQUEST_IDENTITIES (median of 200)") + String(format: "%10.2f ms", t))
    }

    /// A connection to the Unix socket at `path`, or `nil`.
    static func connect(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// `count` bytes from `fd`, or `nil` at the end or on an error.
    static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    /// `ssh-keygen -Y sign` of empty data through Fob and through OpenSSH's ssh-agent, in turn.
    static func sign(key: String, fobSocket: String, environment: [String: String], scratch: URL) {
        let openSocket = scratch.appendingPathComponent("ssh/openssh.sock").path
        guard
            let agent = try? ChildProcessSpawner.spawn(
                executable: "/usr/bin/ssh-agent", arguments: ["-D", "-a", openSocket], environment: environment,
                standardInput: .null, standardOutput: .null, standardError: .null)
        else {
            print("  ssh-agent cannot start")
            return
        }
        defer {
            kill(agent, SIGTERM)
            var status: Int32 = 0
            waitpid(agent, &status, 0)
        }
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: openSocket) { usleep(10_000) }
        var openEnv = environment
        openEnv["SSH_AUTH_SOCK"] = openSocket
        _ = AgentBenchmark.run("/usr/bin/ssh-add", ["-q", key], environment: openEnv)
        var fobEnv = environment
        fobEnv["SSH_AUTH_SOCK"] = fobSocket
        let arguments = ["-Y", "sign", "-f", key + ".pub", "-n", "file"]
        var statuses: (Int32, Int32) = (0, 0)
        let (viaFob, viaOpenSSH) = AgentBenchmark.interleaved(
            50,
            fob: { statuses.0 = AgentBenchmark.run("/usr/bin/ssh-keygen", arguments, environment: fobEnv).status },
            other: { statuses.1 = AgentBenchmark.run("/usr/bin/ssh-keygen", arguments, environment: openEnv).status })
        print(
            "  " + pad("ssh-keygen -Y sign through Fob (median of 50)")
                + String(format: "%10.2f ms   exit %d", viaFob.wall, statuses.0))
        print(
            "  " + pad("ssh-keygen -Y sign through ssh-agent")
                + String(
                    format: "%10.2f ms   exit %d   Fob %+.2f ms", viaOpenSSH.wall, statuses.1,
                    viaFob.wall - viaOpenSSH.wall))
    }
}
