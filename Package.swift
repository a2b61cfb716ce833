// swift-tools-version:6.0
// Fob: a keychain for the Linux terminal. See README.md.
import PackageDescription

let package = Package(
    name: "Fob",
    products: [
        .executable(name: "fob", targets: ["fob"]),
        .executable(name: "fob-bench", targets: ["fob-bench"]),
        .library(name: "FobStore", targets: ["FobStore"]),
        .library(name: "FobTokens", targets: ["FobTokens"]),
        .library(name: "FobSecurity", targets: ["FobSecurity"]),
    ],
    targets: [
        // System libraries (Debian packages); each has a module.modulemap and a shim.h.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // No pkgConfig: ncursesw's .pc adds -D flags SwiftPM refuses; the module map links it.
        .systemLibrary(name: "CNcurses",
                       providers: [.apt(["libncurses-dev"])]),

        .target(name: "FobStore", dependencies: ["CSodium", "CSQLite"]),
        .target(name: "FobTokens", dependencies: ["CSodium"]),
        .target(name: "FobSecurity", dependencies: ["FobStore"]),
        .target(name: "FobViewModels", dependencies: ["FobStore", "FobTokens"]),
        .target(name: "FobTerminal", dependencies: ["FobViewModels", "CNcurses"]),
        .target(name: "FobCLI", dependencies: ["FobTerminal", "FobViewModels", "FobTokens", "FobStore"]),
        .executableTarget(name: "fob", dependencies: ["FobCLI"]),
        .executableTarget(name: "fob-bench", dependencies: ["FobStore", "FobViewModels", "FobTerminal"]),

        // Helpers shared by the test targets: temporary vaults, child processes, tmux.
        .target(name: "FobTestSupport", dependencies: ["FobStore", "FobViewModels"]),

        .testTarget(name: "FobStoreTests", dependencies: ["FobStore", "CSQLite", "FobTestSupport"]),
        .testTarget(name: "FobTokensTests", dependencies: ["FobTokens", "FobViewModels", "FobStore", "FobTestSupport"]),
        .testTarget(name: "FobSecurityTests", dependencies: ["FobSecurity", "FobStore", "FobTestSupport"]),
        // Keychain code written as iOS projects write it, in Swift 5 mode: it must build
        // unchanged but for `import FobSecurity`.
        .testTarget(name: "FobSecurityCompatTests", dependencies: ["FobSecurity", "FobStore", "FobTestSupport"],
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "FobViewModelsTests", dependencies: ["FobViewModels", "FobStore", "FobTokens", "FobTestSupport"]),
        .testTarget(name: "FobTerminalTests", dependencies: ["FobTerminal", "FobViewModels", "FobTestSupport"]),
        .testTarget(name: "FobCLITests", dependencies: ["FobCLI", "FobStore", "FobTestSupport"]),
        // Runs the built `fob` binary as a child process and inside tmux.
        .testTarget(name: "FobEndToEndTests", dependencies: ["FobStore", "FobTokens", "FobSecurity", "FobTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
