import FobTestSupport
import Foundation
import Testing

/// `fob` loads no network library and no XML library: libcurl lives in the
/// `fob-http` helper, started only for OAuth, and libxml2 in `fob-xml`,
/// started only by `fob import keepassxc-xml`; none of them links
/// Foundation proper (libFoundation and its ICU).
@Suite struct StartupTests {
    private func libraries(of binary: String) throws -> String {
        try ChildProcess.run(executable: "/usr/bin/ldd", arguments: [binary], environment: FobProcess.baseEnvironment)
            .stdoutText
    }

    @Test func fobLinksNoNetworkLibrary() throws {
        let libraries = try libraries(of: FobProcess.binaryURL.path)
        #expect(!libraries.contains("libFoundationNetworking"), "\(libraries)")
        #expect(!libraries.contains("libcurl"), "\(libraries)")
    }

    @Test func fobLinksNoXMLLibrary() throws {
        let libraries = try libraries(of: FobProcess.binaryURL.path)
        #expect(!libraries.contains("libFoundationXML"), "\(libraries)")
        #expect(!libraries.contains("libxml2"), "\(libraries)")
    }

    @Test func theXMLHelperSitsBesideFobAndCarriesTheParser() throws {
        let helper = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent("fob-xml").path
        #expect(FileManager.default.isExecutableFile(atPath: helper))
        let libraries = try libraries(of: helper)
        #expect(libraries.contains("libxml2"), "\(libraries)")
        #expect(!libraries.contains("libFoundationXML"), "\(libraries)")
    }

    @Test(arguments: ["fob", "fob-http", "fob-xml", "fob-secret-service"])
    func noBinaryLinksFoundationProper(name: String) throws {
        let binary = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent(name).path
        let libraries = try libraries(of: binary)
        #expect(!libraries.contains("libFoundation.so"), "\(libraries)")
        #expect(!libraries.contains("libFoundationInternationalization"), "\(libraries)")
        #expect(!libraries.contains("lib_FoundationICU"), "\(libraries)")
    }

    @Test func theHelperSitsBesideFobAndCarriesTheNetwork() throws {
        let helper = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent("fob-http").path
        #expect(FileManager.default.isExecutableFile(atPath: helper))
        let libraries = try libraries(of: helper)
        #expect(libraries.contains("libcurl"), "\(libraries)")
        #expect(!libraries.contains("libFoundationNetworking"), "\(libraries)")
    }
}
