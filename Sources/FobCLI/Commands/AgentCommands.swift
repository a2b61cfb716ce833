import FobAgent
import FobSSH
import FobStore
import FobSync
import FoundationEssentials
@preconcurrency import Glibc

extension Invocation {
    /// A `--idle`/`--max` value in seconds (0 = never).
    fileprivate func seconds(_ option: String, default fallback: UInt32) throws(UsageError) -> UInt32 {
        guard let text = arguments.value(option) else { return fallback }
        guard let value = UInt32(text), value <= 31_536_000 else {
            throw UsageError(
                "\(option) wants a whole number of seconds from 0 to 31536000, not '\(text)'", command: command)
        }
        return value
    }
}

/// `fob unlock [--idle S] [--max S]`: asks the master password once and
/// hands it to the agent of this vault, starting it when none runs.
enum UnlockCommand: FobCommand {
    static let name = "unlock"
    static let summary = "unlock the vault in the agent (started if needed)"
    static let options: [OptionSpec] = [
        .value("--idle", "SECONDS", help: "lock after SECONDS with no item use (default 900; 0 = never)"),
        .value("--max", "SECONDS", help: "lock SECONDS after unlocking (default 28800; 0 = never)"),
        .flag("--accept-rollback", help: "accept the vault as it is, older than one seen before (a backup restored)"),
    ]
    static let discussion = """
        Returns once the agent holds the vault unlocked: a command right after it
        needs no password. After --idle or --max the agent keeps only items saved
        with --accessible after-first-unlock; 'fob lock' drops everything.
        A vault older than one already seen (an old copy put back) is refused
        with exit 93; --accept-rollback takes it as the current state (after a
        backup restored on purpose), also with --no-agent.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let idle = try invocation.seconds("--idle", default: AgentCore.defaultIdleSeconds)
        let max = try invocation.seconds("--max", default: AgentCore.defaultMaxSeconds)
        if invocation.arguments.flag("--accept-rollback") {
            return try acceptRollback(invocation, idle: idle, max: max)
        }
        guard invocation.globals.useAgent else {
            throw UsageError("'unlock' needs the agent, which --no-agent or FOB_AGENT=0 turns off", command: name)
        }
        guard Vault.exists(at: invocation.globals.vaultURL) else {
            throw KeychainError.noSuchKeychain(invocation.globals.vaultURL.path)
        }
        let client = AgentClient(endpoint: invocation.agentEndpoint)
        // Already unlocked, and no new timeouts asked for: nothing to ask.
        if invocation.arguments.value("--idle") == nil, invocation.arguments.value("--max") == nil,
            AgentClient.isAnswering(client.endpoint),
            case .status(let status)? = try? client.send(.status), status.state == .unlocked
        {
            invocation.standardError.write("fob: already unlocked \(client.endpoint.vault)\n")
            return 0
        }
        let password = try invocation.masterPassword(prompt: "Master password: ")
        try invocation.unlockAgent(client, password: password, idle: idle, max: max)
        invocation.standardError.write("fob: unlocked \(client.endpoint.vault)\n")
        return 0
    }
}

extension UnlockCommand {
    /// `unlock --accept-rollback`: unlocks here, keeps the vault's write
    /// counter as the highest seen (lowering the one kept), then hands the
    /// vault key to the agent unless `--no-agent`.
    fileprivate static func acceptRollback(_ invocation: Invocation, idle: UInt32, max: UInt32) throws -> Int32 {
        let vault = try invocation.openVault()
        defer { vault.lock() }
        try vault.unlock(password: try invocation.masterPassword(prompt: "Master password: "))
        let counter = vault.writeCounter ?? 0
        invocation.watermarks.set(counter, of: try VaultWatermarks.id(of: vault))
        invocation.standardError.write(
            "fob: accepted \(invocation.globals.vaultURL.path) as it is now (write \(counter))\n")
        guard invocation.globals.useAgent else { return 0 }
        let client = AgentClient(endpoint: invocation.agentEndpoint)
        try invocation.unlockAgent(client, with: vault, idle: idle, max: max)
        invocation.standardError.write("fob: unlocked \(client.endpoint.vault)\n")
        return 0
    }
}

/// `fob lock`: locks the vault in the agent (every key dropped).
enum LockCommand: FobCommand {
    static let name = "lock"
    static let summary = "lock the vault everywhere: the agent drops every key"

    static func run(_ invocation: Invocation) throws -> Int32 {
        let client = AgentClient(endpoint: invocation.agentEndpoint)
        do {
            _ = try client.send(.lock).thrown()
            invocation.standardError.write("fob: locked \(client.endpoint.vault)\n")
        } catch AgentClientError.stopped {
            invocation.standardError.write("fob: no agent runs for \(client.endpoint.vault); nothing to lock\n")
        } catch let error as AgentClientError {
            throw error.keychainError
        }
        return 0
    }
}

/// `fob status [--json]`: the agent's state; not activity.
enum StatusCommand: FobCommand {
    static let name = "status"
    static let summary = "the agent's state: locked, unlocked or stopped"
    static let options: [OptionSpec] = [
        .flag("--json", help: "one JSON object: state, vault, socket, pid, idleSeconds, lockAt")
    ]
    static let discussion = """
        Never restarts the idle timer. idleSeconds is the time left before the idle
        lock; lockAt the time of the --max lock (ISO 8601, UTC). Exit status 0.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let endpoint = invocation.agentEndpoint
        var status: AgentStatus?
        do {
            if case .status(let answer) = try AgentClient(endpoint: endpoint).send(.status).thrown() { status = answer }
        } catch AgentClientError.stopped {
            status = nil
        } catch AgentClientError.unsafe(let why) {
            // Status reports; the cause goes to stderr once, and the agent is not used.
            invocation.standardError.write("fob: \(why); the agent is not used\n")
            status = nil
        } catch let error as AgentClientError {
            throw error.keychainError
        }
        let state = status.map { $0.state == .unlocked ? "unlocked" : "locked" } ?? "stopped"
        let lockAt = status?.maxSecondsLeft.map { ItemJSON.date(invocation.now.addingTimeInterval(Double($0))) }
        if invocation.arguments.flag("--json") {
            func quoted(_ text: String) -> String {
                var out: [UInt8] = []
                ItemJSON.appendString(text.utf8, to: &out)
                return String(decoding: out, as: UTF8.self)
            }
            var fields = [
                "\"state\":\"\(state)\"", "\"vault\":\(quoted(status?.vault ?? endpoint.vault))",
                "\"socket\":\(quoted(endpoint.socket))",
            ]
            fields.append("\"pid\":" + (status.map { String($0.pid) } ?? "null"))
            fields.append("\"idleSeconds\":" + (status?.idleSecondsLeft.map { String($0) } ?? "null"))
            fields.append("\"lockAt\":" + (lockAt.map { "\"\($0)\"" } ?? "null"))
            fields.append("\"afterFirstUnlock\":\(status?.state == .afterFirstUnlock)")
            let conflicts = SyncPaths.conflicts(
                vaultPath: invocation.globals.vaultURL.path, environment: invocation.context.environment)
            fields.append("\"conflicts\":" + (conflicts.map { String($0) } ?? "null"))
            return invocation.succeed(printing: "{" + fields.joined(separator: ",") + "}\n")
        }
        var text =
            "state: \(state)\(status?.state == .afterFirstUnlock ? " (after-first-unlock items readable)" : "")\n"
        text += "vault: \(status?.vault ?? endpoint.vault)\nsocket: \(endpoint.socket)\n"
        if let status {
            text += "pid: \(status.pid)\n"
            if let idle = status.idleSecondsLeft { text += "idle lock in: \(idle) s\n" }
            if let lockAt { text += "lock at: \(lockAt)\n" }
        }
        return invocation.succeed(printing: text)
    }
}

