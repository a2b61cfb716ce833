import FobStore
import FoundationEssentials
@preconcurrency import Glibc

extension SyncEngine {
    /// `fob sync init REMOTE`: a new tree with this vault's items, pushed
    /// to an empty remote.
    /// - Parameters:
    ///   - password: seals the sync key in the tree's header.
    ///   - kdf: the header's Argon2id costs.
    ///   - name: this device's name (``DeviceName``; `nil`: none).
    /// - Throws: ``SyncError/usage(_:)`` when sync is set up already, the
    ///   remote is not empty or the name is refused; as ``sync(network:forceHead:)``.
    public func initialize(remote: String, password: SecretBytes, kdf: KDFParameters, name: String? = nil) throws
        -> Outcome
    {
        try DeviceName.check(name)
        let items = try vault.listing()
        if let existing = SyncVault.stateItem(in: items) {
            let remote = (existing.secret.flatMap { try? SyncState.decode($0) })?.remote ?? "?"
            throw SyncError.usage("sync is set up already for this vault (remote \(remote))")
        }
        let listing = try git.run(["ls-remote", remote], network: true, show: true, inDirectory: false)
        guard listing.status == 0 else {
            throw Git.failure(listing.error, otherwise: .remoteUnreachable(Git.firstLine(listing.error)))
        }
        guard listing.output.isEmpty else {
            throw SyncError.usage("the remote holds a tree already; run `fob sync join \(remote)` instead")
        }
        try? FileManager.default.removeItem(atPath: git.directory)
        try makePrivateParent()
        try FileManager.default.createDirectory(atPath: git.directory, withIntermediateDirectories: true)
        try git.check(["init", "-q", "-b", Git.branch])
        try git.check(["remote", "add", "origin", remote])
        let syncKey = SecretBytes.random(count: 32)
        guard TreeHeader.meets(kdf, floor: kdfFloor) else {
            throw SyncError.usage("the header's key derivation costs are below the interactive preset")
        }
        let header = try TreeHeader.make(
            epoch: KeyEpoch(number: 1, device: "", key: syncKey), password: password, kdf: kdf)
        var state = SyncState(device: DeviceID.make(), syncKey: syncKey, remote: remote)
        state.name = name
        state.headerKDF = kdf
        state.signingKey = DeviceSigningKey.generate()
        state.origins[state.device] = .init(device: state.device, counter: 0, time: Self.seconds(now()))
        // The tree's first commit holds the header alone; the state follows it.
        _ = try git.commit(
            writes: [TreePath.header(device: state.device): header.bytes], removals: [], parent: nil,
            message: Git.commitMessage)
        try vault.apply([.add(state.item(now: now()))])
        return try sync(forceHead: true)
    }

    /// After `fob passwd`: this device's header seals the current epoch's
    /// key under the new password (and no longer under the old one),
    /// committed locally; the next `fob sync` carries it. The costs are
    /// this device's own (``headerCosts(_:vaultKDF:)``), never the tree's.
    /// - Parameter vaultKDF: the vault's own costs (authenticated at unlock).
    /// - Throws: as ``sync(network:forceHead:)``; `KeychainError`.
    public func rewrap(password: SecretBytes, vaultKDF: KDFParameters? = nil) throws {
        var run = try vault.load()
        try ensureWorkTree(remote: run.state.remote)
        try cleanWorkTree()
        let path = TreePath.header(device: run.state.device)
        let header = try TreeHeader.make(
            epoch: run.state.currentEpoch, password: password, kdf: headerCosts(run.state, vaultKDF: vaultKDF))
        run.writeFile(path, header.bytes)
        try run.commit(git: git)
    }

    /// `fob passwd --rotate-key`: a new key epoch. A new random key,
    /// sealed under `password` in this device's header; the older keys
    /// sealed under it in its epoch file; committed locally. The next `fob
    /// sync` pushes it and writes every item again under the new key; every
    /// other device takes it at its next sync, asking for `password`.
    /// - Returns: the new epoch's number.
    /// - Throws: as ``sync(network:forceHead:)``; `KeychainError`.
    /// - Parameter vaultKDF: the vault's own costs (as ``rewrap(password:vaultKDF:)``).
    public func rotateKey(password: SecretBytes, vaultKDF: KDFParameters? = nil) throws -> UInt64 {
        var run = try vault.load()
        try ensureWorkTree(remote: run.state.remote)
        try cleanWorkTree()
        let epoch = try epochs.startEpoch(
            &run, password: password, kdf: headerCosts(run.state, vaultKDF: vaultKDF))
        try run.commit(git: git)
        return epoch.number
    }

