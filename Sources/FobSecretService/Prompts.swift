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

    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// A new prompt for `owner`'s Unlock of `objects`; returns its path.
    func makePrompt(owner: String, objects: [String]) -> String {
        promptCounter += 1
        let path = Provider.promptPrefix + "p\(promptCounter)"
        prompts[path] = PendingPrompt(owner: owner, objects: objects, deadline: Provider.now() + Provider.promptTimeout)
        return path
    }

    /// `Prompt(window-id)` and `Dismiss()` of the prompt at `call.path`.
    func handlePrompt(_ call: Call) throws {
        guard prompts[call.path] != nil else { throw ProviderError.unknownObject(call.path) }
        switch call.member {
        case "Prompt":
            guard prompts[call.path]?.started == false else { return }
            prompts[call.path]?.started = true
            askPassword(for: call.path)
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
            // Cancelled in pinentry, or pinentry could not run: dismissed, as
            // a client expects, rather than waiting out the timeout.
            for (path, pinentry) in pinentries where pinentry.gaveUp { complete(path, dismissed: true) }
            return
        }
        emitLockedChanged()
        for (path, prompt) in prompts where prompt.started { complete(path, dismissed: false) }
    }

    /// Starts pinentry for the prompt at `path` when the vault is locked and
    /// a pinentry program exists; the prompt completes by the usual check
    /// once a password it read unlocked the vault.
    private func askPassword(for path: String) {
        let environment = ProcessInfo.processInfo.environment
        guard !store.isUnlocked, let program = PinentryUnlock.program(environment) else { return }
        let unlocker = self.unlocker
        pinentries[path] = PinentryUnlock.start(program: program, environment: environment) { password in
            (try? unlocker.unlock(password: password)) != nil
        }
    }

    /// Dismisses the prompts of a connection that left (ending their pinentry).
    func dropPrompts(of owner: String) {
        for (path, prompt) in prompts where prompt.owner == owner {
            prompts[path] = nil
            pinentries.removeValue(forKey: path)?.cancel()
        }
    }

    /// Emits `Completed(dismissed, <ao>)` from the prompt at `path` and forgets it.
    private func complete(_ path: String, dismissed: Bool) {
        guard let prompt = prompts.removeValue(forKey: path) else { return }
        // A completed prompt's pinentry has said BYE; a dismissed one is ended.
        let pinentry = pinentries.removeValue(forKey: path)
        if dismissed { pinentry?.cancel() }
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
        _ = sd_bus_send(bus, signal, nil)
    }
}
