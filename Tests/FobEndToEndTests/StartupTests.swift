import FobTestSupport
import Foundation
import Testing

/// `fob` loads no network library and no XML library: URLSession
/// (FoundationNetworking and libcurl's tree) lives in the `fob-http` helper,
/// started only for OAuth, and XMLParser (FoundationXML, libxml2, ICU) in
/// `fob-xml`, started only by `fob import keepassxc-xml`.
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
        #expect(libraries.contains("libFoundationXML") || libraries.contains("libxml2"), "\(libraries)")
    }

    @Test func theHelperSitsBesideFobAndCarriesTheNetwork() throws {
        let helper = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent("fob-http").path
        #expect(FileManager.default.isExecutableFile(atPath: helper))
        #expect(try libraries(of: helper).contains("libFoundationNetworking"))
    }
}
