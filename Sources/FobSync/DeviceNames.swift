import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// A device's human name: set at `fob sync init` or `join` (the host name
/// unless `--name NAME` gives another; `fob sync --name NAME` changes it),
/// kept in the device's sync state and written into its head, so every
/// device shows it beside the id.
public enum DeviceName {
    /// The longest name, in UTF-8 bytes: 64.
    public static let maxBytes = 64

    /// Whether `name` may name a device: 1 to ``maxBytes`` bytes of UTF-8
    /// without a control character (C0, DEL, C1), so it prints as it is on
    /// one line, and without a space at either end.
    public static func isValid(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maxBytes, name.first != " ", name.last != " " else { return false }
        return !name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// This machine's host name (`gethostname(2)`), or `nil` when it has none a name may be.
    public static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return isValid(name) ? name : nil
    }

    /// How a device is shown: `NAME (ID)`, or the id alone for a device without a name.
    public static func label(_ device: String, name: String?) -> String {
        guard let name else { return device }
        return "\(name) (\(device))"
    }
}

extension SyncEngine {
    /// The device `text` names in `heads`: the id itself, else the one
    /// device whose name it is.
    /// - Throws: ``SyncError/usage(_:)`` when no device or several have it.
    static func device(named text: String, in heads: [String: DeviceHead]) throws -> String {
        if heads[text] != nil { return text }
        let named = heads.values.filter { $0.name == text }.map(\.device).sorted()
        guard named.count <= 1 else {
            throw SyncError.usage(
                "\(named.count) devices are named \"\(text)\" (\(named.joined(separator: ", "))); give the id")
        }
        guard let device = named.first else {
            throw SyncError.usage("no device \(text) in the sync tree; see `fob devices`")
        }
        return device
    }

    /// `device` as messages show it: `NAME (ID)` when its head in `heads` has a name.
    static func label(_ device: String, heads: [String: DeviceHead]) -> String {
        DeviceName.label(device, name: heads[device]?.name)
    }

    /// `fob sync --name NAME`: this device's new name, kept in its state;
    /// the next sync's head carries it (the caller syncs with `forceHead`).
    /// - Throws: ``SyncError/usage(_:)`` for a name ``DeviceName/isValid(_:)`` refuses.
    public func rename(to name: String) throws {
        try DeviceName.check(name)
        var run = try vault.load()
        guard run.state.name != name else { return }
        run.state.name = name
        try vault.store(&run)
    }
}

extension DeviceName {
    /// Refuses a name ``isValid(_:)`` refuses (`nil` passes).
    /// - Throws: ``SyncError/usage(_:)``.
    static func check(_ name: String?) throws(SyncError) {
        if let name, !isValid(name) { throw .usage(refusal(name)) }
    }

    /// Why `name` is refused, for a usage error (control characters shown as `?`).
    static func refusal(_ name: String) -> String {
        let shown = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0 }))
        return "a device name is 1 to \(maxBytes) bytes without control characters or a space at either end, "
            + "not \"\(shown)\""
    }
}