extension AgentCommand {
    /// The vault's SSH agent socket, served by the same process (one unlock covers it).
    /// - Parameter passed: the listening socket systemd's `fob-ssh-agent.socket` passed, or `nil` to bind one.
    fileprivate static func sshListener(
        _ invocation: Invocation, endpoint: AgentEndpoint, core: AgentCore, passed: Int32?
    ) throws -> SSHAgentListener {
        let environment = invocation.context.environment
        let home = environment["HOME"] ?? "/"
        let clock = BootClock()
        let service = SSHAgentService(
            source: VaultSSHKeys(core: core),
            approval: VaultSSHApproval(core: core, password: SSHUnlockPrompt(environment: environment).password(for:)),
            knownHosts: { KnownHosts(paths: KnownHosts.defaultPaths(home: home)) },
            log: { line in
                let text = Array("fob: \(line)\n".utf8)
                _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            }, now: { clock.seconds })
        let listener = SSHAgentListener(endpoint: endpoint, service: service)
        if let passed { try listener.adopt(listener: passed) } else { try listener.bind() }
        listener.start()
        return listener
    }
}

extension AgentCommand {
    /// Which of the sockets a service manager passed is the agent's
    /// (`fob-agent.socket`) and which the SSH agent's (`fob-ssh-agent.socket`),
    /// told apart by the path each is bound to; `nil` for one not passed.
    /// - Throws: `.param` for more than two, or one bound elsewhere or passed twice.
    fileprivate static func passedSockets(_ count: Int, endpoint: AgentEndpoint) throws -> (Int32?, Int32?) {
        guard count <= 2 else {
            throw KeychainError.param("the service manager passed \(count) sockets; the agent takes two at most")
        }
        var agent: Int32? = nil
        var ssh: Int32? = nil
        let sshPath = SSHAgentListener.socketPath(for: endpoint)
        for fd in SocketActivation.firstDescriptor..<SocketActivation.firstDescriptor + Int32(count) {
            // The one not bound to the SSH socket's path goes to the agent's server, which checks its path.
            if SocketActivation.boundPath(fd) == sshPath && ssh == nil {
                ssh = fd
            } else if agent == nil {
                agent = fd
            } else {
                throw KeychainError.param("the service manager passed two sockets for the same path")
            }
        }
        return (agent, ssh)
    }
}

