import CSystemd
import FoundationEssentials

/// An Unlock waiting for the vault: it completes when the agent holds the
/// vault unlocked (the password given to pinentry, or `fob unlock` in a
/// terminal), and is dismissed by `Dismiss`, by its timeout, when its
/// client leaves the bus, or when its pinentry ends without unlocking.
struct PendingPrompt {
    /// The unique name of the connection that got it.
    let owner: String
    /// The objects the Unlock named, returned when it completes.
    let objects: [String]
    /// When it is dismissed unless completed (monotonic seconds).
    let deadline: Double
    /// Whether the client called `Prompt` (only then does it complete).
    var started = false
}

extension Provider {
    /// How long a prompt waits for the vault to be unlocked: 5 minutes.
    static let promptTimeout: Double = 300
    static let promptPrefix = root + "/prompt/"
    /// The most prompts one connection may hold at once: 8.
    static let promptsPerConnection = 8

    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// A new prompt for `owner`'s Unlock of `objects`; returns its path (unguessable).
    /// - Throws: `LimitsExceeded` when `owner` holds ``promptsPerConnection`` prompts.
    func makePrompt(owner: String, objects: [String]) throws(ProviderError) -> String {
        guard prompts.values.lazy.filter({ $0.owner == owner }).count < Provider.promptsPerConnection else {
            throw .limitsExceeded(
                "this connection holds \(Provider.promptsPerConnection) prompts, the most it may; dismiss one first")
        }
        let path = Provider.promptPrefix + ObjectName.random()
        prompts[path] = PendingPrompt(owner: owner, objects: objects, deadline: Provider.now() + Provider.promptTimeout)
        return path
    }

    /// `Prompt(window-id)` and `Dismiss()` of the prompt at `call.path`,
    /// for the connection that got it only.
    func handlePrompt(_ call: Call) throws {
        guard let prompt = prompts[call.path] else { throw ProviderError.unknownObject(call.path) }
        guard prompt.owner == call.sender else {
            throw ProviderError.accessDenied("the prompt belongs to the connection whose Unlock made it")
        }
        switch call.member {
        case "Prompt":
            guard !prompt.started else { return }
            prompts[call.path]?.started = true
            askPassword()
            checkPrompts()
        case "Dismiss":
            complete(call.path, dismissed: true)
        default: throw ProviderError.notSupported("\(call.interface).\(call.member)")
        }
    }

    /// Whether a started prompt waits (the bus loop then wakes to check the vault).
    var hasStartedPrompts: Bool { prompts.values.contains { $0.started } }

    /// Completes started prompts when the vault is unlocked and dismisses expired ones.
    func checkPrompts() {
        guard !prompts.isEmpty else { return }
        let now = Provider.now()
        for (path, prompt) in prompts where prompt.deadline <= now { complete(path, dismissed: true) }
        guard hasStartedPrompts else { return }
        store.refresh()
        guard store.isUnlocked else {
            // Cancelled in pinentry, or pinentry could not run: every prompt
            // waiting on it is dismissed, as a client expects, rather than
            // waiting out the timeout.
            if pinentry?.gaveUp == true {
                pinentry = nil
                for (path, prompt) in prompts where prompt.started { complete(path, dismissed: true) }
            }
            return
        }
        // A completed prompt's pinentry has said BYE.
        pinentry = nil
        emitLockedChanged()
        for (path, prompt) in prompts where prompt.started { complete(path, dismissed: false) }
    }

    /// Starts pinentry when the vault is locked, a pinentry program exists
    /// and none runs yet (one asks for every waiting prompt); the prompts
    /// complete by the usual check once a password it read unlocked the vault.
    private func askPassword() {
        let environment = ProcessInfo.processInfo.environment
        guard pinentry == nil, !store.isUnlocked, let program = PinentryUnlock.program(environment) else { return }
        let unlocker = self.unlocker
        pinentry = PinentryUnlock.start(program: program, environment: environment) { password in
            (try? unlocker.unlock(password: password)) != nil
        }
    }

    /// Dismisses the prompts of a connection that left (ending pinentry when no other waits on it).
    func dropPrompts(of owner: String) {
        for (path, prompt) in prompts where prompt.owner == owner { prompts[path] = nil }
        endUnneededPinentry()
    }

    /// Ends pinentry once no started prompt waits for it.
    private func endUnneededPinentry() {
        guard !hasStartedPrompts, let running = pinentry else { return }
        pinentry = nil
        running.cancel()
    }

    /// Emits `Completed(dismissed, <ao>)` from the prompt at `path` and forgets it.
    private func complete(_ path: String, dismissed: Bool) {
        guard let prompt = prompts.removeValue(forKey: path) else { return }
        if dismissed { endUnneededPinentry() }
        var signal: OpaquePointer? = nil
        guard sd_bus_message_new_signal(bus, &signal, path, Interface.prompt, "Completed") >= 0, let signal else {
            return
        }
        defer { sd_bus_message_unref(signal) }
        let writer = BusWriter(message: signal)
        do {
            try writer.bool(dismissed)
            try writer.open("v", "ao")
            try writer.objectPaths(dismissed ? [] : prompt.objects)
            try writer.close()
        } catch {
            return
        }
        // To the client that asked only (other clients do not learn its objects).
        _ = sd_bus_message_set_destination(signal, prompt.owner)
        _ = sd_bus_send(bus, signal, nil)
    }
}
