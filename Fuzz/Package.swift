// swift-tools-version:5.4
// Fob's libFuzzer targets: one executable per parser of untrusted input,
// built only by scripts/fuzz (with -sanitize=fuzzer,address), never by the
// main package's `swift build`. See docs/fuzzing.md.
//
// Tools version 5.4 on purpose: from 5.5 SwiftPM renames an executable's
// entry point to <module>_main for testable executables, but a fuzz target
// has no entry point of its own (libFuzzer's main drives it).
import PackageDescription

/// One line per target: its folder under Targets/ (one Swift file defining
/// LLVMFuzzerTestOneInput) and the Fob libraries it imports.
let fuzzTargets: [(name: String, libraries: [String])] = [
    ("record", ["FobStore"]),
    ("vault-open", ["FobStore"]),
    ("jwt", ["FobTokens"]),
    ("token-response", ["FobTokens"]),
    ("redirect-request", ["FobTokens"]),
    ("terminal-keys", ["FobTerminal"]),
    ("secitem-query", ["FobSecurity"]),
    ("otpauth-uri", ["FobTokens"]),
    ("base32", ["FobTokens"]),
    ("agent-request", ["FobAgent"]),
    ("import-csv", ["FobImport"]),
    ("import-keepassxc-xml", ["FobImport", "FobXML"]),
    ("xml-events", ["FobImport"]),
    ("import-json", ["FobImport"]),
    ("import-pass", ["FobImport"]),
    ("credential-helpers", ["FobCLI"]),
    ("field-input", ["FobStore", "FobViewModels"]),
    ("secret-service-transfer", ["FobSecretService"]),
    ("sync-tree", ["FobSync"]),
    ("secret-service-messages", ["FobSecretService"]),
    ("secret-service-index", ["FobSecretService"]),
    ("access-rule", ["FobStore"]),
    ("proc-stat", ["FobStore"]),
    ("proc-cgroup", ["FobStore"]),
    ("shell-launcher", ["FobStore"]),
    ("access-log", ["FobStore"]),
    ("ssh-agent-request", ["FobSSH"]),
    ("ssh-key-file", ["FobSSH"]),
]

let package = Package(
    name: "FobFuzz",
    dependencies: [.package(name: "Fob", path: "..")],
    targets: fuzzTargets.map { target in
        .executableTarget(
            name: target.name,
            dependencies: target.libraries.map { .product(name: $0, package: "Fob") },
            path: "Targets/\(target.name)")
    }
)
