import FobAccess
import FobAgent
import FobStore
import FoundationEssentials
@preconcurrency import Glibc

extension Invocation {
    /// The endpoint of this vault's agent.
    var agentEndpoint: AgentEndpoint {
        globals.access.agentEndpoint
    }

    /// Where the highest write counter of each vault is kept.
    var watermarks: VaultWatermarks { VaultWatermarks(environment: context.environment) }

    /// Keeps the write counter of `vault` (fully unlocked) when it grew.
    func keepWatermark(of vault: Vault) {
        guard let id = try? VaultWatermarks.id(of: vault), let counter = vault.writeCounter else { return }
        watermarks.raise(counter, of: id)
    }

    /// A client of this vault's agent, or `nil` with `--no-agent` / `FOB_AGENT=0`.
    var agentClient: AgentClient? {
        globals.useAgent ? AgentClient(endpoint: agentEndpoint) : nil
    }

    /// After a master password asked on the terminal unlocked `vault`, hands
    /// the vault key to the agent (starting it), so that the next command
    /// asks nothing and the key derivation is not run again; never after a
    /// password from `--password-file`, nor with `--no-agent`. A failure is
    /// reported on standard error and the command goes on.
    func handToAgentIfAsked(_ vault: Vault) {
        guard globals.passwordFile == nil, context.agentExecutable != nil, let client = agentClient else { return }
        do {
            try unlockAgent(client, with: vault, idle: AgentCore.defaultIdleSeconds, max: AgentCore.defaultMaxSeconds)
        } catch {
            standardError.write("fob: the agent was not unlocked: \(error)\n")
        }
    }

    /// The store of a command that works on items through the
    /// ``KeychainStore`` protocol (OAuth sessions, the logout wipe, `jwt`),
    /// with its route settled: the agent's when it holds this vault
    /// unlocked (no password, no key derivation), else the vault unlocked
    /// with the master password.
    /// - Returns: the store, and the vault opened for it (lock it when done).
    /// - Throws: as ``unlockedVault(handingToAgent:)``.
    func keychainStore() throws -> (store: any KeychainStore, vault: Vault?) {
        let access = items()
        try access.prepare()
        return (access, access.local.vault)
    }

    /// The item store of one command (``ItemAccess``): through the agent
    /// when it holds this vault unlocked, else on the vault itself, unlocked
    /// with the master password once for the whole command. A password
    /// asked on the terminal is then handed to the agent (started if
    /// needed), unless `--no-agent`; a password from `--password-file` never
    /// starts one, and opens the vault here even while the agent holds it
    /// unlocked. What is read here is recorded in the access log
    /// (``LocalAccessRecord``).
    func items() -> ItemAccess {
        let access = ItemAccess(
            settings: globals.access,
            password: .asking { [self] in
                do {
                    return try masterPassword(prompt: "Master password: ")
                } catch {
                    // Passed on as it is (Ctrl-C is 130, not 36): see FobCLI.run.
                    passwordFailure = error
                    throw error
                }
            })
        access.onLocalUnlock = { [self] vault in handToAgentIfAsked(vault) }
        // The master password given is its own proof: the vault is opened
        // here and what is read is recorded, not asked of the agent.
        access.opensItself = globals.passwordFile != nil
        access.record = accessRecord()
        access.onAgentUnusable = { [self] error in
            standardError.write("fob: \(error.description); not using the agent\n")
        }
        return access
    }

    /// The access log's record of what this command reads on a vault it
    /// opens itself with the master password: the command's channel, the
    /// program that ran `fob` as the requester; a failure to write is named
    /// on standard error.
    func accessRecord() -> LocalAccessRecord {
        let record = LocalAccessRecord(
            channel: AccessChannel.ofFobPeer(arguments: ["fob"] + (command.isEmpty ? [] : [command])),
            watermarks: watermarks)
        record.onFailure = { [self] why in standardError.write("fob: \(why)\n") }
        return record
    }

    /// Starts the agent when none answers, then unlocks it with `password`.
    /// - Throws: `.authFailed` for a wrong password; `.interactionNotAllowed`
    ///   for an unsafe socket directory or agent; `.io`.
    func unlockAgent(_ client: AgentClient, password: SecretBytes, idle: UInt32, max: UInt32) throws(KeychainError) {
        try unlockAgent(client, request: .unlock(password: password, idleSeconds: idle, maxSeconds: max))
    }

    /// Starts the agent when none answers, then hands it the vault key of
    /// `vault`, which this process has unlocked: the agent runs no key
    /// derivation of its own.
    /// - Throws: `.interactionNotAllowed` when `vault` is not fully unlocked
    ///   or for an unsafe socket directory or agent; `.io`.
    func unlockAgent(_ client: AgentClient, with vault: Vault, idle: UInt32, max: UInt32) throws(KeychainError) {
        let key = try vault.vaultKeyCopy()
        try unlockAgent(client, request: .unlockWithKey(vaultKey: key, idleSeconds: idle, maxSeconds: max))
    }

    private func unlockAgent(_ client: AgentClient, request: AgentRequest) throws(KeychainError) {
        try startAgentIfNeeded(client)
        let answer: AgentResponse
        do {
            answer = try client.send(request)
        } catch .protocolError(.versionMismatch(let old)) where old < AgentProtocol.version {
            // An agent of an older fob: without its socket it exits (it
            // serves only while its socket is there); one of this version
            // takes its place.
            unlink(client.endpoint.socket)
            standardError.write(
                "fob: the agent spoke protocol version \(old), this fob speaks \(AgentProtocol.version); "
                    + "starting a new agent\n")
            try startAgentIfNeeded(client)
            do { answer = try client.send(request) } catch { throw error.keychainError }
        } catch {
            throw error.keychainError
        }
        switch answer {
        case .ok: return
        case .failure(let error): throw error
        default: throw .io("agent: unexpected answer to unlock")
        }
    }

    func startAgentIfNeeded(_ client: AgentClient) throws(KeychainError) {
        guard !AgentClient.isAnswering(client.endpoint) else { return }
        guard let executable = context.agentExecutable else {
            throw .interactionNotAllowed(
                "no agent runs for \(client.endpoint.vault), and this program cannot start one")
        }
        var environment: [String: String] = [:]
        for name in [
            "HOME", "PATH", "LANG", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME", "TMPDIR",
            "FOB_AGENT_SOCKET",
            // What the consent question's pinentry needs to find and show itself.
            "FOB_PINENTRY", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
        ] {
            environment[name] = context.environment[name]
        }
        do {
            try client.start(executable: executable, vaultPath: client.endpoint.vault, environment: environment)
        } catch {
            throw error.keychainError
        }
    }

    /// Locks the agent of this vault fully, if one runs (after `passwd`, logout).
    func lockAgentIfRunning() {
        _ = try? AgentClient(endpoint: agentEndpoint).send(.lock)
    }
}

extension AgentResponse {
    /// The response, or its error thrown.
    func thrown() throws(KeychainError) -> AgentResponse {
        if case .failure(let error) = self { throw error }
        return self
    }
}
