import FobStore
import FoundationEssentials

/// The signatures of the tree's files (``SignedFile``), checked against
/// the signing keys this device holds (``SyncState/signers``, its own
/// ``SyncState/signingKey``): a file under a device's id must be signed
/// by that device's key, a revocation by a current device other than the
/// one it revokes. Files of a tree written before signing keys are taken
/// unsigned only where ``takesUnsigned(_:counter:state:)`` says so; every
/// export writes them again, signed.
enum TreeSignatures {
    /// The key that signs files under `device`'s id, as this device holds it.
    static func key(of device: String, state: SyncState) -> [UInt8]? {
        device == state.device ? state.signingKey?.publicKey : state.signers[device]
    }

    /// Whether an unsigned file under `device`'s id at `counter` (a head's
    /// own) is taken: one it wrote before it had a signing key (up to
    /// the counter its signed head names), or any of a device this device
    /// knew before and has not yet seen sign (or of any, before its first
    /// merge, when it trusts the tree it joins).
    static func takesUnsigned(_ device: String, counter: UInt64, state: SyncState) -> Bool {
        if let upTo = state.unsignedUpTo[device] ?? (device == state.device ? 0 : nil) {
            return counter <= upTo
        }
        guard state.signers[device] == nil else { return false }
        return state.syncedCommit == nil || state.seen[device] != nil
    }

    /// The content of `bytes`, the file at `path` under `device`'s id at
    /// `counter`, and whether it was signed.
    /// - Throws: ``SyncError/tampered(_:)`` for a signature that does not
    ///   verify with the device's key, a device with no key held, or an
    ///   unsigned file where ``takesUnsigned(_:counter:state:)`` refuses it.
    static func content(_ bytes: [UInt8], path: String, device: String, counter: UInt64, state: SyncState) throws
        -> (content: [UInt8], signed: Bool)
    {
        guard bytes.starts(with: SignedFile.magic) else {
            guard takesUnsigned(device, counter: counter, state: state) else {
                throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
            }
            return (bytes, false)
        }
        guard let key = key(of: device, state: state) else {
            throw SyncError.tampered(DeviceRoster.Refusal.unknownDevice(device).description + " (\(path))")
        }
        do { return (try SignedFile.open(bytes, path: path, publicKey: key), true) } catch {
            throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
        }
    }

    /// The head at `path` of `device`: its signing key taken in when new
    /// (``takeIn(_:path:key:revocations:rotated:run:)``), then its
    /// signature checked. A device that joined as a revocation or a
    /// `passwd --rotate-key` started a new epoch is taken in once it wrote
    /// its head again under the new key (its next sync).
    /// - Returns: the head, and whether its device is taken: `false` for
    ///   one this read leaves out (a new device under an older key epoch
    ///   after a rotation).
    /// - Throws: ``SyncError/tampered(_:)``: a key other than the one held,
    ///   a new device under an older key while a revocation is known, a
    ///   signature that does not verify.
    static func head(
        _ bytes: [UInt8], path: String, device: String, revocations: Bool, rotated: Bool, run: inout SyncRun
    ) throws -> (head: DeviceHead, taken: Bool) {
        let keys = run.keys
        do {
            guard bytes.starts(with: SignedFile.magic) else {
                let head = try DeviceHead.open(bytes, device: device, keys: keys)
                guard head.publicKey == nil, takesUnsigned(device, counter: head.counter, state: run.state) else {
                    throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
                }
                return (head, true)
            }
            let parsed = try reading(bytes) { (raw) throws(TreeFormatError) in try SignedFile.parse(raw) }
            let head = try DeviceHead.open(parsed.content, device: device, keys: keys)
            guard let offered = head.publicKey else {
                throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
            }
            if let held = key(of: device, state: run.state) {
                guard held == offered else {
                    throw SyncError.tampered(DeviceRoster.Refusal.keyChanged(device).description)
                }
            }
            guard (try? SignedFile.open(bytes, path: path, publicKey: offered)) != nil else {
                throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
            }
            if device != run.state.device {
                // A key a join took from a roster has its unsigned counter taken from the head.
                if run.state.signers[device] == nil {
                    let taken = try takeIn(
                        head, path: path, key: offered, revocations: revocations, rotated: rotated, run: &run)
                    // Nothing of a device left out is kept: it is met anew at the next read.
                    guard taken else { return (head, false) }
                }
                if run.state.unsignedUpTo[device] == nil { run.state.unsignedUpTo[device] = head.unsignedUpTo }
            }
            return (head, true)
        } catch let error as TreeFormatError {
            throw SyncError.tampered("\(path) \(error)")
        }
    }

