import FobStore
import FoundationEssentials

/// The parsers of the sync tree's files, for the fuzz target `sync-tree`
/// and its corpus test: every input gives a typed result, never a trap.
@_spi(Fuzz) public enum SyncFuzzEntryPoints {
    /// Parses `bytes` by its first byte: 0 a revision's plaintext, 1 a
    /// head's, 2 a header file, 3 a state item's secret, 5 an epoch file's
    /// plaintext, 6 an index shard's secret (prefix ""), 7 a device roster,
    /// 8 a signed file's envelope, any other a tree path.
    /// - Returns: whether the rest parsed.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let kind = bytes.first else { return false }
        let rest = UnsafeRawBufferPointer(rebasing: bytes.dropFirst())
        let device = "0123456789abcdef"
        switch kind {
        case 0: return (try? Revision.decodePlaintext(rest, dot: Dot(device: device, counter: 1))) != nil
        case 1: return (try? DeviceHead.decodePlaintext(rest, device: device)) != nil
        case 2: return (try? TreeHeader.parse(Array(rest))) != nil
        case 3: return (try? SyncState.decode(SecretBytes(rest))) != nil
        case 5: return (try? EpochFile.decodePlaintext(rest)) != nil
        case 6: return (try? SyncIndexShards.decode(SecretBytes(rest), prefix: "")) != nil
        case 7:
            guard let roster = try? DeviceRoster.decode(rest).roster else { return false }
            _ = try? roster.checkAdders()
            return true
        case 8: return (try? SignedFile.parse(rest)) != nil
        default:
            let path = String(decoding: rest, as: UTF8.self)
            return TreePath.parseRecord(path) != nil || TreePath.parseHead(path) != nil
                || TreePath.parseEpoch(path) != nil || TreePath.parseRoster(path) != nil
        }
    }
}
