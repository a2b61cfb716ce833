import CSQLite
import CSodium

/// The whole-vault commitment as verified, kept in memory so that a lookup
/// stays one indexed read: the element of every item, by lookup.
///
/// The commitment is an incremental set hash in the spirit of Clarke et al.'s
/// MSet-XOR-Hash: the element of an item is keyed BLAKE2b-256 (subkey 5) of
/// `length(lookup) (UInt32 LE) ‖ lookup ‖ record`; the accumulator is the XOR
/// of every element; the file keeps, in `meta.integrity`, a write counter, the
/// item count and MAC = keyed BLAKE2b-256 (subkey 6) of
/// `"fob vault v2 commitment" ‖ counter ‖ count ‖ accumulator`. The
/// accumulator itself is never stored, so a copy of the file shows nothing
/// but pseudo-random MACs.
struct IntegrityState {
    var elements: [Digest: Digest]
    var accumulator: Digest
    var counter: UInt64
    /// `PRAGMA data_version` when this state was read from the file.
    var dataVersion: Int64

    static func empty(dataVersion: Int64) -> IntegrityState {
        IntegrityState(elements: [:], accumulator: .zero, counter: 0, dataVersion: dataVersion)
    }
}

/// What a write transaction changed in the ``IntegrityState``, to undo it
/// when the transaction rolls back.
struct IntegrityJournal {
    let accumulator: Digest
    let counter: UInt64
    var previous: [(lookup: Digest, element: Digest?)] = []
}

extension Vault {
    static let commitmentMismatch = KeychainError.decode(commitmentMismatchText)

