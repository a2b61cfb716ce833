import FobStore
import FoundationEssentials

/// Which Ed25519 public key belongs to which device, and which devices are
/// revoked with the counter at which each was cut off, as one device
/// vouches for them. The tree keeps each device's own as
/// `devices/DEVICE.roster`, signed by that device and listing every key it
/// holds (its own, and each it took in); every sync checks them
/// (``TreeSignatures``, ``TreeChecks``), and each device keeps the version
/// of every other device's it took, so a roster never goes back.
///
/// File layout (all big-endian, lengths 4 bytes): "FSL" and the format's
/// digit (`2`; `1` for a roster written before entries named who added
/// them), the version (8 bytes, from 1), the signer's device id, the
/// member count, then each member sorted by id: id, public key (32 bytes),
/// cut-off counter (8 bytes, 0 while not revoked) and, in format 2, who
/// added it: the adding device's id, its counter when it added it (8
/// bytes) and the time (8 bytes, seconds since 1970, UTC); then the
/// 64-byte signature over "fob-sync roster 1", a zero byte and everything
/// before it. Another format digit is refused as a roster this Fob does
/// not know.
public struct DeviceRoster: Sendable, Equatable {
    /// One device of the roster.
    public struct Member: Sendable, Equatable {
        /// Its Ed25519 public key, 32 bytes.
        public var publicKey: [UInt8]
        /// The last counter of its own that is still honoured, when revoked;
        /// `nil` while it is a current device.
        public var cutOff: UInt64?
        /// Who added it to the device's trust, or `nil` in a roster of format 1.
        public var origin: Origin?

        /// A member with `publicKey`, revoked at `cutOff` when given, added as `origin` says.
        public init(publicKey: [UInt8], cutOff: UInt64? = nil, origin: Origin? = nil) {
            self.publicKey = publicKey
            self.cutOff = cutOff
            self.origin = origin
        }
    }

    /// Which device added a member, and when: a device adds itself when it
    /// starts or joins a tree, the device a join accepts, and a device it
    /// takes in at first sight (``TreeSignatures``); a member taken from
    /// another device's roster keeps the origin that roster gives it.
    public struct Origin: Sendable, Equatable {
        /// The id of the device that added it.
        public var device: String
        /// That device's counter when it added it.
        public var counter: UInt64
        /// When, in seconds since 1970 (UTC); 0 when not known.
        public var time: UInt64
    }

    /// Why a roster or a signed file was refused: the caller reports the
    /// tree as tampered with (exit 93), naming the case.
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The roster's version is not above the one held (older or replayed).
        case wentBack(held: UInt64, offered: UInt64)
        /// A device of the held roster is missing from the newer one.
        case memberDropped(String)
        /// A device's public key changed.
        case keyChanged(String)
        /// A revocation was lifted or its cut-off moved.
        case revocationChanged(String)
        /// Signed by a device that is not a current member of the held roster.
        case signerNotCurrent(String)
        /// Written under the id of a device the roster does not know.
        case unknownDevice(String)
        /// Written by a revoked device after its cut-off (the counter given).
        case revokedWriter(String, UInt64)
        /// A signature that does not verify, or a file that does not parse.
        case unauthentic(String)
        /// A member (the first device) added by a device the roster does not list.
        case adderUnknown(String, String)
        /// A member (the first device) added by a device (the second)
        /// after that one's cut-off (its counter when it added it).
        case addedAfterRevocation(String, String, UInt64)

