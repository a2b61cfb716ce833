// swift-tools-version:6.0
// Fob: a keychain for the Linux terminal. See README.md.
import PackageDescription

let package = Package(
    name: "Fob",
    products: [
        .executable(name: "fob", targets: ["fob"]),
        .executable(name: "fob-bench", targets: ["fob-bench"]),
        .executable(name: "fob-http", targets: ["fob-http"]),
        .executable(name: "fob-xml", targets: ["fob-xml"]),
        .executable(name: "fob-secret-service", targets: ["fob-secret-service"]),
        .library(name: "FobStore", targets: ["FobStore"]),
        .library(name: "FobTokens", targets: ["FobTokens"]),
        .library(name: "FobSecurity", targets: ["FobSecurity"]),
        .library(name: "FobAgent", targets: ["FobAgent"]),
        .library(name: "FobSSH", targets: ["FobSSH"]),
        // For the fuzz targets in Fuzz/ (a separate package, see docs/fuzzing.md).
        .library(name: "FobTerminal", targets: ["FobTerminal"]),
        .library(name: "FobImport", targets: ["FobImport"]),
        .library(name: "FobXML", targets: ["FobXML"]),
        .library(name: "FobViewModels", targets: ["FobViewModels"]),
        .library(name: "FobSecretService", targets: ["FobSecretService"]),
        .library(name: "FobCLI", targets: ["FobCLI"]),
        .library(name: "FobSync", targets: ["FobSync"]),
    ],
    targets: [
        // System libraries (Debian packages); each has a module.modulemap and a shim.h.
        .systemLibrary(
            name: "CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        // Loads a C library at its first use: SQLite, Nettle and ncurses are
        // not loaded by commands that do not use them (CLoader.h).
        .target(name: "CLoader"),
        // HMAC-SHA-1 for one-time codes (libsodium has no SHA-1), loaded at first use (apt: nettle-dev).
        .target(name: "CNettle", dependencies: ["CLoader"]),
        // Loaded at first use (apt: libsqlite3-dev).
        .target(name: "CSQLite", dependencies: ["CLoader"]),
        // Loaded at first use (apt: libncurses-dev).
        .target(name: "CNcurses", dependencies: ["CLoader"]),

        // sd-bus, the D-Bus library of fob-secret-service (no running systemd needed).
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        // GMP's constant-time modular exponentiation for the Secret Service's DH transfer.
        .systemLibrary(name: "CGMP", providers: [.apt(["libgmp-dev"])]),

        // libcurl, the network library of fob-http (FobHTTP).
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        // libxml2's SAX2 parser, for fob-xml (FobXML).
        .systemLibrary(
            name: "CXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),

        // Linux calls Swift cannot import directly (prctl …); no library to link.
        .systemLibrary(name: "CLinux"),

        // Each module imports only modules below it; scripts/check-layers enforces
        // the layer map in docs/design.md against these declarations.
        .target(name: "FobSystem", dependencies: ["CLinux", "CSodium"]),
        .target(name: "FobStore", dependencies: ["FobSystem", "CSodium", "CSQLite"]),
        .target(name: "FobTokens", dependencies: ["FobSystem", "CSodium", "CNettle"]),
        // The SSH agent protocol, SSH keys and key files, session-bind and known_hosts.
        .target(name: "FobSSH", dependencies: ["FobSystem", "CSodium", "CNettle"]),
        .target(name: "FobAgent", dependencies: ["FobSSH", "FobStore", "FobSystem", "CLinux"]),
        // The one way to the items for every front end: the store protocol,
        // the vault here, the agent, and the policy between them.
        .target(name: "FobAccess", dependencies: ["FobAgent", "FobStore", "FobSystem"]),
        .target(name: "FobSecurity", dependencies: ["FobAccess", "FobAgent", "FobStore"]),
        // Sync across machines: the tree's format, the merge, git as a program.
        .target(name: "FobSync", dependencies: ["FobAccess", "FobAgent", "FobStore", "FobSystem", "CSodium"]),
        .target(name: "FobClipboard", dependencies: ["FobSystem"]),
        // Readers of other password managers' exports and Fob's own (fob import / export).
        .target(name: "FobImport", dependencies: ["FobTokens", "FobStore", "FobSystem"]),
        .target(name: "FobSessions", dependencies: ["FobAccess", "FobStore", "FobTokens"]),
        .target(
            name: "FobViewModels",
            dependencies: [
                "FobAccess", "FobSessions", "FobClipboard", "FobAgent", "FobStore", "FobTokens", "FobSystem",
            ]),
        .target(
            name: "FobTerminal", dependencies: ["FobViewModels", "FobTokens", "FobStore", "FobSystem", "CNcurses"]),
        .target(
            name: "FobCLI",
            dependencies: [
                "FobTerminal", "FobViewModels", "FobSessions", "FobSync", "FobAccess", "FobClipboard",
                "FobImport", "FobAgent", "FobSSH", "FobTokens", "FobStore", "FobSystem",
            ]),
        .executableTarget(name: "fob", dependencies: ["FobCLI"]),
        // The network helper: libcurl lives here and in FobHTTP only, so
        // `fob` itself loads no network library.
        .target(name: "FobHTTP", dependencies: ["FobTokens", "FobSystem", "CCurl"]),
        .executableTarget(name: "fob-http", dependencies: ["FobHTTP", "FobTokens", "FobSystem"]),
        // The XML helper: libxml2 lives here and in FobXML only, for
        // `fob import keepassxc-xml`.
        .target(name: "FobXML", dependencies: ["FobImport", "CXML2"]),
        .executableTarget(name: "fob-xml", dependencies: ["FobXML", "FobImport", "FobStore", "FobSystem"]),
        // The Secret Service helper: sd-bus lives here only, so `fob` itself
        // loads no D-Bus library. The C target holds the sd-bus vtables
        // (macros Swift cannot import) and the GMP/Nettle glue of the DH transfer.
        .target(
            name: "CSecretService", dependencies: ["CSystemd", "CGMP", "CNettle"],
            linkerSettings: [.linkedLibrary("systemd"), .linkedLibrary("gmp"), .linkedLibrary("nettle")]),
        .target(
            name: "FobSecretService",
            dependencies: ["CSecretService", "CSystemd", "FobAccess", "FobAgent", "FobStore", "FobSystem"]),
        .executableTarget(name: "fob-secret-service", dependencies: ["FobSecretService", "FobSystem"]),
        // Keychain code as written for Apple's Security framework, built against
        // FobSecurity: the SecItem program the end-to-end consent tests run.
        .executableTarget(name: "keychain-example", dependencies: ["FobSecurity"], path: "Examples/keychain-example"),
        .executableTarget(
            name: "fob-bench",
            dependencies: [
                "FobImport", "FobStore", "FobViewModels", "FobTerminal", "FobSessions", "FobSync", "FobAccess",
                "FobAgent", "FobSSH", "FobClipboard", "FobSystem",
            ]),

        // Every fake and fixture shared by the test targets: temporary vaults,
        // in-memory store and clipboard, test clock, child processes, tmux.
        .target(
            name: "FobTestSupport",
            dependencies: [
                "FobSessions", "FobAccess", "FobAgent", "FobClipboard", "FobTokens", "FobStore", "FobSystem", "CSQLite",
            ]),

        .testTarget(
            name: "FobAgentTests",
            dependencies: ["FobAgent", "FobSSH", "FobStore", "FobSystem", "CSQLite", "FobTestSupport"]),
        .testTarget(name: "FobSSHTests", dependencies: ["FobSSH", "FobSystem", "FobTestSupport"]),
        .testTarget(
            name: "FobAccessTests",
            dependencies: [
                "FobAccess", "FobAgent", "FobStore", "FobSystem", "FobViewModels", "FobClipboard",
                "FobTestSupport",
            ]),
        .testTarget(name: "FobSystemTests", dependencies: ["FobSystem", "FobTestSupport"]),
        .testTarget(name: "FobStoreTests", dependencies: ["FobStore", "FobSystem", "CSQLite", "FobTestSupport"]),
        .testTarget(name: "FobTokensTests", dependencies: ["FobTokens", "FobHTTP", "FobTestSupport"]),
        .testTarget(name: "FobSyncTests", dependencies: ["FobSync", "FobAccess", "FobStore", "FobTestSupport"]),
        .testTarget(name: "FobSecurityTests", dependencies: ["FobSecurity", "FobStore", "FobTestSupport"]),
        // Keychain code written as iOS projects write it, in Swift 5 mode: it must build
        // unchanged but for `import FobSecurity`.
        .testTarget(
            name: "FobSecurityCompatTests", dependencies: ["FobSecurity", "FobStore", "FobTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(
            name: "FobClipboardTests", dependencies: ["FobClipboard", "FobStore", "FobSystem", "FobTestSupport"]),
        .testTarget(
            name: "FobSessionsTests",
            dependencies: ["FobSessions", "FobAccess", "FobStore", "FobTokens", "FobTestSupport"]),
        .testTarget(
            name: "FobViewModelsTests",
            dependencies: [
                "FobViewModels", "FobAccess", "FobSessions", "FobClipboard", "FobStore",
                "FobTokens", "FobSystem", "FobTestSupport", "FobAgent", "FobSSH",
            ]),
        .testTarget(
            name: "FobTerminalTests",
            dependencies: [
                "FobTerminal", "FobViewModels", "FobClipboard", "FobStore", "FobSystem", "CNcurses",
                "FobTestSupport",
            ]),
        .testTarget(
            name: "FobImportTests", dependencies: ["FobImport", "FobXML", "FobStore", "FobTokens", "FobTestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "FobCLITests",
            dependencies: ["FobCLI", "FobAgent", "FobSessions", "FobTokens", "FobStore", "FobTestSupport"]),
        // Integration: the built `fob` as a process and in tmux, real clipboards under Xvfb.
        .testTarget(
            name: "FobSecretServiceTests",
            dependencies: [
                "FobAccess", "FobAgent", "FobSecretService", "FobStore", "FobSystem",
                "FobTestSupport",
            ]),
        .testTarget(
            name: "FobEndToEndTests",
            dependencies: [
                "FobHTTP", "FobAgent", "FobStore", "FobTokens", "FobSecurity", "FobClipboard",
                "FobSystem", "FobTestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// A file of a module sees the members of a type only from modules it
// imports itself (SE-0444), so a type handed on by the layer between cannot
// be used unseen: scripts/check-layers holds every import to the layer map.
// (Test targets may import anything.)
for target in package.targets where target.type != .system && target.type != .test {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