    /// The element of one row (see ``IntegrityState``).
    static func element(lookup: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, key: SecretBytes) -> Digest {
        withUnsafeTemporaryAllocation(byteCount: 4 + lookup.count + record.count, alignment: 8) { buffer in
            let n = UInt32(truncatingIfNeeded: lookup.count).littleEndian
            withUnsafeBytes(of: n) { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 4) }
            if let l = lookup.baseAddress { (buffer.baseAddress! + 4).copyMemory(from: l, byteCount: lookup.count) }
            if let r = record.baseAddress {
                (buffer.baseAddress! + 4 + lookup.count).copyMemory(from: r, byteCount: record.count)
            }
            return Crypto.keyedDigest(UnsafeRawBufferPointer(buffer), key: key)
        }
    }

    static func element(lookup: [UInt8], record: [UInt8], key: SecretBytes) -> Digest {
        lookup.withUnsafeBytes { l in record.withUnsafeBytes { r in element(lookup: l, record: r, key: key) } }
    }

    /// `counter ‖ count ‖ MAC`, the value of `meta.integrity`.
    static func integrityValue(counter: UInt64, count: Int, accumulator: Digest, key: SecretBytes) -> [UInt8] {
        let header = le64(counter) + le64(UInt64(count))
        let input = Array("fob vault v2 commitment".utf8) + header + accumulator.bytes
        return header + Crypto.keyedHash(input, key: key)
    }

    static func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }

    static func readLE64(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    /// Scans every row and checks it against `meta.integrity`: each lookup
    /// 32 bytes and unique, each record within ``maxRecordBytes``, the count,
    /// and the MAC over the recomputed accumulator (compared in constant time).
    /// Run inside a transaction, so that `meta` and the rows are one snapshot.
    /// - Throws: `.decode` on any difference.
    func scanCommitment(meta: VaultMeta, keys: VaultKeys, dataVersion: Int64) throws(KeychainError) -> IntegrityState {
        guard let stored = meta.integrity, stored.count == VaultMeta.integrityBytes else {
            throw .decode("vault commitment missing")
        }
        let counter = Vault.readLE64(stored[0..<8])
        var state = IntegrityState(elements: [:], accumulator: .zero, counter: counter, dataVersion: dataVersion)
        state.elements.reserveCapacity(integrity?.elements.count ?? 0)
        let consistent = try guarded { () throws(SQLiteError) -> Bool in
            let stmt = try db.prepare("SELECT lookup, record FROM items")
            while try stmt.step() {
                let lookup = stmt.rawBlob(0)
                let record = stmt.rawBlob(1)
                guard lookup.count == 32, record.count <= Vault.maxRecordBytes else { return false }
                let element = Vault.element(lookup: lookup, record: record, key: keys.element)
                guard state.elements.updateValue(element, forKey: Digest(lookup)) == nil else { return false }
                state.accumulator = state.accumulator ^ element
            }
            return true
        }
        let expected = Vault.integrityValue(
            counter: counter, count: state.elements.count, accumulator: state.accumulator, key: keys.commitment)
        guard consistent, sodium_memcmp(expected, stored, expected.count) == 0 else { throw Vault.commitmentMismatch }
        return state
    }

    /// Makes the in-memory commitment current: when another connection has
    /// committed since it was read (`PRAGMA data_version`), or it was never
    /// read, checks the schema, the sealed vault key and every row again.
    /// Inside a transaction (a write, or the read of ``rows(matching:withSecrets:)``)
    /// the check and what follows see one snapshot; otherwise it reads in a
    /// read transaction of its own.
    /// - Throws: `.decode` for tampering, also a write counter below one
    ///   already seen (the whole vault put back to an earlier state while in
    ///   use); `.interactionNotAllowed` (and the vault locks) when the vault
    ///   key was changed by another process.
    func ensureFresh() throws(KeychainError) {
        try inTransaction { () throws(KeychainError) in
            let version = try dataVersion()
            if let integrity, integrity.dataVersion == version { return }
            guard let keys else { throw Vault.lockedError }
            integrity = nil
            guard try readFormat() == Vault.formatVersion else {
                throw KeychainError.decode("the vault's format changed")
            }
            try checkSchema()
            let meta = try readMeta(format: Vault.formatVersion)
            guard meta.sealedKey == unlockedMeta?.sealedKey else {
                lock()
                throw KeychainError.interactionNotAllowed(
                    "the master password or vault key was changed by another process; unlock again")
            }
            let state = try scanCommitment(meta: meta, keys: keys, dataVersion: version)
            if let highest = highestCounter, state.counter < highest {
                throw KeychainError.decode(
                    "the vault was put back to an earlier state (write \(state.counter), after \(highest) here)")
            }
            integrity = state
            highestCounter = state.counter
        }
    }

    /// Runs `body` in a read transaction (`BEGIN … COMMIT`), or as it is when
    /// a transaction is already open, so that everything it reads is one snapshot.
    func inTransaction<R>(_ body: () throws(KeychainError) -> R) throws(KeychainError) -> R {
        guard sqlite3_get_autocommit(db.handle) != 0 else { return try body() }
        _ = try guarded { () throws(SQLiteError) in try cached("BEGIN").step() }
        do throws(KeychainError) {
            let result = try body()
            _ = try guarded { () throws(SQLiteError) in try cached("COMMIT").step() }
            return result
        } catch {
            _ = try? cached("ROLLBACK").step()
            throw error
        }
    }

    /// Records that a row with `lookup` now has `element` (`nil`: the row is gone).
    func noteWrite(lookup: Digest, element: Digest?) {
        guard var state = integrity else { return }
        integrity = nil // keeps the dictionary uniquely referenced while it changes
        let old: Digest?
        if let element {
            old = state.elements.updateValue(element, forKey: lookup)
            state.accumulator = state.accumulator ^ element
        } else {
            old = state.elements.removeValue(forKey: lookup)
        }
        if let old { state.accumulator = state.accumulator ^ old }
        journal?.previous.append((lookup, old))
        integrity = state
    }

    /// Puts the in-memory commitment back as it was before the write transaction.
    func undo(_ journal: IntegrityJournal) {
        guard var state = integrity else { return }
        integrity = nil
        for change in journal.previous.reversed() {
            if let element = change.element {
                state.elements[change.lookup] = element
            } else {
                state.elements[change.lookup] = nil
            }
        }
        state.accumulator = journal.accumulator
        state.counter = journal.counter
        integrity = state
    }

    /// Writes the next counter and the MAC of the current set into `meta`.
    func writeCommitment(keys: VaultKeys) throws(KeychainError) {
        guard var state = integrity else { throw Vault.commitmentMismatch }
        state.counter += 1
        let value = Vault.integrityValue(
            counter: state.counter, count: state.elements.count,
            accumulator: state.accumulator, key: keys.commitment)
        try guarded { () throws(SQLiteError) in try writeMetaValues([("integrity", value)]) }
        integrity = state
    }
}