/// `fob agent`: runs the agent of this vault in the foreground.
enum AgentCommand: FobCommand {
    static let name = "agent"
    static let summary = "run this vault's agent in the foreground"
    static let options: [OptionSpec] = [
        .flag("--detach", help: "start the agent in its own session and return at once (as 'unlock' does)")
    ]
    static let discussion = """
        Listens on $XDG_RUNTIME_DIR/fob/ (else /tmp/fob-UID/), created 0700, and
        serves this user only. Starts locked; 'fob unlock' unlocks it. Stops on
        SIGTERM, SIGINT or SIGHUP, wiping every key. Exit 45 if an agent already
        runs for this vault. Started by systemd's fob-agent.socket (and
        fob-ssh-agent.socket), it takes the sockets passed (LISTEN_FDS) for the
        default vault, which need not exist yet.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let detach = invocation.arguments.flag("--detach")
        // A socket passed by the service manager (fob-agent.socket) is for this process only.
        let passed =
            detach ? 0 : SocketActivation.passedCount(environment: invocation.context.environment, pid: getpid())
        if passed > 0 { SocketActivation.forget() }
        guard passed > 0 || Vault.exists(at: invocation.globals.vaultURL) else {
            throw KeychainError.noSuchKeychain(invocation.globals.vaultURL.path)
        }
        let endpoint = invocation.agentEndpoint
        if detach {
            guard let executable = invocation.context.agentExecutable else {
                throw KeychainError.io("cannot find this program to start the agent")
            }
            do {
                _ = try AgentClient.spawnDetached(
                    executable: executable, vaultPath: endpoint.vault, environment: invocation.context.environment)
            } catch {
                throw error.keychainError
            }
            return 0
        }
        // The agent holds the keys and nobody needs to name it: closed to
        // ptrace and to reading its /proc files, unlike its clients.
        ProcessHardening.forbidInspection()
        let core = AgentCore(
            vaultURL: URL(fileURLWithPath: endpoint.vault),
            watermarks: VaultWatermarks(environment: invocation.context.environment))
        // The requester's own terminal first; pinentry for one with none.
        core.gate.askers = [
            core.terminalUI, TerminalAsker(), PinentryAsker(environment: invocation.context.environment),
        ]
        let server = AgentServer(endpoint: endpoint, core: core)
        let (agentSocket, sshSocket) = try passedSockets(passed, endpoint: endpoint)
        if let agentSocket { try server.adopt(listener: agentSocket) } else { try server.bind() }
        let ssh = try sshListener(invocation, endpoint: endpoint, core: core, passed: sshSocket)
        chdir("/")
        server.run()
        ssh.stop()
        return 0
    }
}
