import CSystemd
import FobSystem
@preconcurrency import Glibc

/// A D-Bus message could not be read or written (an sd-bus error code, negative errno).
struct BusFailure: Error {
    /// The negative errno sd-bus returned.
    let code: Int32
    /// Why, when it is Fob's data rather than the message (answered as `Failed` with this text).
    var reason: String? = nil
}

/// Reads the arguments of an sd-bus message in order, with the non-variadic
/// calls (`read_basic`, `read_array`, `enter_container`), which Swift can call.
struct BusReader {
    /// The message (`sd_bus_message *`).
    let message: OpaquePointer

    private func check(_ rc: Int32) throws(BusFailure) -> Int32 {
        guard rc >= 0 else { throw BusFailure(code: rc) }
        return rc
    }

    /// A string-like argument (`s`, `o` or `g`).
    func string(_ type: Character = "s") throws(BusFailure) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        _ = try check(sd_bus_message_read_basic(message, CChar(type.asciiValue!), &pointer))
        guard let pointer else { throw BusFailure(code: -EINVAL) }
        return String(cString: pointer)
    }

    /// A boolean (`b`).
    func bool() throws(BusFailure) -> Bool {
        var value: Int32 = 0
        _ = try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value))
        return value != 0
    }

    /// A byte array (`ay`), copied.
    func bytes() throws(BusFailure) -> [UInt8] {
        var pointer: UnsafeRawPointer? = nil
        var size = 0
        _ = try check(sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &size))
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// A byte array (`ay`) straight into wiped-on-free memory.
    func secretBytes() throws(BusFailure) -> SecretBytes {
        var pointer: UnsafeRawPointer? = nil
        var size = 0
        _ = try check(sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &size))
        guard let pointer, size > 0 else { return SecretBytes([]) }
        return SecretBytes(count: size) {
            UnsafeMutableRawBufferPointer($0).copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: size))
        }
    }

    /// Enters a container; `false` at the end of the enclosing array.
    func enter(_ type: Character, _ contents: String) throws(BusFailure) -> Bool {
        try check(sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents)) > 0
    }

    /// Leaves the innermost container.
    func exit() throws(BusFailure) { _ = try check(sd_bus_message_exit_container(message)) }

    /// An array of object paths (`ao`).
    func objectPaths() throws(BusFailure) -> [String] {
        _ = try enter("a", "o")
        var paths: [String] = []
        while true {
            var pointer: UnsafePointer<CChar>? = nil
            let rc = try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "o")), &pointer))
            guard rc > 0, let pointer else { break }
            paths.append(String(cString: pointer))
        }
        try exit()
        return paths
    }

    /// A string dictionary (`a{ss}`); a repeated key keeps its last value.
    func stringDictionary() throws(BusFailure) -> [String: String] {
        _ = try enter("a", "{ss}")
        var result: [String: String] = [:]
        while try enter("e", "ss") {
            let key = try string()
            result[key] = try string()
            try exit()
        }
        try exit()
        return result
    }

    /// The contents signature of the variant at the read position.
    func variantSignature() throws(BusFailure) -> String {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>? = nil
        _ = try check(sd_bus_message_peek_type(message, &type, &contents))
        guard type == CChar(UInt8(ascii: "v")), let contents else { throw BusFailure(code: -ENXIO) }
        return String(cString: contents)
    }

    /// Skips the next complete value of signature `types`.
    func skip(_ types: String) throws(BusFailure) { _ = try check(sd_bus_message_skip(message, types)) }

    /// A secret struct `(oayays)`: session, parameters, value, content type.
    func secret() throws(BusFailure) -> (session: String, parameters: [UInt8], value: [UInt8], contentType: String) {
        _ = try enter("r", "oayays")
        let session = try string("o")
        let parameters = try bytes()
        let value = try bytes()
        let contentType = try string()
        try exit()
        return (session, parameters, value, contentType)
    }
}

/// Appends values to an sd-bus message with the non-variadic calls.
struct BusWriter {
    /// The message (`sd_bus_message *`).
    let message: OpaquePointer

    private func check(_ rc: Int32) throws(BusFailure) {
        guard rc >= 0 else { throw BusFailure(code: rc) }
    }

    /// A string-like value (`s` or `o`).
    /// - Throws: a ``BusFailure`` with a reason for a value holding a NUL
    ///   byte, which a D-Bus string cannot carry (it would be cut there).
    func string(_ value: String, _ type: Character = "s") throws(BusFailure) {
        guard !value.utf8.contains(0) else {
            throw BusFailure(
                code: -EINVAL,
                reason: "a name or attribute holds a NUL byte, which a D-Bus string cannot carry;"
                    + " rename the item with `fob mv` (or change the attribute)")
        }
        try check(value.withCString { sd_bus_message_append_basic(message, CChar(type.asciiValue!), $0) })
    }

    /// A boolean (`b`).
    func bool(_ value: Bool) throws(BusFailure) {
        var v: Int32 = value ? 1 : 0
        try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &v))
    }

    /// A 64-bit unsigned integer (`t`).
    func uint64(_ value: UInt64) throws(BusFailure) {
        var v = value
        try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "t")), &v))
    }

    /// A byte array (`ay`).
    func bytes(_ value: [UInt8]) throws(BusFailure) {
        try check(
            value.withUnsafeBytes {
                sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), $0.baseAddress, $0.count)
            })
    }

    /// Opens a container.
    func open(_ type: Character, _ contents: String) throws(BusFailure) {
        try check(sd_bus_message_open_container(message, CChar(type.asciiValue!), contents))
    }

    /// Closes the innermost container.
    func close() throws(BusFailure) { try check(sd_bus_message_close_container(message)) }

    /// An array of object paths (`ao`).
    func objectPaths(_ paths: [String]) throws(BusFailure) {
        try open("a", "o")
        for path in paths { try string(path, "o") }
        try close()
    }

    /// A string dictionary (`a{ss}`), keys sorted.
    func stringDictionary(_ dictionary: [String: String]) throws(BusFailure) {
        try pairs(dictionary.sorted(by: { $0.key < $1.key }))
    }

    /// String pairs as a dictionary (`a{ss}`), in the order given.
    func pairs(_ pairs: [(key: String, value: String)]) throws(BusFailure) {
        try open("a", "{ss}")
        for (key, value) in pairs {
            try open("e", "ss")
            try string(key)
            try string(value)
            try close()
        }
        try close()
    }

    /// A secret struct `(oayays)`.
    func secret(session: String, parameters: [UInt8], value: [UInt8], contentType: String) throws(BusFailure) {
        try open("r", "oayays")
        try string(session, "o")
        try bytes(parameters)
        try bytes(value)
        try string(contentType)
        try close()
    }
}
