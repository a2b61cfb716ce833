import FobStore
import FobSystem
import FoundationEssentials

/// Who asks, and through which channel: what an access decision is about.
public struct AccessContext: Sendable {
    /// The requester (for Fob's own programs, the program that ran them).
    public var requester: Requester
    /// How the request came.
    public var channel: AccessChannel
    /// What a git or docker helper asks for: the repository
    /// (`https://example.com/team/repo.git`) or the registry's ServerURL,
    /// read from the request's query (``target(of:channel:)``); `nil` otherwise.
    public var target: String?

    /// - Parameters: as the properties.
    public init(requester: Requester, channel: AccessChannel, target: String? = nil) {
        self.requester = requester
        self.channel = channel
        self.target = target
    }

    /// The channel as a question names it: `git for https://example.com/repo.git`.
    public var via: String { target.map { "\(channel) for \($0)" } ?? "\(channel)" }

    /// The repository or registry a helper's query names: for git, the URL
    /// made of its `protocol`, `host`, port and `path` (gitcredentials(7)),
    /// as the helper keeps them (protocol as Apple's four-character code,
    /// host as the service); for docker, the ServerURL (kept as the path).
    /// - Returns: `nil` for other channels or a query naming no server.
    public static func target(of query: ItemQuery?, channel: AccessChannel) -> String? {
        guard let query, let host = query.service, !host.isEmpty else { return nil }
        switch channel {
        case .docker:
            return query.path.flatMap { $0.isEmpty ? nil : $0 } ?? query.url ?? host
        case .git:
            let code = query.internetProtocol ?? ""
            let scheme = AccessContext.schemes[code] ?? String(code.reversed().drop { $0 == " " }.reversed())
            var url = scheme.isEmpty ? host : "\(scheme)://\(host)"
            if let port = query.port, port != 0 { url += ":\(port)" }
            if let path = query.path, !path.isEmpty { url += "/" + path }
            return url
        default:
            return nil
        }
    }

    /// Apple's `kSecAttrProtocol` codes the git helper stores, by scheme.
    static let schemes = [
        "htps": "https", "http": "http", "ftp ": "ftp", "ftps": "ftps", "ssh ": "ssh", "smtp": "smtp",
        "imap": "imap", "imps": "imaps",
    ]

    /// Whether the person at the terminal UI's keyboard asks: the peer is
    /// Fob's own executable running the terminal UI (read from `/proc`, not
    /// claimed), which is never asked.
    public var isTerminalUI: Bool { channel == .terminalUI && requester.via != nil }

    /// Whether Fob's own executable runs one of the sync commands (`sync`,
    /// `devices`, `conflicts`, `resolve`), which seal the secrets they read
    /// into the sync tree (under keys only the master password opens) or
    /// compare them, and print none: they are recorded, never asked.
    public var isSync: Bool {
        guard requester.via != nil, case .command(let name) = channel else { return false }
        return AccessContext.syncCommands.contains(name)
    }

    /// The commands of ``isSync``.
    static let syncCommands: Set<String> = ["sync", "devices", "conflicts", "resolve"]

    /// The program a lease or an "always" answer is about.
    public var program: ProgramKey { ProgramKey(path: requester.executable, identity: requester.identity) }
}

/// A program as leases and rules know it: its path and file identity.
public struct ProgramKey: Sendable, Hashable {
    /// The executable's path.
    public var path: String
    /// The file's identity (`nil` when unreadable: such a program is never trusted).
    public var identity: ExecutableIdentity?
}

/// What the rules say of one request for one item.
public enum AccessVerdict: Sendable, Equatable {
    /// Read it: why (a rule, a lease, the terminal UI).
    case allow(String)
    /// Refused without asking: why, naming the rule.
    case deny(String)
    /// A person must answer: why, naming the rule.
    case ask(String)
}

/// The decision of an item's rule for a requester, without leases or
/// asking: a pure function, so every case is testable.
public enum AccessPolicy {
    /// How the text of the agent's ``KeychainError/consentMissing(_:_:)``
    /// begins, a request that needed a person's answer and got none (a
    /// client that can open the vault itself with the master password may
    /// still do so; one that cannot reports this refusal rather than its
    /// own). Clients tell it by its case, never by this text.
    public static let consentRefusalPrefix = "consent needed for "