    /// `fob sync join REMOTE`: this vault joins the tree there; its items
    /// and the tree's are merged (an item on both sides is concurrent).
    /// - Parameters:
    ///   - password: the master password the header was sealed with.
    ///   - name: this device's name (``DeviceName``; `nil`: none).
    ///   - acceptKey: the fingerprint (``DeviceSigningKey/fingerprint(_:)``)
    ///     of the key of a device whose roster this device trusts; `nil`:
    ///     the keys are shown and ``chooseKey`` asked (see ``trustedKeysAtJoin(epochs:acceptKey:)``).
    /// - Throws: ``SyncError/wrongPassword``; ``SyncError/usage(_:)`` when
    ///   set up already (but for a vault a sync found to be a copy), the remote holds no tree or the name is refused;
    ///   ``SyncError/keysNotAsked(_:)``, ``SyncError/keysRefused(_:)``; as ``sync(network:forceHead:)``.
    public func join(remote: String, password: SecretBytes, name: String? = nil, acceptKey: String? = nil) throws
        -> Outcome
    {
        try DeviceName.check(name)
        let items = try vault.listing()
        let old = SyncVault.stateItem(in: items)
        if let old, let state = old.secret.flatMap({ try? SyncState.decode($0) }), !state.copyFound {
            throw SyncError.usage(
                "this vault syncs already with \(state.remote) as device \(DeviceName.label(state.device, name: state.name)); run `fob sync`"
            )
        }
        // The vault's sync directory, made by this join unless an earlier one left it.
        let directory = NSStringPath(path: git.directory).parent
        let madeHere = !FileManager.default.fileExists(atPath: directory)
        let state: SyncState
        do {
            try cloneTree(remote)
            state = try joiningState(remote: remote, password: password, name: name, acceptKey: acceptKey)
        } catch {
            // Refused before the vault changed: the clone goes too, and the
            // directory it was made in when empty (rmdir removes no other), nothing is left.
            try? FileManager.default.removeItem(atPath: git.directory)
            if madeHere { rmdir(directory) }
            throw error
        }
        var fresh = state.item(now: now())
        if let old {
            // A copy taking a new device id keeps its items, not its old id.
            fresh.persistentID = old.persistentID
            try vault.apply(
                try vault.indexShards(of: old).map { .delete(existing: $0) } + [.replace(existing: old, with: fresh)])
        } else {
            try vault.apply([.add(fresh)])
        }
        return try sync(forceHead: true)
    }

    /// The state of a device joining the tree cloned from `remote`: a new
    /// device id and signing key, the tree's key epochs opened with
    /// `password`, the signing keys trusted (as ``join(remote:password:name:acceptKey:)``).
    func joiningState(remote: String, password: SecretBytes, name: String?, acceptKey: String?) throws -> SyncState {
        let files = try git.resolve("HEAD").map { try git.files(of: $0, under: "headers") } ?? [:]
        let headers = files.keys.sorted().compactMap { path in TreePath.parseHeader(path).map { (path, $0) } }
        guard !headers.isEmpty else {
            throw SyncError.usage("the remote holds no Fob sync tree; run `fob sync init \(remote)` to make one")
        }
        // Any device's header opens with that device's master password:
        // the newest epoch's first, then the older epochs its file holds.
        var parsed: [TreeHeader] = []
        for (path, _) in headers {
            parsed.append(try TreeReader.header(files[path] ?? [], path: path, floor: kdfFloor))
        }
        parsed.sort { ($0.epochNumber, $0.epochDevice) > ($1.epochNumber, $1.epochDevice) }
        var opened: KeyEpoch?
        for header in parsed where opened == nil { opened = try header.open(password: password) }
        guard let newest = opened else { throw SyncError.wrongPassword }
        var epochs = [newest]
        if newest.number > 1 {
            let path = TreePath.epoch(newest)
            epochs += try TreeSignatures.epochsAtJoin(
                try git.file(path) ?? [], path: path, newest: newest,
                head: try git.file(TreePath.head(device: newest.device))
            ).older
        }
        guard let first = epochs.first(where: { $0.number == 1 }) else {
            throw SyncError.tampered("the tree's first key epoch is missing")
        }
        let trusted = try trustedKeysAtJoin(epochs: epochs, acceptKey: acceptKey)
        var state = SyncState(device: DeviceID.make(), syncKey: first.key, remote: remote)
        state.name = name
        state.signingKey = DeviceSigningKey.generate()
        state.signers = trusted.keys
        state.revoked = trusted.revoked
        // This device adds itself, and the devices it accepted; the others
        // as the rosters that vouch for them say.
        let mine = DeviceRoster.Origin(device: state.device, counter: 0, time: Self.seconds(now()))
        state.origins = trusted.origins
        for device in trusted.keys.keys where state.origins[device] == nil { state.origins[device] = mine }
        state.origins[state.device] = mine
        for epoch in epochs { state.learn(epoch) }
        return state
    }

