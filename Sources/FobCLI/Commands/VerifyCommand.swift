import FobAccess
import FobAgent
import FobStore
import FoundationEssentials

/// `fob verify`: checks the vault file, every record and the whole-vault commitment.
enum VerifyCommand: FobCommand {
    static let name = "verify"
    static let summary =
        "check SQLite's integrity, every record, the whole-vault commitment and the access log; changes nothing"
    static let discussion = """
        Prints one line and exits 0 when the vault is sound. Otherwise prints one
        line per problem and exits 93: each damaged item by service and account
        when its record can be decrypted, else by row id and lookup prefix; a
        schema that is not Fob's; and a commitment that does not match the items
        (an item rolled back, removed or brought back, which no single record shows).
        A format-1 vault is checked as it is, not migrated. The access log beside
        the vault is checked too: every file's header, the chain through every
        entry and across rotated files, and the count its last writer recorded;
        a removed, changed or reordered entry, a missing or swapped file, or
        entries cut off its end are named (also exit 93).
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let url = invocation.globals.vaultURL
        guard Vault.exists(at: url) else { throw KeychainError.noSuchKeychain(url.path) }
        let password = try invocation.masterPassword(prompt: "Master password: ")
        // A backup's access log stopped where the vault's went on: the
        // head kept for the vault (by its id) is not the backup's to match.
        let backup = (try? invocation.openVault().isBackupCopy) ?? false
        // Each record decrypted is a read of its secret, recorded in the
        // vault's log (a backup, read-only, keeps no record of its own).
        let record = invocation.accessRecord()
        let report = try Vault.verify(
            at: url, password: password, accessLogHeadDirectory: backup ? nil : invocation.watermarks.directory,
            recording: backup ? nil : { key, items in record.verified(items, logKey: key, vaultURL: url) })
        guard report.isSound else {
            for problem in report.problems { invocation.standardOutput.write("damaged: \(problem)\n") }
            let count = report.problems.count
            throw KeychainError.decode("fob verify found \(count) problem\(count == 1 ? "" : "s") in \(url.path)")
        }
        var line =
            "Vault sound: \(report.itemCount) item\(report.itemCount == 1 ? "" : "s"), every record authenticated, "
        if let counter = report.writeCounter {
            line += "whole-vault commitment verified (write \(counter)), "
        } else {
            line += "format \(report.format) (no commitment until the next unlock migrates it), "
        }
        if let entries = report.accessLogEntries {
            line += "access log verified (\(entries) entr\(entries == 1 ? "y" : "ies")), "
        }
        line += "SQLite integrity ok: \(url.path)\n"
        invocation.standardOutput.write(line)
        for note in report.accessLogNotes { invocation.standardOutput.write("note: access log: \(note)\n") }
        return 0
    }
}
