import CSecretService
import CSystemd
import FobAgent
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// The provider's process: connects to the session bus, takes the name
/// `org.freedesktop.secrets` before anything slow, and answers until the
/// bus goes away or another provider replaces it.
public enum SecretServiceServer {
    /// The well-known name of the Secret Service.
    public static let busName = "org.freedesktop.secrets"

    /// Runs the provider in the foreground.
    /// - Parameters:
    ///   - vaultPath: the vault file (for the collection's dates).
    ///   - store: the items.
    ///   - replace: take the name from a provider that allows replacement.
    /// - Returns: the exit status: 0 when replaced or the bus closed, 1 when
    ///   the name is taken or the bus cannot be reached (said on standard error).
    public static func run(vaultPath: String, store: any SecretStore, replace: Bool) -> Int32 {
        // Large answers (a listing, GetSecrets of every item) are given back once freed.
        _ = fob_ss_tune_heap()
        var opened: OpaquePointer? = nil
        let rc = sd_bus_open_user(&opened)
        guard rc >= 0, let bus = opened else {
            report("cannot connect to the session bus: \(String(cString: strerror(-rc)))")
            return 1
        }
        defer { sd_bus_flush_close_unref(bus) }
        // The objects first (no bus traffic), so no call finds the name without them.
        activeProvider = Provider(bus: bus, store: store, vaultPath: vaultPath)
        let registered = register(bus)
        guard registered >= 0 else {
            report("cannot register the objects: \(String(cString: strerror(-registered)))")
            return 1
        }
        var flags = UInt64(SD_BUS_NAME_ALLOW_REPLACEMENT)
        if replace { flags |= UInt64(SD_BUS_NAME_REPLACE_EXISTING) }
        let taken = sd_bus_request_name(bus, busName, flags)
        if taken == -EEXIST {
            // With REPLACE_EXISTING the bus answers EEXIST only when the owner refused replacement.
            if replace {
                report(
                    "\(busName) is provided by \(owner(bus)), which does not allow replacement;"
                        + " stop it first (docs/secret-service.md: \"Making Fob the desktop's keychain\")")
            } else {
                report(
                    "\(busName) is already provided by \(owner(bus)); `fob secret-service --replace` takes it"
                        + " over when that provider allows replacement (gnome-keyring does not: stop it first)")
            }
            return 1
        }
        guard taken >= 0 else {
            report("cannot take \(busName): \(String(cString: strerror(-taken)))")
            return 1
        }
        watchBus(bus)
        return loop(bus)
    }

    private static func register(_ bus: OpaquePointer) -> Int32 {
        let root = Provider.root
        var results = [
            sd_bus_add_object_vtable(bus, nil, root, Interface.service, fob_ss_service_vtable(), nil),
            sd_bus_add_fallback_vtable(
                bus, nil, Provider.itemPrefix.dropLast().description, Interface.item, fob_ss_item_vtable(),
                fob_ss_find, nil),
            sd_bus_add_fallback_vtable(
                bus, nil, String(Provider.sessionPrefix.dropLast()), Interface.session, fob_ss_session_vtable(),
                fob_ss_find, nil),
        ]
        // Every vtable of one node is a fallback or none is (sd-bus refuses
        // a mix): the collection shares its node with the items' fallback.
        results.append(
            sd_bus_add_fallback_vtable(
                bus, nil, Provider.collectionPath, Interface.collection, fob_ss_collection_vtable(), fob_ss_find, nil))
        results.append(
            sd_bus_add_fallback_vtable(
                bus, nil, String(Provider.promptPrefix.dropLast()), Interface.prompt, fob_ss_prompt_vtable(),
                fob_ss_find, nil))
        results += [
            sd_bus_add_fallback_vtable(
                bus, nil, Provider.sessionCollectionPath, Interface.collection, fob_ss_collection_vtable(), fob_ss_find,
                nil),
            sd_bus_add_fallback_vtable(
                bus, nil, Provider.sessionCollectionPath, Interface.item, fob_ss_item_vtable(), fob_ss_find, nil),
        ]
        for path in Provider.aliasPaths + [Provider.sessionAliasPath] {
            results.append(
                sd_bus_add_object_vtable(bus, nil, path, Interface.collection, fob_ss_collection_vtable(), nil))
        }
        return results.first { $0 < 0 } ?? 0
    }

    /// Ends the sessions of clients that leave, and stops when the name is lost.
    private static func watchBus(_ bus: OpaquePointer) {
        _ = sd_bus_match_signal(
            bus, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
            { message, _, _ in
                guard let message else { return 0 }
                let reader = BusReader(message: message)
                guard let name = try? reader.string(), (try? reader.string()) != nil, let new = try? reader.string(),
                    new.isEmpty, name.hasPrefix(":")
                else { return 0 }
                SecretServiceServer.clientPIDs.removeValue(forKey: name)
                activeProvider?.connectionLeft(name)
                return 0
            }, nil)
        _ = sd_bus_match_signal(
            bus, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameLost",
            { message, _, _ in
                guard let message, let name = try? BusReader(message: message).string(),
                    name == "org.freedesktop.secrets"
                else { return 0 }
                SecretServiceServer.report("another provider took org.freedesktop.secrets; stopping")
                exit(0)
            }, nil)
    }

