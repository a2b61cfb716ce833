import Foundation
import FobTestSupport
import Testing

/// `fob` loads no network library: URLSession (FoundationNetworking and
/// libcurl's tree) lives in the `fob-http` helper, started only for OAuth.
@Suite struct StartupTests {
    private func libraries(of binary: String) throws -> String {
        try ChildProcess.run(executable: "/usr/bin/ldd", arguments: [binary], environment: FobProcess.baseEnvironment).stdoutText
    }

    @Test func fobLinksNoNetworkLibrary() throws {
        let libraries = try libraries(of: FobProcess.binaryURL.path)
        #expect(!libraries.contains("libFoundationNetworking"), "\(libraries)")
        #expect(!libraries.contains("libcurl"), "\(libraries)")
    }

    @Test func theHelperSitsBesideFobAndCarriesTheNetwork() throws {
        let helper = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent("fob-http").path
        #expect(FileManager.default.isExecutableFile(atPath: helper))
        #expect(try libraries(of: helper).contains("libFoundationNetworking"))
    }
}
