import FobStore
import FoundationEssentials

/// One write of one device: its id and the counter it wrote under.
/// Ordered by counter, then device id, so that every device picks the same
/// winner of a conflict.
public struct Dot: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The writing device's id (16 lowercase hex digits, ``DeviceID``).
    public var device: String
    /// The device's write counter, from 1.
    public var counter: UInt64

    public static func < (a: Dot, b: Dot) -> Bool {
        a.counter != b.counter ? a.counter < b.counter : a.device < b.device
    }

    /// `DEVICE.COUNTER`, as in the revision file's name.
    public var description: String { "\(device).\(counter)" }
}

/// A version vector: for each device, the highest of its counters seen.
/// Decides which revisions are concurrent; wall clocks never do.
public struct VersionVector: Equatable, Sendable {
    /// Device id → highest counter seen; a missing device is 0.
    public var counters: [String: UInt64]

    /// A vector of `counters` (empty: nothing seen).
    public init(_ counters: [String: UInt64] = [:]) { self.counters = counters }

    /// Whether the write `dot` is among what this vector has seen.
    public func includes(_ dot: Dot) -> Bool { (counters[dot.device] ?? 0) >= dot.counter }

    /// The least vector that has seen everything both have seen.
    public func joined(_ other: VersionVector) -> VersionVector {
        VersionVector(counters.merging(other.counters) { max($0, $1) })
    }

    /// Adds `dot` (the counter only grows).
    public mutating func add(_ dot: Dot) {
        counters[dot.device] = max(counters[dot.device] ?? 0, dot.counter)
    }

    /// The devices in a fixed order, for encodings.
    var sortedEntries: [(String, UInt64)] { counters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
}

/// Device ids: 16 lowercase hex digits (8 random bytes), made once per
/// device when it joins the tree.
public enum DeviceID {
    /// A new random id.
    public static func make() -> String { Sodium.hex(Sodium.randomBytes(8)) }

    /// Whether `text` is a device id: exactly 16 of `0-9a-f`.
    public static func isValid<S: StringProtocol>(_ text: S) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy(TreePath.isHexDigit)
    }
}