    /// `date` in whole seconds since 1970 (0 before it).
    static func seconds(_ date: Date) -> UInt64 { UInt64(max(0, date.timeIntervalSince1970)) }

    /// The signing keys a joining device trusts before its first sync: the
    /// tree's device rosters are shown (numbered, each signer's name, id
    /// and key fingerprint), the user accepts one device whose key they
    /// compared on it (`acceptKey`, or the number or fingerprint
    /// ``chooseKey`` answers), and the keys the accepted roster vouches
    /// for, one roster through another, are trusted, with the revocations
    /// those rosters list (``DeviceRoster/trusted(from:rosters:)``): the
    /// first sync refuses a head, file or roster with another key for
    /// them, and a revoked device's writes after its cut-off. A device on
    /// no roster they vouch for is taken in only with a head sealed under
    /// the current key epoch (``TreeSignatures/takeIn(_:path:key:revocations:rotated:run:)``),
    /// and named. A tree without rosters is taken as it is only when
    /// nothing in it is signed (written by an older Fob).
    /// - Returns: the trust; the accepted device has no origin (this device adds it).
    /// - Throws: ``SyncError/keysNotAsked(_:)``, ``SyncError/keysRefused(_:)``;
    ///   ``SyncError/tampered(_:)``: a roster that does not read or verify,
    ///   signed files with no roster (rosters removed).
    func trustedKeysAtJoin(epochs: [KeyEpoch], acceptKey: String?) throws -> DeviceRoster.Trust {
        let none = DeviceRoster.Trust(keys: [:], origins: [:], revoked: [:])
        guard let head = try git.resolve("HEAD") else { return none }
        let files = try git.files(of: head, under: "devices")
        let rosters = try Self.rosters(in: files)
        guard !rosters.isEmpty else {
            if let signed = files.keys.sorted().first(where: { files[$0]?.starts(with: SignedFile.magic) == true }) {
                throw SyncError.tampered(
                    "\(signed) is signed, but the sync tree has no device roster: the rosters were removed")
            }
            if acceptKey != nil {
                throw SyncError.keysRefused(
                    "the sync tree has no device rosters (written by an older Fob): --accept-key has no key to "
                        + "match; nothing changed")
            }
            return none
        }
        let keys = SyncKeys(epochs: epochs)
        var listed: [(device: String, key: [UInt8])] = []
        var lines: [String] = []
        for (device, decoded) in rosters.sorted(by: { $0.key < $1.key }) {
            let key = decoded.roster.members[device]?.publicKey ?? []
            listed.append((device, key))
            // Named from its head when the head's signature verifies with the roster's key.
            let name = files[TreePath.head(device: device)].flatMap {
                try? SignedFile.open($0, path: TreePath.head(device: device), publicKey: key)
            }.flatMap { try? DeviceHead.open($0, device: device, keys: keys) }?.name
            lines.append(
                "  \(listed.count). \(DeviceName.label(device, name: name))  \(DeviceSigningKey.fingerprint(key))")
        }
        let shown = "The sync tree's devices sign with these keys:\n" + lines.joined(separator: "\n") + "\n"
        let anchor = try acceptedDevice(listed, shown: shown, acceptKey: acceptKey)
        var trust: DeviceRoster.Trust
        do { trust = try DeviceRoster.trusted(from: [anchor.device: anchor.key], rosters: rosters) } catch {
            throw SyncError.tampered(error.description)
        }
        // As the first sync takes such a device in (``TreeSignatures/takeIn(_:path:key:revocations:rotated:run:)``).
        let revocations = !trust.revoked.isEmpty || files.keys.contains { TreePath.parseRevoked($0) != nil }
        for device in rosters.keys.sorted() where trust.keys[device] == nil {
            messages(
                "fob: device \(device) is on no roster of a device accepted:\n     it is taken in "
                    + (revocations || epochs.count > 1
                        ? "only with a head sealed under the current key epoch\n"
                        : "with its signed head, as no device of the tree is revoked\n"))
        }
        trust.origins[anchor.device] = nil
        return trust
    }

