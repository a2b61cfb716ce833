import Foundation
import Testing

@testable import FobSystem

/// Whether the kernel has the page at `address` locked: the `lo` flag of
/// its mapping in /proc/self/smaps.
private func kernelLocked(_ address: UInt) -> Bool? {
    // /proc files report size 0: read to the end rather than by size.
    guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return nil }
    defer { try? handle.close() }
    let data = handle.readDataToEndOfFile()
    let smaps = String(decoding: data, as: UTF8.self)
    var inside = false
    for line in smaps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
            let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
            inside = bounds.count == 2 && bounds[0] <= address && address < bounds[1]
        } else if inside && line.hasPrefix("VmFlags:") {
            return fields.contains("lo")
        }
    }
    return nil
}

/// Secrets share pages; freeing one must not unlock the page its
/// neighbours still live on.
@Suite(.serialized) struct PageLockTests {
    @Test func freeingASecretKeepsItsNeighboursPageLocked() throws {
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var secrets: [SecretBytes] = []
        var pair: (Int, Int)?
        // Small allocations land side by side: find two on one page.
        for index in 0..<512 where pair == nil {
            let secret = SecretBytes([UInt8](repeating: UInt8(index & 0xFF), count: 24))
            secrets.append(secret)
            if let other = secrets.dropLast().firstIndex(where: { $0.address / page == secret.address / page }) {
                pair = (other, secrets.count - 1)
            }
        }
        let (first, second) = try #require(pair)
        let survivor = secrets[second]
        #expect(survivor.isLocked)
        #expect(kernelLocked(survivor.address) == true)
        // Free the neighbour (every other reference goes with the array).
        let firstAddress = secrets[first].address
        secrets.removeAll()
        secrets.append(survivor)
        #expect(firstAddress / page == survivor.address / page)
        #expect(survivor.isLocked)
        #expect(kernelLocked(survivor.address) == true, "freeing a neighbour unlocked the page")
        #expect(survivor.unsafeArray == [UInt8](repeating: UInt8(second & 0xFF), count: 24))
    }
}
