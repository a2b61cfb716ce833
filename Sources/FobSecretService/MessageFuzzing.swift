import CSystemd
import FobSystem
@preconcurrency import Glibc
import Synchronization

/// The decoders of what clients send, run on messages that fuzz input
/// builds (see ``SecretServiceFuzzEntryPoints/decodeMessage(_:)``).
@_spi(Fuzz) public enum SecretServiceDecoder: UInt8, CaseIterable, Sendable {
    /// SearchItems' `a{ss}` attributes.
    case attributes
    /// CreateItem's `a{sv}` properties (label, attributes, others skipped).
    case itemProperties
    /// A secret struct `(oayays)` (CreateItem, SetSecret).
    case secret
    /// An `ao` (Unlock, Lock, GetSecrets).
    case objectPaths
    /// OpenSession's `sv`: the algorithm and its variant input.
    case sessionInput
    /// A property value set with `Properties.Set` (Label `s`, Attributes `a{ss}`).
    case propertyValue
}

@_spi(Fuzz) extension SecretServiceFuzzEntryPoints {
    /// A message body built from `bytes`, read back by one of the
    /// provider's decoders. The first byte picks the decoder (modulo
    /// ``SecretServiceDecoder/allCases``); the rest is a list of writes:
    /// `0` string, `1` object path, `2` byte array, `3` boolean, `4` `u`,
    /// `5` open `a{ss}`, `6` open `a{sv}`, `7` open entry `ss`, `8` open
    /// entry `sv`, `9` open struct `oayays`, `10` open `ao`, `11` open
    /// variant (its type from the next byte), `12` close; a length byte and the bytes follow
    /// the first three. Writes sd-bus refuses (a wrong type inside a
    /// container, a bad path, bad UTF-8) are left out, as no peer could send them.
    /// - Returns: what the decoder read, or `nil` when it refused the message.
    public static func decodeMessage(_ bytes: [UInt8]) -> String? {
        guard let first = bytes.first else { return nil }
        let decoder = SecretServiceDecoder.allCases[Int(first) % SecretServiceDecoder.allCases.count]
        // sd-bus objects are not thread-safe: a message refers to the
        // builder's one bus (a reference count changed without atomics), so
        // callers on several threads take turns.
        return MessageBuilder.turn.withLock { _ in
            guard let message = MessageBuilder.build(Array(bytes.dropFirst())) else { return nil }
            defer { sd_bus_message_unref(message) }
            return try? decode(decoder, BusReader(message: message))
        }
    }

    /// `k=v` pairs sorted by key, separated by spaces.
    static func pairs(_ dictionary: [String: String]) -> String {
        dictionary.sorted { $0.key < $1.key }.map { $0.key + "=" + $0.value }.joined(separator: " ")
    }

    static func decode(_ decoder: SecretServiceDecoder, _ reader: BusReader) throws -> String {
        switch decoder {
        case .attributes:
            return pairs(try reader.stringDictionary())
        case .itemProperties:
            let (label, attributes) = try Provider.itemProperties(reader)
            return label + "|" + pairs(attributes)
        case .secret:
            let secret = try reader.secret()
            return "\(secret.session) \(secret.parameters.count) \(secret.value.count) \(secret.contentType)"
        case .objectPaths:
            return try reader.objectPaths().joined(separator: " ")
        case .sessionInput:
            let algorithm = try reader.string()
            let signature = try reader.variantSignature()
            guard signature == "ay" else {
                try reader.skip("v")
                return "\(algorithm) \(signature)"
            }
            _ = try reader.enter("v", "ay")
            let input = try reader.bytes()
            try reader.exit()
            return "\(algorithm) \(input.count)"
        case .propertyValue:
            let signature = try reader.variantSignature()
            _ = try reader.enter("v", signature)
            defer { _ = try? reader.exit() }
            switch signature {
            case "s": return try reader.string()
            case "a{ss}": return "\(try reader.stringDictionary().count)"
            default: throw BusFailure(code: -EINVAL)
            }
        }
    }
}

/// Builds a sealed method call whose body fuzz input describes (see
/// ``SecretServiceFuzzEntryPoints/decodeMessage(_:)``), on a bus that is
/// never connected: one end of a socket pair no one reads.
enum MessageBuilder {
    /// Held while a message of ``bus`` exists.
    static let turn = Mutex(())

    nonisolated(unsafe) private static var bus: OpaquePointer? = {
        var fds: [Int32] = [-1, -1]
        var created: OpaquePointer? = nil
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0,
            sd_bus_new(&created) >= 0, let created, sd_bus_set_fd(created, fds[0], fds[0]) >= 0,
            sd_bus_start(created) >= 0
        else { return nil }
        return created
    }()

    static let variantTypes = ["s", "a{ss}", "ay", "u", "as", "b", "o"]

    static func build(_ program: [UInt8]) -> OpaquePointer? {
        guard let bus else { return nil }
        var created: OpaquePointer? = nil
        guard
            sd_bus_message_new_method_call(
                bus, &created, "org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service", "Fuzz") >= 0, let message = created
        else { return nil }
        let writer = BusWriter(message: message)
        var depth = 0
        var at = 0
        func take() -> [UInt8] {
            guard at < program.count else { return [] }
            let count = Int(program[at])
            at += 1
            let end = min(program.count, at + count)
            defer { at = end }
            return Array(program[at..<end])
        }
        while at < program.count {
            let op = program[at] % 13
            at += 1
            switch op {
            case 0, 1:
                let text = String(decoding: take(), as: UTF8.self)
                try? writer.string(text, op == 0 ? "s" : "o")
            case 2: try? writer.bytes(take())
            case 3: try? writer.bool(at % 2 == 0)
            case 4:
                var value = UInt32(at)
                _ = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &value)
            case 5, 6, 7, 8, 9, 10:
                let (type, contents): (Character, String) = [
                    ("a", "{ss}"), ("a", "{sv}"), ("e", "ss"), ("e", "sv"), ("r", "oayays"), ("a", "o"),
                ][Int(op) - 5]
                if (try? writer.open(type, contents)) != nil { depth += 1 }
            case 11:
                let index = at < program.count ? Int(program[at]) % variantTypes.count : 0
                at += 1
                if (try? writer.open("v", variantTypes[index])) != nil { depth += 1 }
            default:
                if depth > 0, (try? writer.close()) != nil { depth -= 1 }
            }
        }
        while depth > 0 {
            guard (try? writer.close()) != nil else {
                sd_bus_message_unref(message)
                return nil
            }
            depth -= 1
        }
        guard sd_bus_message_seal(message, 1, 0) >= 0, sd_bus_message_rewind(message, 1) >= 0 else {
            sd_bus_message_unref(message)
            return nil
        }
        return message
    }
}