    /// The one device of `listed` (shown as `shown`, numbered from 1) whose
    /// key the user accepts: the one whose fingerprint is `acceptKey`, else
    /// the number or fingerprint ``chooseKey`` answers.
    /// - Throws: ``SyncError/keysRefused(_:)`` for a key or answer that is
    ///   no device's; ``SyncError/keysNotAsked(_:)`` with neither.
    func acceptedDevice(_ listed: [(device: String, key: [UInt8])], shown: String, acceptKey: String?) throws -> (
        device: String, key: [UInt8]
    ) {
        if let acceptKey {
            guard let found = listed.first(where: { DeviceSigningKey.fingerprint($0.key) == acceptKey }) else {
                throw SyncError.keysRefused(
                    "no device of the sync tree signs its roster with key \(acceptKey); nothing changed\n" + shown)
            }
            return found
        }
        guard let chooseKey else {
            throw SyncError.keysNotAsked(
                shown + "no terminal to accept one: compare one with `fob sync status` on that device,\n"
                    + "     then join with --accept-key FINGERPRINT")
        }
        func pick(_ typed: String) -> (device: String, key: [UInt8])? {
            let answer = String(typed.filter { $0 != " " && $0 != "\t" })
            if let number = Int(answer), listed.indices.contains(number - 1) { return listed[number - 1] }
            return listed.first { DeviceSigningKey.fingerprint($0.key) == answer }
        }
        guard let found = pick(try chooseKey(shown, listed.count) { pick($0) != nil }) else {
            throw SyncError.keysRefused("no key was accepted; nothing changed")
        }
        return found
    }