    /// Takes in the signing key `key` of a device on no roster this device
    /// trusts, its self-signed head at `path` verified: only when the head
    /// is sealed under the current key epoch (the device opened the
    /// current key with a master password: a revoked device, or whoever
    /// kept a key a `passwd --rotate-key` replaced, holds only older
    /// epochs' keys and cannot bring in a device), or while this device
    /// knows a single key epoch and neither it nor the tree knows a
    /// revocation (every holder of the key was a device of the tree, which
    /// writes under its own id anyway), or the device is one this device
    /// merged before it signed (a tree written before signing keys), or
    /// this device joins a tree without rosters. The device is then on this
    /// device's roster, as added by it at its counter and the time by the
    /// run's clock (``SyncState/origins``, ``SyncRun/now``), and named with
    /// its key's fingerprint.
    /// - Parameters:
    ///   - revocations: this device or the tree knows a revocation.
    ///   - rotated: this device knows more than one key epoch.
    /// - Returns: `false` for a device under an older epoch after a
    ///   rotation with no revocation known: left out of this read (a
    ///   device that joined before the rotation and has not synced since
    ///   is taken in after its next sync), not taken in.
    /// - Throws: ``SyncError/tampered(_:)`` naming the device under an
    ///   older epoch while a revocation is known: a revoked device holds
    ///   that epoch's key.
    static func takeIn(
        _ head: DeviceHead, path: String, key: [UInt8], revocations: Bool, rotated: Bool, run: inout SyncRun
    ) throws -> Bool {
        let state = run.state
        let device = head.device
        let label = DeviceName.label(device, name: head.name)
        let fingerprint = DeviceSigningKey.fingerprint(key)
        let legacy = (state.syncedCommit == nil && state.signers.isEmpty) || state.seen[device] != nil
        guard legacy || !(revocations || rotated) || head.sealedUnder == run.keys.sealingID else {
            guard revocations else { return false }
            throw SyncError.tampered(
                "\(path) brings in device \(label), key \(fingerprint), which no device this one trusts added, "
                    + "under an older key epoch, which a revoked device holds too; "
                    + "a device that joined meanwhile is taken in after its next sync")
        }
        run.state.signers[device] = key
        guard run.state.origins[device] == nil else { return true }
        run.state.origins[device] = DeviceRoster.Origin(device: state.device, counter: state.counter, time: run.seconds)
        if !legacy || state.syncedCommit != nil {
            // Lines under 80 columns (the first for a name under 43 bytes), continued as Fob's other notices.
            run.notices.append(
                "fob: added device \(label)\n     with signing key \(fingerprint)\n"
                    + "     to this device's roster; compare with `fob sync status` on it,\n"
                    + "     or revoke it with `fob devices --revoke \(device)`\n")
        }
        return true
    }

    /// The content of the epoch file at `path` that `starter` wrote:
    /// refused when a revoked device started it, or when it is not signed
    /// by the starter's key this device holds. The file of a device whose
    /// key is not held yet (one that joined since) is returned as it is:
    /// the caller checks it with ``epochsAtJoin(_:path:newest:head:)``
    /// once the epoch's key is open.
    /// - Throws: ``SyncError/tampered(_:)``.
    static func epochFile(_ bytes: [UInt8], path: String, starter: String, state: SyncState) throws -> [UInt8] {
        if let cutOff = state.revoked[starter] {
            throw SyncError.tampered(
                "\(path) is a key epoch started by device \(starter), revoked after its counter \(cutOff)")
        }
        guard let key = key(of: starter, state: state) else { return SignedFile.content(bytes) }
        do { return try SignedFile.open(bytes, path: path, publicKey: key) } catch {
            throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
        }
    }

