import FobImport
import FobStore
import Foundation

/// Import figures: 10,000 entries of fob-json and of KeePassXC CSV, read,
/// planned against the vault and written in one transaction (after the KDF).
enum ImportBenchmark {
    static func run(scratch: URL) throws {
        let password = SecretBytes(utf8: "benchmark master password")
        let minimal = BenchFiles.quickKDF
        section("Import (10,000 entries, after the KDF)")
        let items = (0..<10_000).map { i in
            Item(
                service: "service-\(i % 500)", account: "user\(i)@example.com", label: "Group \(i % 7)",
                comment: "notes for \(i)", url: "https://site\(i % 500).example.com/login",
                customFields: [CustomField(name: "PIN", text: "\(i)", isHidden: true)],
                secret: SecretBytes(utf8: "password-\(i)-Zx9!"))
        }
        let json = FobJSON.write(items)
        var csv =
            "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n"
        for i in 0..<10_000 {
            csv +=
                "\"Passwords/G\(i % 7)\",\"service-\(i % 500)\",\"user\(i)@example.com\",\"pw, \"\"\(i)\"\"\","
                + "\"https://site\(i % 500).example.com\",\"line 1\nline 2\",\"\",\"0\",\"2024-05-01T12:00:00Z\",\"2024-01-01T00:00:00Z\"\n"
        }
        let csvBytes = Array(csv.utf8)
        for (name, read) in [
            ("fob-json", { () throws -> ImportRead in try FobJSON.read(json) }),
            ("keepassxc-csv", { () throws -> ImportRead in try CSVFormats.keepassxc(csvBytes) }),
        ] {
            let url = scratch.appendingPathComponent("import-\(name)/vault.db")
            let vault = try Vault.create(at: url, password: password, kdf: minimal, accessDefault: .any)
            var entries: ImportRead?
            let tRead = try time { entries = try read() }
            var plan: ImportPlan?
            let tPlan = try time {
                plan = ImportPlan(
                    entries: entries!.entries, existing: try vault.allItems(), policy: .rename, now: Date())
            }
            let tWrite = try time { try vault.applyImport(plan!.changes) }
            report("\(name): read", seconds: tRead)
            report("\(name): plan against the vault", seconds: tPlan)
            report("\(name): write in one transaction", seconds: tWrite)
            report("\(name): import in all", seconds: tRead + tPlan + tWrite, per: 10_000)
        }
    }
}