    /// The tree's device rosters by signer, each signed under its own name.
    /// - Throws: ``SyncError/tampered(_:)`` for one that does not read, or names another signer.
    static func rosters(in files: [String: [UInt8]]) throws -> [String: (
        roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8]
    )] {
        var rosters: [String: (roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8])] = [:]
        for (path, bytes) in files {
            guard let device = TreePath.parseRoster(path) else { continue }
            let decoded: (roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8])
            do {
                decoded = try reading(bytes) { (raw) throws(TreeFormatError) in try DeviceRoster.decode(raw) }
            } catch { throw SyncError.tampered("\(path) \(error)") }
            guard decoded.signer == device, decoded.roster.members[device] != nil else {
                throw SyncError.tampered(DeviceRoster.Refusal.unauthentic(path).description)
            }
            rosters[device] = decoded
        }
        return rosters
    }

    /// One device as `fob devices` lists it.
    public struct DeviceInfo: Sendable, Equatable {
        /// Its id.
        public var device: String
        /// Its name (from its head), or `nil` for one without.
        public var name: String?
        /// The highest counter it wrote.
        public var counter: UInt64
        /// Whether it is this vault.
        public var isThis: Bool
        /// Whether it was revoked (its writes after ``counter`` are ignored).
        public var isRevoked: Bool
        /// Who added it to this device's roster, and when; `nil` for a
        /// device this one has not taken in (an unsigned one).
        public var origin: DeviceRoster.Origin?
        /// The adder as `NAME (ID)` (or its id).
        public var adder: String?

        /// `NAME (ID)`, or the id alone.
        public var label: String { DeviceName.label(device, name: name) }
    }

    /// What `fob sync status` prints.
    public struct Status: Sendable {
        /// The remote.
        public var remote: String
        /// This device's id.
        public var device: String
        /// This device's name, or `nil` for one without.
        public var name: String?
        /// The last sync's end (seconds since 1970; 0 = never) and what it did.
        public var lastSync: UInt64
        public var lastMerged: UInt64
        public var lastConflicts: UInt64
        /// Items added, changed or deleted here since the last sync.
        public var pending: Int
        /// Revisions committed to the local tree (by a sync whose push
        /// failed, or by `fob resolve`) that the remote, as last fetched
        /// or pushed, lacks: the next `fob sync` sends them.
        public var unsent: Int
        /// Devices in the local tree.
        public var devices: [DeviceInfo]
        /// This device's signing key fingerprint (``DeviceSigningKey/fingerprint(_:)``).
        public var signingKey: String?
    }

    /// The state, the local tree's devices and the pending changes; no network.
    public func status() throws -> Status {
        let run = try vault.load()
        let changes = run.localChanges
        let pending = changes.changed.count + changes.deleted.count
        return Status(
            remote: run.state.remote, device: run.state.device, name: run.state.name,
            lastSync: run.state.lastSync,
            lastMerged: run.state.lastMerged, lastConflicts: run.state.lastConflicts, pending: pending,
            unsent: try hasWorkTree ? unsent(device: run.state.device) : 0, devices: try devices(run),
            signingKey: run.state.signingKey.map { DeviceSigningKey.fingerprint($0.publicKey) })
    }

    /// Whether the local work tree exists (a vault moved to a new machine has none until its next sync).
    var hasWorkTree: Bool { FileManager.default.fileExists(atPath: git.directory + "/.git") }

    func devices(_ run: SyncRun) throws -> [DeviceInfo] {
        guard hasWorkTree, let head = try git.resolve("HEAD")
        else { return [] }
        var run = run
        let (heads, revoked, _, _) = try reader.snapshotDevices(head, run: &run)
        let me = run.state.device
        return heads.values.sorted { $0.device < $1.device }.map {
            let isThis = $0.device == me
            let origin = run.state.origins[$0.device]
            let adder = origin.map { origin in
                DeviceName.label(
                    origin.device, name: origin.device == me ? run.state.name : heads[origin.device]?.name)
            }
            return DeviceInfo(
                device: $0.device, name: isThis ? run.state.name ?? $0.name : $0.name,
                counter: revoked[$0.device] ?? $0.counter, isThis: isThis, isRevoked: revoked[$0.device] != nil,
                origin: origin, adder: adder)
        }
    }

    /// `fob devices --revoke DEVICE`: after a sync that takes in what DEVICE
    /// pushed so far, its later writes are ignored by every device from the next sync
    /// on, and it can no longer sync. A new key epoch starts (sealed under
    /// `password` in this device's header), which DEVICE is never given:
    /// it cannot read what is written after. It keeps the keys it had:
    /// what it read before stays read.
    /// DEVICE is a device's id or its name (the one device that has it).
    /// - Returns: the device revoked, as `NAME (ID)` (or its id), and the sync that carries the revocation.
    /// - Throws: ``SyncError/usage(_:)`` for this device, an unknown one, or
    ///   a name several devices have.
    public func revoke(device given: String, password: SecretBytes) throws -> (device: String, outcome: Outcome) {
        let before = try vault.load()
        // This device, by id or by a name no other device has: refused before any sync.
        var copy = before
        let known = (try? git.resolve("HEAD")).flatMap { $0 }.flatMap {
            try? reader.snapshotDevices($0, run: &copy).heads
        }
        let othersNamed = (known ?? [:]).values.contains { $0.device != before.state.device && $0.name == given }
        guard given != before.state.device, before.state.name != given || othersNamed else {
            throw SyncError.usage("this vault cannot revoke itself; revoke it from another device")
        }
        // What DEVICE pushed until now is taken first: only its later writes
        // are ignored (a revocation from a stale tree dropped them for good).
        _ = try sync()
        var run = try vault.load()
        try cleanWorkTree()
        guard let head = try git.resolve("HEAD") else {
            throw SyncError.usage("no device \(given) in the sync tree; see `fob devices`")
        }
        let heads = try reader.snapshotDevices(head, run: &run).heads
        let device = try SyncEngine.device(named: given, in: heads)
        guard device != run.state.device else {
            throw SyncError.usage("this vault cannot revoke itself; revoke it from another device")
        }
        guard let counter = heads[device]?.counter else {
            throw SyncError.usage("no device \(given) in the sync tree; see `fob devices`")
        }
        _ = try epochs.startEpoch(&run, password: password, kdf: headerCosts(run.state, vaultKDF: nil))
        try run.writeSigned(
            TreePath.revoked(device: device), Revocation(device: device, counter: counter).sealed(keys: run.keys))
        try run.commit(git: git)
        return (SyncEngine.label(device, heads: heads), try sync())
    }

    /// An item with versions kept after a conflict.
    public struct Conflict: Sendable {
        /// The version the vault holds (every device picked the same).
        public var current: Item
        /// The other versions, each with the parts it lost and its writer.
        public var others: [Sibling]
        /// The id of the device whose write the vault's version kept in the
        /// parts the last of ``others`` lost, or `nil` when not known.
        public var device: String?
        /// The devices' names by id, as their heads in the local tree give them.
        public var names: [String: String]

        /// A conflict; see the properties.
        public init(current: Item, others: [Sibling], device: String? = nil, names: [String: String] = [:]) {
            self.current = current
            self.others = others
            self.device = device
            self.names = names
        }

        /// `device` as `fob devices` shows it (`NAME (ID)`, or the id alone
        /// for a device without a known name); `nil` for `nil`.
        public func label(_ device: String?) -> String? {
            device.map { DeviceName.label($0, name: names[$0]) }
        }
    }

    /// The items with conflicts in the local tree (as of the last sync); no network.
    public func conflicts() throws -> [Conflict] {
        var run = try vault.load()
        guard let head = try git.resolve("HEAD") else { return [] }
        var snap = try reader.snapshot(head, run: &run)
        // The index knows which items had conflicts; those it does not vouch for were opened.
        let names = snap.openedNames.union(run.index.filter { $0.value.versions > 0 }.keys)
        try reader.open(names, in: &snap, run: &run)
        var devices: [String: String] = [:]
        for head in snap.heads.values { devices[head.device] = head.name }
        devices[run.state.device] = run.state.name ?? devices[run.state.device]
        // The vault's version of each conflicting item is read whole (its parts are compared).
        try vault.fill(&run, names: names.filter { snap.view($0)?.hasConflict ?? false })
        var out: [Conflict] = []
        for name in names.sorted() {
            guard let view = snap.view(name), view.hasConflict, let item = run.items[name] ?? view.item,
                let last = view.siblings.last
            else { continue }
            var conflict = Conflict(current: item, others: view.siblings, names: devices)
            let lost = last.parts ?? Set(last.takenParts(over: item))
            conflict.device = SyncMerge.writer(of: lost, dots: view.fieldDots)
            out.append(conflict)
        }
        return out.sorted { ($0.current.service, $0.current.account) < ($1.current.service, $1.current.account) }
    }

    /// `fob resolve SERVICE ACCOUNT --keep local|remote`: keeps the vault's
    /// version (`local`) or the other one's conflicting parts (`remote`:
    /// the parts it lost in the merge; the parts merged from other edits
    /// stay), drops the other versions, and commits the resolution
    /// locally; the next `fob sync` carries it.
    /// - Throws: `KeychainError.itemNotFound` when the item has no conflict.
    public func resolve(service: String, account: String, keepRemote: Bool) throws {
        var run = try vault.load()
        guard let head = try git.resolve("HEAD") else {
            throw KeychainError.itemNotFound("no conflict on service \"\(service)\", account \"\(account)\"")
        }
        var snap = try reader.snapshot(head, run: &run)
        let match = run.items.first { $0.value.service == service && $0.value.account == account }
        if let name = match?.key {
            try reader.open([name], in: &snap, run: &run)
            try vault.fill(&run, names: [name])
        }
        let match2 = match.flatMap { m in run.items[m.key].map { (m.key, $0) } }
        guard let (name, stored) = match2, let view = snap.view(name), view.hasConflict, let other = view.siblings.last
        else {
            throw KeychainError.itemNotFound("no conflict on service \"\(service)\", account \"\(account)\"")
        }
        run.state.resolved.insert(name)
        var changes: [ImportChange] = []
        if keepRemote {
            var kept = other.kept(over: stored)
            kept.modified = now()
            changes.append(.replace(existing: stored, with: kept))
        }
        try vault.store(&run, with: changes)
        _ = try sync(network: false)
    }
}
