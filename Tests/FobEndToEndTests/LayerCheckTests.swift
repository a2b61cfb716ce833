import FobTestSupport
import Foundation
import Testing

/// `scripts/check-layers` passes on the tree and fails, naming the file and
/// the import or symbol, on a copy with an import the layer map
/// (docs/design.md) forbids, one Package.swift does not declare, or a symbol
/// of a forbidden module reached through an allowed one.
@Suite struct LayerCheckTests {
    /// Runs the checker on `root`; its stdout and stderr together.
    private func check(_ root: URL) throws -> (status: Int32, output: String) {
        let script = FobProcess.packageRoot.appendingPathComponent("scripts/check-layers").path
        return try runTool("/bin/sh", ["-c", "exec \"$0\" \"$1\" 2>&1", script, root.path])
    }

    /// A copy of the package's manifest, docs and sources.
    private func copyOfPackage() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory(prefix: "fob-layers")
        for name in ["Package.swift", "docs", "Sources", "Tests"] {
            try FileManager.default.copyItem(
                at: FobProcess.packageRoot.appendingPathComponent(name),
                to: dir.file(name))
        }
        return dir
    }

    private func append(_ text: String, to url: URL) throws {
        let old = try String(contentsOf: url, encoding: .utf8)
        try (text + old).write(to: url, atomically: true, encoding: .utf8)
    }

    @Test func theTreeFollowsTheMap() throws {
        let result = try check(FobProcess.packageRoot)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func anImportUpTheLayersFails() throws {
        let dir = try copyOfPackage()
        try append("import FobTerminal\n", to: dir.file("Sources/FobStore/ItemKey.swift"))
        let result = try check(dir.url)
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "Sources/FobStore/ItemKey.swift:1: import FobTerminal: FobStore may not import FobTerminal"))
    }

    @Test func anUndeclaredDependencyFails() throws {
        let dir = try copyOfPackage()
        // FobTerminal may import FobSystem (the map allows it), but here Package.swift no longer declares it.
        let manifest = dir.file("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let edited = text.replacingOccurrences(
            of: #"dependencies: ["FobViewModels", "FobTokens", "FobStore", "FobSystem", "CNcurses"]"#,
            with: #"dependencies: ["FobViewModels", "FobTokens", "FobStore", "CNcurses"]"#)
        #expect(edited != text)
        try edited.write(to: manifest, atomically: true, encoding: .utf8)
        let result = try check(dir.url)
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "import FobSystem: Package.swift does not declare FobSystem as a dependency of FobTerminal"))
    }

    @Test func aDependencyTheMapDoesNotAllowFails() throws {
        let dir = try copyOfPackage()
        let manifest = dir.file("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let edited = text.replacingOccurrences(
            of: #".target(name: "FobSecurity", dependencies: ["FobAccess", "FobAgent", "FobStore"]"#,
            with: #".target(name: "FobSecurity", dependencies: ["FobAccess", "FobAgent", "FobStore", "FobClipboard"]"#)
        #expect(edited != text)
        try edited.write(to: manifest, atomically: true, encoding: .utf8)
        let result = try check(dir.url)
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "Package.swift: FobSecurity depends on FobClipboard, which the layer map does not allow"))
    }

    /// Without MemberImportVisibility a file could use the members of a type
    /// reached through another module (FobViewModels reading FobAgent's
    /// `AgentEvent.kind` through FobAccess) with no import to check.
    @Test func aTargetWithoutMemberImportVisibilityFails() throws {
        let dir = try copyOfPackage()
        let manifest = dir.file("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let edited = text.replacingOccurrences(
            of: #"[.enableUpcomingFeature("MemberImportVisibility")]"#, with: "[]")
        #expect(edited != text)
        try edited.write(to: manifest, atomically: true, encoding: .utf8)
        let result = try check(dir.url)
        #expect(result.status == 1)
        #expect(result.output.contains("Package.swift: FobViewModels does not build with MemberImportVisibility"))
    }

    @Test func aReExportOfAModuleAnImporterMayNotSeeFails() throws {
        let dir = try copyOfPackage()
        try append("@_exported import FobAgent\n", to: dir.file("Sources/FobAccess/AccessSettings.swift"))
        let result = try check(dir.url)
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "Sources/FobAccess/AccessSettings.swift:1: @_exported import FobAgent: FobSessions imports FobAccess"
                    + " and so would see FobAgent, which it may not import"))
    }

    @Test func anAliasOfATypeFromAForbiddenModuleFailsWhereItIsUsed() throws {
        let dir = try copyOfPackage()
        try append("public typealias StoreEvent = AgentEvent\n", to: dir.file("Sources/FobAccess/AccessSettings.swift"))
        try append("typealias Heard = StoreEvent\n", to: dir.file("Sources/FobSessions/LogoutWipe.swift"))
        let result = try check(dir.url)
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "Sources/FobSessions/LogoutWipe.swift:1: StoreEvent: FobAccess's alias of FobAgent's AgentEvent,"
                    + " which FobSessions may not use"))
    }
}
