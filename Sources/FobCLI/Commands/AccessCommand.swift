import FobAccess
import FobAgent
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// `fob access show|set|grant|revoke|default`: items' access rules and the
/// vault's default, in the Keychain's terms (trusted applications).
enum AccessCommand: FobCommand {
    static let name = "access"
    static let summary = "show or change who may read an item without being asked"
    static let positionals = ["show|set|grant|revoke|default", "SERVICE", "ACCOUNT", "RULE"]
    static let optionalPositionals = 3
    static let options: [OptionSpec] = [
        .value("--program", "PATH", help: "grant, revoke: the program (its executable file)")
    ]
    static let usageLines = [
        "fob access show [SERVICE ACCOUNT]",
        "fob access set SERVICE ACCOUNT any|ask|deny",
        "fob access grant SERVICE ACCOUNT --program PATH",
        "fob access revoke SERVICE ACCOUNT --program PATH",
        "fob access default any|ask",
    ]
    static let discussion = """
        Each item has an access rule; the vault has a default. 'any' lets every
        program of yours read the item, 'ask' asks you (on the requesting
        program's terminal) before a program reads it, 'deny' refuses every
        program not granted. 'grant' trusts one program for the item (the
        Keychain's trusted applications): it reads without asking while its
        file stays the same (device, inode, size, modification time); a program
        replaced on disk is asked again. 'revoke' removes it. 'set' changes the
        item's mode; changing a rule needs the same consent as reading the
        item. 'default' sets the vault's default (a new vault's is 'ask'; a
        vault made before access rules keeps 'any'); it asks the master
        password. 'show' names the vault's default rule and where it comes
        from, then prints each item's rule (or one item's) in columns: an
        item that follows the default shows 'default (ask)', and each program
        trusted or denied is on a line of its own under its item.
        Asked requests with no terminal, or no answer within 60 s, fail with
        exit 36 (errSecInteractionNotAllowed); a refusal is exit 51
        (errSecAuthFailed); nothing is printed on standard output.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let p = invocation.arguments.positionals
        switch (p.first, p.count) {
        case ("show", 1), ("show", 3): return try show(invocation, key: p.count == 3 ? (p[1], p[2]) : nil)
        case ("set", 4):
            guard let mode = AccessRule.Mode(name: p[3]) else {
                throw UsageError("'fob access set' takes any, ask or deny, not '\(p[3])'", command: name)
            }
            return try change(invocation, service: p[1], account: p[2]) { $0.mode = mode }
        case ("grant", 3), ("revoke", 3):
            guard let path = invocation.arguments.value("--program") else {
                throw UsageError("'fob access \(p[0])' needs --program PATH", command: name)
            }
            let program = try trustedProgram(path)
            return try change(invocation, service: p[1], account: p[2]) { rule in
                rule.trusted.removeAll { $0.path == program.path }
                rule.denied.removeAll { $0.path == program.path }
                if p[0] == "grant" { rule.trusted.append(program) }
            }
        case ("default", 2):
            guard let mode = AccessRule.Mode(name: p[1]), mode != .deny else {
                throw UsageError("'fob access default' takes any or ask, not '\(p[1])'", command: name)
            }
            return try setDefault(invocation, mode)
        default:
            throw UsageError(
                "'fob access' takes show, set, grant, revoke or default, not '\(p.joined(separator: " "))'",
                command: name)
        }
    }

    /// The program at `path` (symbolic links resolved, as `/proc/PID/exe` shows it).
    static func trustedProgram(_ path: String) throws -> TrustedProgram {
        guard let resolved = realpath(path, nil) else {
            throw KeychainError.param("no program at \(path): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        let real = String(cString: resolved)
        guard let identity = ProcessInspector.identity(ofFile: real), access(real, X_OK) == 0 else {
            throw KeychainError.param("\(real) is not an executable file")
        }
        return TrustedProgram(path: real, identity: identity)
    }

    static func change(_ invocation: Invocation, service: String, account: String, _ edit: (inout AccessRule) -> Void)
        throws -> Int32
    {
        let items = invocation.items()
        defer { items.close() }
        let query = ItemQuery.key(service: service, account: account)
        guard let item = try items.items(matching: query, limit: .one, detail: .listing).first else {
            throw KeychainError.itemNotFound(describeKeyForCLI(service, account))
        }
        var changes = ItemChanges()
        var rule = item.accessRule
        edit(&rule)
        changes.accessRule = rule
        try items.update(matching: query, with: changes)
        return 0
    }

    /// Prints the vault's default rule (and where it comes from), then a
    /// table of each item's rule: service, account, rule (`default (ask)`
    /// for an item that follows the vault's) and what a request with no
    /// terminal meets when that differs; each trusted and denied program on
    /// a line of its own under its item.
    static func show(_ invocation: Invocation, key: (String, String)?) throws -> Int32 {
        let items = invocation.items()
        defer { items.close() }
        let found: [Item]
        if let key {
            found = try items.items(matching: .key(service: key.0, account: key.1), limit: .one, detail: .listing)
        } else {
            found = try items.list()
        }
        let vaultDefault = try items.accessDefault()
        let stored = try items.local.opened().storesAccessDefault()
        var out = defaultLine(vaultDefault, stored: stored)
        if !found.isEmpty {
            out += table(found, vaultDefault: vaultDefault, term: invocation.context.environment["TERM"])
        }
        return invocation.succeed(printing: out)
    }

    /// The line that names the vault's default rule, which every item whose
    /// rule has no mode of its own follows, and where it comes from.
    /// - Parameters:
    ///   - mode: the vault's default.
    ///   - stored: whether the vault file stores it (`false`: a vault made
    ///     before access rules, which reads `any` until one is chosen).
    static func defaultLine(_ mode: AccessRule.Mode, stored: Bool) -> String {
        let source =
            stored
            ? "stored in the vault; 'fob access default any|ask' changes it"
            : "the vault predates access rules; 'fob access default ask' makes Fob ask"
        return "Default rule: \(mode.name) (\(source))\n"
    }

    /// The items' rules as columns padded with spaces, each program trusted
    /// or denied on an indented line under its item.
    static func table(_ found: [Item], vaultDefault: AccessRule.Mode, term: String?) -> String {
        var rows = [["SERVICE", "ACCOUNT", "RULE"]]
        for item in found {
            let rule = item.accessRule
            var row = [
                displaySafe(item.service), displaySafe(item.account),
                rule.mode?.name ?? "default (\(vaultDefault.name))",
            ]
            if rule.forwarded != .same { row.append("no terminal: \(rule.forwarded == .ask ? "ask" : "deny")") }
            rows.append(row)
        }
        let rendered = TextTable(rows: rows, maximumCells: nil).render(
            width: nil, ellipsis: TextTable.ellipsis(term: term))
        let lines = String(decoding: rendered, as: UTF8.self).split(separator: "\n")
        var out = String(lines[0]) + "\n"
        for (item, line) in zip(found, lines.dropFirst()) {
            out += line + "\n"
            for program in item.accessRule.trusted { out += "  trusted \(displaySafe(program.path))\n" }
            for program in item.accessRule.denied { out += "  denied \(displaySafe(program.path))\n" }
        }
        return out
    }

    /// The vault's default is changed by a command given the master
    /// password, which opens the vault itself.
    static func setDefault(_ invocation: Invocation, _ mode: AccessRule.Mode) throws -> Int32 {
        let url = invocation.globals.vaultURL
        guard Vault.exists(at: url) else { throw KeychainError.noSuchKeychain(url.path) }
        let vault = try Vault(url: url)
        let password = try invocation.masterPassword(prompt: "Master password: ")
        try vault.unlock(password: password)
        defer { vault.lock() }
        let record = invocation.accessRecord()
        record.unlocked(vault)
        try vault.setAccessDefault(mode)
        record.vaultChanged("the vault's default rule is now '\(mode.name)'", vault)
        invocation.standardError.write("The vault's access default is now '\(mode.name)'.\n")
        return 0
    }
}

private func describeKeyForCLI(_ service: String, _ account: String) -> String {
    "service \"\(displaySafe(service))\", account \"\(displaySafe(account))\""
}