    /// The older key epochs the epoch file at `path` holds, read by a
    /// `join` that opened `newest` with a master password, or by a device
    /// that does not hold the key of the device that started it: the file must be
    /// signed by the key of the device that started `newest`, as that
    /// device's head in the tree (`head`, signed by the same key, sealed
    /// under one of these epochs) gives it. A file without a signature is
    /// taken only when that head has no key either (a tree written before
    /// signing keys, which a `join` trusts as it finds it).
    /// - Returns: the older epochs, and the starter's public key (`nil` for such a tree).
    /// - Throws: ``SyncError/tampered(_:)``: a signature that does not
    ///   verify, a file without one beside a signed head, no head of the
    ///   starter, a file or head that does not open.
    static func epochsAtJoin(_ bytes: [UInt8], path: String, newest: KeyEpoch, head: [UInt8]?) throws -> (
        older: [KeyEpoch], starterKey: [UInt8]?
    ) {
        let starter = newest.device
        let older: [KeyEpoch]
        do {
            // Opened under the new key before its signature is checked: the
            // starter's head may be sealed under an older one it holds.
            older = try EpochFile.open(SignedFile.content(bytes), epoch: newest)
        } catch { throw SyncError.tampered("\(path) \(error)") }
        let headPath = TreePath.head(device: starter)
        guard let head else {
            throw SyncError.tampered("\(path) is a key epoch of device \(starter), which has no head in the tree")
        }
        let keys = SyncKeys(epochs: older + [newest])
        let publicKey: [UInt8]?
        do {
            publicKey = try DeviceHead.open(SignedFile.content(head), device: starter, keys: keys).publicKey
        } catch { throw SyncError.tampered("\(headPath) \(error)") }
        guard let publicKey else {
            guard !bytes.starts(with: SignedFile.magic), !head.starts(with: SignedFile.magic) else {
                throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
            }
            return (older, nil)
        }
        guard (try? SignedFile.open(head, path: headPath, publicKey: publicKey)) != nil else {
            throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(headPath).description)
        }
        guard (try? SignedFile.open(bytes, path: path, publicKey: publicKey)) != nil else {
            throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
        }
        return (older, publicKey)
    }

    /// The device roster at `path`, which `device` signs: refused unless
    /// its signer is `device`, its signature verifies with the key this
    /// device holds for `device` (taken in from its head), it lists that
    /// key for its signer, every member it lists has the key this device
    /// holds for it (where it holds one) and the cut-off this device knows.
    /// Its version is checked against the one taken before with the
    /// fetched tree's heads (``TreeChecks/checkRosters(_:state:)``).
    /// - Throws: ``SyncError/tampered(_:)``, naming the case.
    static func roster(_ bytes: [UInt8], path: String, device: String, run: inout SyncRun) throws -> DeviceRoster {
        let decoded: (roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8])
        do {
            decoded = try reading(bytes) { (raw) throws(TreeFormatError) in try DeviceRoster.decode(raw) }
        } catch { throw SyncError.tampered("\(path) \(error)") }
        guard decoded.signer == device, let key = key(of: device, state: run.state),
            DeviceSigningKey.verifies(decoded.signature, DeviceRoster.context + decoded.body, publicKey: key)
        else { throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description) }
        let roster = decoded.roster
        do { try roster.checkAdders() } catch { throw SyncError.tampered(error.description + " (\(path))") }
        guard roster.members[device]?.publicKey == key else {
            throw SyncError.tampered(DeviceRoster.Refusal.keyChanged(device).description + " (\(path))")
        }
        for (id, member) in roster.members.sorted(by: { $0.key < $1.key }) {
            if let held = self.key(of: id, state: run.state), held != member.publicKey {
                throw SyncError.tampered(DeviceRoster.Refusal.keyChanged(id).description + " (\(path))")
            }
            if let cut = member.cutOff, let known = run.state.revoked[id], cut != known {
                throw SyncError.tampered(DeviceRoster.Refusal.revocationChanged(id).description + " (\(path))")
            }
        }
        return roster
    }

    /// The revocation at `path` of `device`: signed by a current device
    /// (held, not revoked) other than `device`; unsigned only when this
    /// device took it in already with the same cut-off, or no other device
    /// signs yet (a tree written before signing keys).
    /// - Throws: ``SyncError/tampered(_:)``.
    static func revocation(_ bytes: [UInt8], path: String, device: String, run: SyncRun) throws -> Revocation {
        let state = run.state
        do {
            guard bytes.starts(with: SignedFile.magic) else {
                let revocation = try Revocation.open(bytes, device: device, keys: run.keys)
                guard state.revoked[device] == revocation.counter || state.syncedCommit == nil || state.signers.isEmpty
                else { throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description) }
                return revocation
            }
            let parsed = try reading(bytes) { (raw) throws(TreeFormatError) in try SignedFile.parse(raw) }
            var signers = state.signers
            if let own = state.signingKey { signers[state.device] = own.publicKey }
            let verifies = signers.contains { signer, key in
                signer != device && state.revoked[signer] == nil
                    && (try? SignedFile.open(bytes, path: path, publicKey: key)) != nil
            }
            guard verifies else {
                throw SyncError.tampered("\(path) is not signed by a current device")
            }
            return try Revocation.open(parsed.content, device: device, keys: run.keys)
        } catch let error as TreeFormatError {
            throw SyncError.tampered("\(path) \(error)")
        }
    }
}
