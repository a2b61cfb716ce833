import CSecretService
import CSystemd
@preconcurrency import Glibc

/// The provider the sd-bus callbacks use; set once by ``SecretServiceServer/run(vaultPath:store:replace:)``
/// and used on the bus loop's thread only.
nonisolated(unsafe) var activeProvider: Provider?

private func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

/// Sets `error` from what a handler threw and returns sd-bus's negative code.
private func fail(_ thrown: any Error, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    switch thrown {
    case let answer as ProviderError: return sd_bus_error_set(error, answer.name, answer.message)
    case let failure as BusFailure:
        if let reason = failure.reason { return sd_bus_error_set(error, "org.freedesktop.DBus.Error.Failed", reason) }
        return sd_bus_error_set(
            error, "org.freedesktop.DBus.Error.InvalidArgs", "the message cannot be read (error \(-failure.code))")
    default: return sd_bus_error_set(error, "org.freedesktop.DBus.Error.Failed", "\(thrown)")
    }
}

/// Every method of every interface (see CSecretService's vtables).
@_cdecl("fob_ss_call")
func fobSecretServiceCall(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let message, let provider = activeProvider else { return -EINVAL }
    let call = Call(
        message: message, path: string(sd_bus_message_get_path(message)),
        interface: string(sd_bus_message_get_interface(message)),
        member: string(sd_bus_message_get_member(message)), sender: string(sd_bus_message_get_sender(message)))
    // Reads made for this call name its sender, not the provider, to the agent.
    provider.store.client = sd_bus_message_get_bus(message).flatMap { SecretServiceServer.clientPID($0, call.sender) }
    var reply: OpaquePointer? = nil
    let rc = sd_bus_message_new_method_return(message, &reply)
    guard rc >= 0, let reply else { return rc }
    defer { sd_bus_message_unref(reply) }
    do {
        try provider.handle(call, BusWriter(message: reply))
    } catch let thrown {
        return fail(thrown, error)
    }
    let sent = sd_bus_send(nil, reply, nil)
    return sent < 0 ? sent : 1
}

/// Every property read.
@_cdecl("fob_ss_get_property")
func fobSecretServiceGetProperty(
    _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?,
    _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
    _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let reply, let provider = activeProvider else { return -EINVAL }
    do {
        try provider.property(string(path), string(interface), string(property), BusWriter(message: reply))
        return 1
    } catch let thrown {
        return fail(thrown, error)
    }
}

/// Every property write.
@_cdecl("fob_ss_set_property")
func fobSecretServiceSetProperty(
    _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?,
    _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
    _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let value, let provider = activeProvider else { return -EINVAL }
    do {
        try provider.setProperty(string(path), string(interface), string(property), BusReader(message: value))
        return 1
    } catch let thrown {
        return fail(thrown, error)
    }
}

/// Whether an item or session object is at `path`: 1 found, 0 not (sd-bus then answers UnknownObject).
@_cdecl("fob_ss_find")
func fobSecretServiceFind(
    _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?,
    _ userdata: UnsafeMutableRawPointer?, _ found: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let provider = activeProvider else { return 0 }
    return provider.exists(string(path), string(interface)) ? 1 : 0
}