        /// A phrase for messages.
        public var description: String {
            switch self {
            case .wentBack(let held, let offered): "the device roster went back (version \(offered), \(held) held)"
            case .memberDropped(let d): "the device roster dropped device \(d)"
            case .keyChanged(let d): "the device roster changed the signing key of device \(d)"
            case .revocationChanged(let d): "the device roster lifted or moved the revocation of device \(d)"
            case .signerNotCurrent(let d): "the device roster was signed by \(d), not a current device"
            case .unknownDevice(let d): "a file names device \(d), which the roster does not know"
            case .revokedWriter(let d, let n): "revoked device \(d) wrote counter \(n) after its cut-off"
            case .unauthentic(let what): "\(what) is not signed by the device it names"
            case .adderUnknown(let d, let by):
                "the device roster lists device \(d) as added by \(by), which it does not list"
            case .addedAfterRevocation(let d, let by, let n):
                "the device roster lists device \(d) as added by \(by) at its counter \(n), after \(by) was revoked"
            }
        }
    }

    static let magic = Array("FSL2".utf8)
    static let formerMagic = Array("FSL1".utf8)
    static let context = Array("fob-sync roster 1".utf8) + [0]

    /// Rises by one with each change.
    public var version: UInt64
    /// The members by device id.
    public var members: [String: Member]

    /// A roster at `version` with `members`.
    public init(version: UInt64, members: [String: Member]) {
        self.version = version
        self.members = members
    }

    /// Whether `device` is a member and not revoked.
    public func isCurrent(_ device: String) -> Bool { members[device].map { $0.cutOff == nil } ?? false }

    /// The file's bytes, signed by `signer` (whose id is `device`).
    public func signed(by device: String, key: DeviceSigningKey) -> [UInt8] {
        let body = encodeBody(signer: device)
        return body + key.signature(Self.context + body)
    }

    func encodeBody(signer: String) -> [UInt8] {
        var w = ByteWriter()
        w.bytes = Self.magic
        w.u64(version)
        w.string(signer)
        w.u32(UInt32(members.count))
        for (id, member) in members.sorted(by: { $0.key < $1.key }) {
            w.string(id)
            w.data(member.publicKey)
            w.u64(member.cutOff ?? 0)
            // A member taken in before origins were kept: this roster's signer vouches for it.
            let origin = member.origin ?? Origin(device: signer, counter: 0, time: 0)
            w.string(origin.device)
            w.u64(origin.counter)
            w.u64(origin.time)
        }
        return w.bytes
    }

    /// Refuses a roster one of whose members was added by a device it does
    /// not list, or by a revoked device after its cut-off.
    /// - Throws: ``Refusal/adderUnknown(_:_:)``, ``Refusal/addedAfterRevocation(_:_:_:)``.
    public func checkAdders() throws(Refusal) {
        for (id, member) in members.sorted(by: { $0.key < $1.key }) {
            guard let origin = member.origin else { continue }
            guard let adder = members[origin.device] else { throw .adderUnknown(id, origin.device) }
            if let cut = adder.cutOff, origin.counter > cut {
                throw .addedAfterRevocation(id, origin.device, origin.counter)
            }
        }
    }

    /// The roster and its signer's id, unverified (the fuzz target
    /// `sync-tree` calls it). A roster of format 1 has no origins.
    /// - Throws: ``TreeFormatError`` for a layout the format does not
    ///   allow, ``TreeFormatError/malformed(_:)`` naming the format for a
    ///   format digit this Fob does not know.
    public static func decode(_ raw: UnsafeRawBufferPointer) throws(TreeFormatError) -> (
        roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8]
    ) {
        guard raw.count >= 4, Array(raw.prefix(3)) == Array(magic.prefix(3)) else {
            throw .malformed("not a device roster")
        }
        let hasOrigins = Array(raw.prefix(4)) == magic
        guard hasOrigins || Array(raw.prefix(4)) == formerMagic else {
            let format = raw[3] >= 0x21 && raw[3] < 0x7F ? String(UnicodeScalar(raw[3])) : "byte \(raw[3])"
            throw .malformed("a device roster of format \(format), which this Fob does not know (update Fob)")
        }
        var r = ByteReader(raw)
        _ = try r.take(4)
        let version = try r.u64()
        let signer = try r.device()
        let count = try r.u32()
        guard version >= 1, count >= 1, count <= 10_000 else { throw .malformed("a roster's version or size") }
        var members: [String: Member] = [:]
        var last = ""
        for _ in 0..<count {
            let id = try r.device()
            let key = Array(try r.data(max: 32))
            let cutOff = try r.u64()
            guard id > last, key.count == 32 else { throw .malformed("a roster member") }
            last = id
            var origin: Origin?
            if hasOrigins {
                origin = Origin(device: try r.device(), counter: try r.u64(), time: try r.u64())
            }
            members[id] = Member(publicKey: key, cutOff: cutOff == 0 ? nil : cutOff, origin: origin)
        }
        let body = Array(raw[..<r.offset])
        let signature = Array(try r.take(64))
        guard r.atEnd else { throw .malformed("bytes after the roster") }
        return (DeviceRoster(version: version, members: members), signer, signature, body)
    }

    /// The roster in `bytes`, checked against `held` (the last one this
    /// device accepted; `nil` before it has one, when the roster's own
    /// signer must be a current member of it).
    /// - Throws: ``Refusal`` for a bad signature, a signer that is not
    ///   current, or a roster that goes back (see ``accepting(_:)``).
    public static func open(_ bytes: [UInt8], held: DeviceRoster?) throws(Refusal) -> DeviceRoster {
        let decoded: (roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8])
        do {
            decoded = try reading(bytes) { (raw) throws(TreeFormatError) in try decode(raw) }
        } catch { throw .unauthentic("the device roster") }
        let trusted = held ?? decoded.roster
        guard trusted.isCurrent(decoded.signer), let key = trusted.members[decoded.signer]?.publicKey else {
            throw .signerNotCurrent(decoded.signer)
        }
        guard DeviceSigningKey.verifies(decoded.signature, context + decoded.body, publicKey: key) else {
            throw .unauthentic("the device roster")
        }
        try decoded.roster.checkAdders()
        if let held { return try held.accepting(decoded.roster) }
        return decoded.roster
    }

    /// `newer` when it may follow this roster: a higher version, every
    /// member kept with its key, every revocation kept with its cut-off.
    /// The same roster is taken as it is (a tree that did not change it).
    /// - Throws: ``Refusal``, naming the first device that breaks a rule.
    public func accepting(_ newer: DeviceRoster) throws(Refusal) -> DeviceRoster {
        if newer == self { return self }
        guard newer.version > version else { throw .wentBack(held: version, offered: newer.version) }
        for (id, member) in members.sorted(by: { $0.key < $1.key }) {
            guard let next = newer.members[id] else { throw .memberDropped(id) }
            guard next.publicKey == member.publicKey else { throw .keyChanged(id) }
            if let cut = member.cutOff, next.cutOff != cut { throw .revocationChanged(id) }
        }
        return newer
    }

    /// The content of a tree file at `path` that `device` wrote as its
    /// `counter` (`nil` for a file without one, such as a head), when the
    /// roster knows `device`, it was current for that counter, and its key
    /// signed the file for that path.
    /// - Throws: ``Refusal/unknownDevice(_:)``, ``Refusal/revokedWriter(_:_:)``
    ///   or ``Refusal/unauthentic(_:)`` (naming the path).
    public func verified(_ bytes: [UInt8], path: String, device: String, counter: UInt64?) throws(Refusal) -> [UInt8] {
        guard let member = members[device] else { throw .unknownDevice(device) }
        if let cut = member.cutOff {
            guard let counter, counter <= cut else { throw .revokedWriter(device, counter ?? 0) }
        }
        do {
            return try SignedFile.open(bytes, path: path, publicKey: member.publicKey)
        } catch { throw .unauthentic(path) }
    }

    /// What a device joining a tree trusts (``trusted(from:rosters:)``).
    public struct Trust: Sendable, Equatable {
        /// The signing key of each device trusted, by device id.
        public var keys: [String: [UInt8]]
        /// Who added each device a roster gave (the origin that roster
        /// lists; its signer for a roster of format 1).
        public var origins: [String: Origin]
        /// The devices a trusted roster lists as revoked, with their cut-off.
        public var revoked: [String: UInt64]

        /// Trusts every key `roster`, signed by `signer`, lists; a device
        /// first met there, and not accepted, keeps the origin it gives.
        /// - Throws: ``Refusal/keyChanged(_:)`` for a key other than the one trusted.
        mutating func vouch(_ roster: DeviceRoster, signer: String, anchors: [String: [UInt8]]) throws(Refusal) {
            for (id, member) in roster.members.sorted(by: { $0.key < $1.key }) {
                if let held = keys[id], held != member.publicKey { throw .keyChanged(id) }
                if keys[id] == nil || (anchors[id] == nil && origins[id] == nil) {
                    origins[id] = member.origin ?? Origin(device: signer, counter: 0, time: 0)
                }
                keys[id] = member.publicKey
            }
        }
    }

    /// What a device joining a tree trusts: the keys of `anchors` (device
    /// → the key the user accepted for it), then, one layer of rosters at
    /// a time, every key the roster of a trusted device lists, its
    /// signature verified with the key trusted for its signer, until no
    /// roster adds one; and every revocation those rosters list. A device
    /// that a roster of its own layer or a nearer one lists as revoked
    /// vouches for no one: its key, which a revoked device still holds, is
    /// trusted only for what it wrote up to its cut-off, and its roster is
    /// not read once a nearer layer revoked it (so it cannot revoke the
    /// devices that revoked it). `rosters` are the tree's rosters by
    /// signer, as ``decode(_:)`` gives them.
    /// - Throws: ``Refusal/unauthentic(_:)`` for a roster of a trusted
    ///   device whose signature does not verify; ``Refusal/keyChanged(_:)``
    ///   for two trusted rosters that give one device two keys;
    ///   ``Refusal/revocationChanged(_:)`` for two that give one device
    ///   two cut-offs; what ``checkAdders()`` throws.
    public static func trusted(
        from anchors: [String: [UInt8]],
        rosters: [String: (roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8])]
    ) throws(Refusal) -> Trust {
        var trust = Trust(keys: anchors, origins: [:], revoked: [:])
        var read: Set<String> = []
        var layer = anchors.keys.sorted()
        while !layer.isEmpty {
            var layerRosters: [(signer: String, roster: DeviceRoster)] = []
            for signer in layer {
                read.insert(signer)
                guard let decoded = rosters[signer] else { continue }
                guard let key = trust.keys[signer],
                    DeviceSigningKey.verifies(decoded.signature, context + decoded.body, publicKey: key)
                else { throw .unauthentic("devices/\(signer).roster") }
                try decoded.roster.checkAdders()
                layerRosters.append((signer, decoded.roster))
            }
            for (_, roster) in layerRosters {
                for (id, member) in roster.members.sorted(by: { $0.key < $1.key }) {
                    guard let cut = member.cutOff else { continue }
                    if let known = trust.revoked[id], known != cut { throw .revocationChanged(id) }
                    trust.revoked[id] = cut
                }
            }
            for (signer, roster) in layerRosters where anchors[signer] != nil || trust.revoked[signer] == nil {
                try trust.vouch(roster, signer: signer, anchors: anchors)
            }
            layer = rosters.keys.sorted().filter {
                trust.keys[$0] != nil && !read.contains($0) && trust.revoked[$0] == nil
            }
        }
        return trust
    }
}
