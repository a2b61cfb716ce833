import Foundation

/// The seed corpora of the fuzz targets (`Fuzz/Corpus/TARGET/`), for the
/// regression tests that feed every kept input, crashers included, to its
/// parser in the ordinary test run.
public enum FuzzCorpus {
    /// Every input kept for `target`, by file name.
    /// - Parameter target: a fuzz target's name, such as `jwt`.
    /// - Returns: name and bytes, sorted by name; empty when the folder is missing.
    public static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
        let folder = FobProcess.packageRoot.appendingPathComponent("Fuzz/Corpus/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().compactMap { name in
            FileManager.default.contents(atPath: folder.appendingPathComponent(name).path).map { (name, Array($0)) }
        }
    }
}