    /// Set by SIGTERM and SIGINT: the loop saves what it must and returns.
    private static let stopRequested = Atomic<Bool>(false)

    private static func loop(_ bus: OpaquePointer) -> Int32 {
        // The wait returns EINTR at the signal (ppoll is never restarted).
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber) { _ in SecretServiceServer.stopRequested.store(true, ordering: .relaxed) }
        }
        while true {
            if stopRequested.load(ordering: .relaxed) {
                activeProvider?.saveIndex(now: true)
                return 0
            }
            activeProvider?.store.beginMessage()
            let processed = sd_bus_process(bus, nil)
            if processed < 0 {
                if processed == -ECONNRESET || processed == -ENOTCONN { return 0 }
                report("the bus failed: \(String(cString: strerror(-processed)))")
                return 1
            }
            if processed > 0 { continue }
            activeProvider?.signalChanges()
            activeProvider?.store.dropExpiredSecrets()
            activeProvider?.saveIndex()
            activeProvider?.store.forgetIfLocked()
            activeProvider?.checkPrompts()
            activeProvider?.watchLockState()
            let waited = wait(
                bus, wakeFD: activeProvider?.store.inbox.wakeFD ?? -1,
                microseconds: activeProvider?.wakeInterval ?? UInt64.max)
            if waited < 0 && waited != -EINTR {
                report("the bus failed: \(String(cString: strerror(-waited)))")
                return 1
            }
        }
    }

    /// Waits until the bus has work, the agent's feed delivered an event
    /// (`wakeFD` turned readable) or `microseconds` passed: `sd_bus_wait`
    /// with one more descriptor (sd-bus's `sd_bus_get_fd`,
    /// `sd_bus_get_events` and `sd_bus_get_timeout`).
    /// - Returns: as `sd_bus_wait`: a negative errno on failure.
    private static func wait(_ bus: OpaquePointer, wakeFD: Int32, microseconds: UInt64) -> Int32 {
        let events = sd_bus_get_events(bus)
        guard events >= 0 else { return events }
        var busDeadline: UInt64 = UInt64.max
        guard sd_bus_get_timeout(bus, &busDeadline) >= 0 else { return -EINVAL }
        var wait = microseconds
        if busDeadline != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            wait = min(wait, busDeadline > nowMicroseconds ? busDeadline - nowMicroseconds : 0)
        }
        var fds = [
            pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: events), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        // Rounded up, so that a wait of less than a millisecond is not a busy loop.
        let milliseconds = wait == UInt64.max ? -1 : Int32(clamping: (wait + 999) / 1000)
        let ready = poll(&fds, wakeFD >= 0 ? 2 : 1, milliseconds)
        return ready < 0 ? -errno : ready
    }

    /// The process id of each unique name that sent a method call, as the
    /// bus daemon reports it; dropped when the name leaves the bus (bus loop only).
    nonisolated(unsafe) private static var clientPIDs: [String: Int32] = [:]

    /// The process id of the connection with this unique name
    /// (`GetConnectionUnixProcessID`), asked once per name; `nil` when the
    /// bus does not say.
    static func clientPID(_ bus: OpaquePointer, _ sender: String) -> Int32? {
        guard sender.hasPrefix(":") else { return nil }
        if let known = clientPIDs[sender] { return known }
        guard let pid = processID(bus, sender), pid > 0, pid <= UInt32(Int32.max) else { return nil }
        if clientPIDs.count >= 4096 { clientPIDs.removeAll() }
        clientPIDs[sender] = Int32(pid)
        return Int32(pid)
    }

    private static func processID(_ bus: OpaquePointer, _ name: String) -> UInt32? {
        call(
            bus, "GetConnectionUnixProcessID", name,
            reply: { reader -> UInt32 in
                var value: UInt32 = 0
                guard sd_bus_message_read_basic(reader.message, CChar(UInt8(ascii: "u")), &value) > 0 else {
                    throw BusFailure(code: -EINVAL)
                }
                return value
            })
    }

    /// "pid N (EXECUTABLE)" of the name's owner, as the bus reports it.
    static func owner(_ bus: OpaquePointer) -> String {
        guard let unique = call(bus, "GetNameOwner", busName, reply: { try $0.string() }) else {
            return "another process"
        }
        guard let pid = processID(bus, unique) else { return "connection \(unique)" }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        let executable =
            length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return "pid \(pid) (\(executable))"
    }

    /// Calls a method of the bus daemon with one string argument.
    private static func call<T>(
        _ bus: OpaquePointer, _ member: String, _ argument: String, reply read: (BusReader) throws -> T
    ) -> T? {
        var message: OpaquePointer? = nil
        guard
            sd_bus_message_new_method_call(
                bus, &message, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", member) >= 0,
            let message
        else { return nil }
        defer { sd_bus_message_unref(message) }
        guard (try? BusWriter(message: message).string(argument)) != nil else { return nil }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var answer: OpaquePointer? = nil
        guard sd_bus_call(bus, message, 1_000_000, &error, &answer) >= 0, let answer else { return nil }
        defer { sd_bus_message_unref(answer) }
        return try? read(BusReader(message: answer))
    }

    static func report(_ text: String) {
        _ = FileDescriptorIO.writeAll(Array("fob secret-service: \(text)\n".utf8), to: 2)
    }
}
