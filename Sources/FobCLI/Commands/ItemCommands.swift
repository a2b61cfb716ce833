import FobAgent
import FobStore

/// Options shared by `add` and `save`.
private let itemAttributeOptions: [OptionSpec] = [
    .value("--label", "T", help: "a label (kSecAttrLabel)"),
    .value("--kind", "K", help: "password (default for a new item), token, oauth or note"),
    .value("--comment", "C", help: "a comment (kSecAttrComment)"),
    accessibleOption,
    .flag("--raw", help: "keep every byte of standard input (no trailing newline dropped)"),
]

/// `--accessible`, on add, save and update.
private let accessibleOption = OptionSpec.value("--accessible", "CLASS",
                                                help: "when-unlocked (default) or after-first-unlock")

private let secretDiscussion = """
    The secret is all of standard input, with one trailing \\n (or \\r\\n) dropped
    unless --raw; on a terminal it is asked twice with a masked prompt. It is
    never taken from the command line.
    """

extension Invocation {
    /// SERVICE and ACCOUNT, the first two positionals.
    fileprivate var key: (service: String, account: String) { (arguments.positionals[0], arguments.positionals[1]) }

    /// `service "S", account "A"`, for prompts.
    fileprivate var keyDescription: String {
        Item(service: key.service, account: key.account, secret: nil).displayName
    }

    /// The `--kind` value, if given.
    fileprivate func kind() throws(UsageError) -> ItemKind? {
        guard let text = arguments.value("--kind") else { return nil }
        guard let kind = ItemKind(rawValue: text) else {
            let kinds = ItemKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("--kind wants one of \(kinds), not '\(text)'", command: command)
        }
        return kind
    }

    /// The `--accessible` class, if given.
    fileprivate func accessible() throws(UsageError) -> Accessibility? {
        switch arguments.value("--accessible") {
        case nil: return nil
        case "when-unlocked": return .whenUnlocked
        case "after-first-unlock": return .afterFirstUnlock
        case let text?: throw UsageError("--accessible wants when-unlocked or after-first-unlock, not '\(text)'", command: command)
        }
    }

    /// `--label T` (an empty T removes the label), or `nil` when not given.
    fileprivate var labelChange: String?? {
        arguments.value("--label").map { $0.isEmpty ? nil : $0 }
    }

    /// `--comment C` (an empty C removes the comment), or `nil` when not given.
    fileprivate var commentChange: String?? {
        arguments.value("--comment").map { $0.isEmpty ? nil : $0 }
    }
}

/// `fob add SERVICE ACCOUNT`: adds an item; exit 45 when it exists.
enum AddCommand: FobCommand {
    static let name = "add"
    static let summary = "add an item, the secret from standard input; exit 45 if it exists"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options = itemAttributeOptions
    static let discussion = secretDiscussion

    static func run(_ invocation: Invocation) throws -> Int32 {
        let kind = try invocation.kind() ?? .password
        let accessible = try invocation.accessible() ?? .whenUnlocked
        let (service, account) = invocation.key
        let items = invocation.items()
        defer { items.close() }
        try items.prepare()
        if invocation.context.standardInputIsTerminal {
            // Do not ask for a secret that cannot be stored.
            do {
                _ = try items.item(service: service, account: account)
                throw KeychainError.duplicateItem(invocation.keyDescription)
            } catch KeychainError.itemNotFound {}
        }
        let secret = try invocation.readItemSecret(raw: invocation.arguments.flag("--raw"), what: invocation.keyDescription)
        let label = invocation.labelChange ?? nil
        let comment = invocation.commentChange ?? nil
        var item = Item(service: service, account: account, label: label, comment: comment, kind: kind, secret: secret)
        item.accessible = accessible
        _ = try items.perform(.add(item))
        return 0
    }
}

/// `fob save SERVICE ACCOUNT`: adds the item, or replaces its secret (and
/// the attributes given) when it exists; never reports a duplicate.
enum SaveCommand: FobCommand {
    static let name = "save"
    static let summary = "add an item, or update it if it exists (attributes not given are kept)"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options = itemAttributeOptions
    static let discussion = secretDiscussion + """

        On an existing item only the secret and the attributes given change; a
        new item gets kind password unless --kind says otherwise.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let kind = try invocation.kind()
        let accessible = try invocation.accessible()
        let (service, account) = invocation.key
        let items = invocation.items()
        defer { items.close() }
        try items.prepare()
        let secret = try invocation.readItemSecret(raw: invocation.arguments.flag("--raw"), what: invocation.keyDescription)
        var changes = ItemChanges(label: invocation.labelChange, comment: invocation.commentChange, kind: kind)
        changes.accessible = accessible
        _ = try items.perform(.save(service: service, account: account, secret: secret, changes: changes))
        return 0
    }
}

/// `fob get SERVICE ACCOUNT`: prints the secret.
enum GetCommand: FobCommand {
    static let name = "get"
    static let summary = "print the secret and a newline (--raw: the exact bytes; --json: the item as JSON)"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options: [OptionSpec] = [
        .flag("--raw", help: "print exactly the stored bytes, without a newline"),
        .flag("--json", help: "print one JSON object: the attributes and secret (or secretBase64)"),
    ]

    static func run(_ invocation: Invocation) throws -> Int32 {
        let raw = invocation.arguments.flag("--raw")
        let json = invocation.arguments.flag("--json")
        if raw && json { throw UsageError("--raw and --json cannot be used together", command: name) }
        let (service, account) = invocation.key
        let items = invocation.items()
        let item = try items.item(service: service, account: account)
        items.close()
        let out = invocation.standardOutput
        if json {
            var bytes = ItemJSON.object(item, includeSecret: true)
            bytes.append(0x0A)
            out.write(bytes)
            bytes.wipe()
        } else if let secret = item.secret {
            out.write(secret)
            if !raw { out.write([0x0A]) }
        }
        return 0
    }
}

/// `fob update SERVICE ACCOUNT`: replaces the secret; exit 44 when missing.
enum UpdateCommand: FobCommand {
    static let name = "update"
    static let summary = "replace an item's secret from standard input; exit 44 if missing"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options: [OptionSpec] = [
        .value("--label", "T", help: "also set the label (an empty T removes it)"),
        accessibleOption,
        .flag("--raw", help: "keep every byte of standard input (no trailing newline dropped)"),
    ]
    static let discussion = secretDiscussion

    static func run(_ invocation: Invocation) throws -> Int32 {
        let (service, account) = invocation.key
        let accessible = try invocation.accessible()
        let items = invocation.items()
        defer { items.close() }
        // Fail before reading a secret that has nowhere to go.
        _ = try items.item(service: service, account: account)
        let secret = try invocation.readItemSecret(raw: invocation.arguments.flag("--raw"), what: invocation.keyDescription)
        var changes = ItemChanges(label: invocation.labelChange)
        changes.accessible = accessible
        _ = try items.perform(.update(service: service, account: account, secret: secret, changes: changes))
        return 0
    }
}

/// `fob rm SERVICE ACCOUNT`: deletes an item; exit 44 when missing.
enum RemoveCommand: FobCommand {
    static let name = "rm"
    static let summary = "delete an item; exit 44 if missing"
    static let positionals = ["SERVICE", "ACCOUNT"]

    static func run(_ invocation: Invocation) throws -> Int32 {
        let (service, account) = invocation.key
        let items = invocation.items()
        defer { items.close() }
        _ = try items.perform(.delete(service: service, account: account))
        return 0
    }
}