    /// How a consent refusal's text ends when the question was put and no
    /// one answered before its timeout (``AccessOutcome/unanswered``, the
    /// refusal's ``ConsentMiss/unanswered``): `…, and no one answered within 60 s`.
    public static let unansweredPhrase = "no one answered within "

    /// Requester × rule × the vault's default → allow, deny or ask.
    ///
    /// In order: the terminal UI is allowed; a program in the rule's deny
    /// list is refused; a forwarded request (no controlling terminal) follows
    /// ``AccessRule/forwarded`` when that is not `.same`; a trusted program
    /// (same file identity) is allowed, and so is a program of the item's
    /// access group (``groupMembers(_:)``); otherwise the rule's mode (or
    /// the vault's default) decides.
    /// - Parameters:
    ///   - context: who asks and how.
    ///   - item: the item, with its rule.
    ///   - vaultDefault: the vault's ``Vault/accessDefault()``.
    ///   - groupMembers: the programs of the item's access group (its
    ///     ``groupMembers(_:)`` entry); ignored for the empty access group.
    ///   - fileHash: the BLAKE2b-256 of the requester's running executable,
    ///     asked only when a listed program carries a hash (``TrustedProgram/hash``).
    /// - Returns: the verdict and its reason.
    public static func decide(
        _ context: AccessContext, item: Item, vaultDefault: AccessRule.Mode, groupMembers: [TrustedProgram] = [],
        fileHash: () -> [UInt8]? = { nil }
    ) -> AccessVerdict {
        if context.isTerminalUI { return .allow("the terminal UI at its keyboard") }
        if context.isSync { return .allow("\(context.channel) seals secrets into the sync tree and shows none") }
        let rule = item.accessRule
        let identity = context.requester.identity
        var hash: [UInt8]??
        func named(_ program: TrustedProgram) -> Bool {
            guard program.matches(identity) else { return false }
            guard let wanted = program.hash else { return true }
            if hash == nil { hash = .some(fileHash()) }
            return hash! == wanted
        }
        if identity != nil, rule.denied.contains(where: { $0.matches(identity) }) {
            return .deny("\(context.requester.executable) is on the deny list of \(item.displayName)")
        }
        if context.requester.terminal == nil {
            switch rule.forwarded {
            case .same: break
            case .ask: return .ask("\(item.displayName) asks for every request without a terminal")
            case .deny: return .deny("\(item.displayName) refuses every request without a terminal")
            }
        }
        if identity != nil, rule.trusted.contains(where: named) {
            return .allow("\(context.requester.executable) is trusted by \(item.displayName)")
        }
        if identity != nil, !item.accessGroup.isEmpty, groupMembers.contains(where: named) {
            return .allow("\(context.requester.executable) is of the access group \"\(item.accessGroup)\"")
        }
        let mode = rule.mode ?? vaultDefault
        let whose = rule.mode == nil ? "the vault's default rule" : "the rule of \(item.displayName)"
        switch mode {
        case .any: return .allow("\(whose) is 'any'")
        case .ask: return .ask("\(whose) is 'ask'")
        case .deny: return .deny("\(whose) is 'deny'")
        }
    }

    /// The programs of each non-empty access group among `items`: every
    /// program trusted by an item of that group, as the Keychain shares an
    /// access group's items among every program of the group. A program
    /// joins a group by creating its first item (a client's add trusts the
    /// client), or when the user trusts it with one of the group's items
    /// ("always", `fob access grant`); the empty access group (every item
    /// `fob add` makes) is no group.
    /// - Parameter items: items of any groups, with their rules.
    /// - Returns: for each non-empty group, its programs (each once).
    public static func groupMembers(_ items: [Item]) -> [String: [TrustedProgram]] {
        var members: [String: [TrustedProgram]] = [:]
        for item in items where !item.accessGroup.isEmpty {
            var list = members[item.accessGroup] ?? []
            for program in item.accessRule.trusted where !list.contains(program) { list.append(program) }
            members[item.accessGroup] = list
        }
        return members
    }

    /// ``groupMembers(_:)`` of every item of each non-empty group of `groups` in `vault`.
    static func groupMembers(of groups: Set<String>, in vault: Vault) -> [String: [TrustedProgram]] {
        var items: [Item] = []
        for group in groups where !group.isEmpty {
            items += (try? vault.items(matching: ItemQuery(itemClass: nil, accessGroup: group))) ?? []
        }
        return groupMembers(items)
    }
}
