import FoundationEssentials
@preconcurrency import Glibc

/// Locks memory pages against swap with a reference count per page, so that
/// secrets sharing a page keep it locked until the last of them is freed.
///
/// `mlock` and `munlock` work on whole pages: with one `mlock`/`munlock` per
/// allocation, freeing one small secret unlocked the page its neighbours
/// still live on. Here each allocation takes a reference on every page it
/// spans; a page is locked when its first reference is taken and unlocked
/// when its last goes. Where the limit (`RLIMIT_MEMLOCK`) refuses a page, it
/// stays unlocked (and is tried again when it next gains a first reference).
enum PageLocks {
    /// A page's references and whether `mlock` took it.
    private struct Entry {
        var references: Int
        var locked: Bool
    }

    private static let pageSize = UInt(max(4096, sysconf(Int32(_SC_PAGESIZE))))
    nonisolated(unsafe) private static var pages: [UInt: Entry] = [:]
    private static let lock = Lock()

    /// The first byte of every page `[address, address + count)` touches.
    private static func pageStarts(_ address: UnsafeMutableRawPointer, _ count: Int) -> StrideTo<UInt> {
        let start = UInt(bitPattern: address) & ~(pageSize - 1)
        let end = UInt(bitPattern: address) + UInt(count)
        return stride(from: start, to: end, by: Int(pageSize))
    }

    /// Takes a reference on the pages of `[address, address + count)`,
    /// locking those that had none.
    /// - Returns: whether every page is locked.
    @discardableResult
    static func retain(_ address: UnsafeMutableRawPointer, count: Int) -> Bool {
        guard count > 0 else { return true }
        lock.lock()
        defer { lock.unlock() }
        var all = true
        for page in pageStarts(address, count) {
            var entry = pages[page] ?? Entry(references: 0, locked: false)
            if !entry.locked { entry.locked = mlock(UnsafeRawPointer(bitPattern: page), Int(pageSize)) == 0 }
            entry.references += 1
            all = all && entry.locked
            pages[page] = entry
        }
        return all
    }

    /// Drops the references of ``retain(_:count:)``, unlocking the pages
    /// no allocation uses any more. The caller has wiped the bytes first.
    static func release(_ address: UnsafeMutableRawPointer, count: Int) {
        guard count > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        for page in pageStarts(address, count) {
            guard var entry = pages[page] else { continue }
            entry.references -= 1
            if entry.references > 0 {
                pages[page] = entry
            } else {
                if entry.locked { munlock(UnsafeRawPointer(bitPattern: page), Int(pageSize)) }
                pages[page] = nil
            }
        }
    }

    /// Whether Fob holds the page of `address` locked (for tests).
    static func isLocked(_ address: UnsafeRawPointer) -> Bool {
        let page = UInt(bitPattern: address) & ~(pageSize - 1)
        return lock.withLock { pages[page]?.locked ?? false }
    }
}
