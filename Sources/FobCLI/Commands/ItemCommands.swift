import FobAccess
import FobAgent
import FobStore
import FobSystem
import FoundationEssentials

/// Options shared by `add`, `save` and `update`.
private let itemAttributeOptions: [OptionSpec] = [
    .value("--label", "T", help: "a label (kSecAttrLabel; empty removes it)"),
    .value(
        "--kind", "K", choices: ItemKind.allCases.filter { $0 != .sshKey }.map(\.rawValue),
        help: "password (default for a new item), token, oauth or note"),
    .value("--comment", "C", help: "one-line notes (kSecAttrComment; empty removes them)"),
    .value("--url", "URL", help: "the web address (empty removes it)"),
    .value("--notes-file", "PATH", help: "notes from a UTF-8 file (an empty file removes them)"),
    .value("--field", "NAME=VALUE", repeatable: true, help: "set a visible custom field (repeatable)"),
    .value(
        "--hidden-field", "NAME", repeatable: true, help: "set a hidden field, its value read as below (repeatable)"),
    .value("--rm-field", "NAME", repeatable: true, help: "remove the custom fields called NAME (repeatable)"),
    .value(
        "--accessible", "WHEN", choices: ["when-unlocked", "after-first-unlock"],
        help: "when-unlocked (default) or after-first-unlock"),
    .flag("--raw", help: "keep every byte of standard input (no trailing newline dropped)"),
]

/// `--if-revision N`, on every command that writes one named item.
private let ifRevisionOption = OptionSpec.value(
    "--if-revision", "N",
    help: "write only while the item is still at revision N (as get --json shows); else exit 40, nothing changed")

/// `--keep-secret`, on `update`: only the attributes given change.
private let keepSecretOption = OptionSpec.flag(
    "--keep-secret", help: "change only the attributes given; read no secret")

/// `--allow-empty`, on `save` and `update`: an empty secret may replace a stored one.
private let allowEmptyOption = OptionSpec.flag(
    "--allow-empty", help: "let an empty secret replace the stored one (refused otherwise)")

/// What an existing item's secret needs, for the help of `save` and `update`.
private let replacingDiscussion = """
    When the item exists, an empty new secret (no byte or only a newline on
    standard input, as from </dev/null or echo "$UNSET", or Enter at the
    prompt) is refused with exit 2 and nothing changes, so a script cannot
    wipe a secret by accident; --allow-empty stores an empty secret on purpose.
    """

/// What `--if-revision` means, for the help of the commands that take it.
private let ifRevisionDiscussion = """
    With --if-revision N the write is made only while the item is still at
    revision N (its "revision" in 'fob get --json' and 'fob ls --json'); when
    another write came first, nothing changes and the exit status is 40
    (errSecInvalidItemRef). A missing item is exit 44.
    """

private let secretDiscussion = """
    The secret is all of standard input, with one trailing \\n (or \\r\\n) dropped
    unless --raw; on a terminal it is asked twice with a masked prompt. It is
    never taken from the command line.

    Each --hidden-field value comes first, one line of standard input each
    in the order given (a masked prompt, twice, on a terminal); the secret
    is the rest. Hidden values never come from the command line. A field
    replaces the first field of its name or is added; names user, url,
    notes and totp are kept for 'fob get --field'.
    """

extension Invocation {
    /// SERVICE and ACCOUNT, the first two positionals.
    fileprivate var key: (service: String, account: String) { (arguments.positionals[0], arguments.positionals[1]) }

    /// SERVICE and ACCOUNT of a command that may create the item, checked by
    /// the rule the terminal UI's editor shares (``ItemFieldInput/service(_:)``).
    /// - Throws: ``UsageError`` for an empty SERVICE.
    fileprivate func newItemKey() throws(UsageError) -> (service: String, account: String) {
        do { _ = try ItemFieldInput.service(key.service) } catch {
            throw UsageError(error.description, command: command)
        }
        return key
    }

    /// `service "S", account "A"`, for prompts.
    fileprivate var keyDescription: String {
        Item(service: key.service, account: key.account, secret: nil).displayName
    }

    /// The `--if-revision` value, if given.
    /// - Throws: ``UsageError`` unless it is a whole number from 0 to 2⁶⁴ − 1.
    func expectedRevision() throws(UsageError) -> UInt64? {
        guard let text = arguments.value("--if-revision") else { return nil }
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let revision = UInt64(text) else {
            throw UsageError("--if-revision wants a revision number (0 or more), not '\(text)'", command: command)
        }
        return revision
    }

    /// The `--kind` value, if given.
    fileprivate func kind() throws(UsageError) -> ItemKind? {
        guard let text = arguments.value("--kind") else { return nil }
        guard let kind = ItemKind(rawValue: text), kind != .sshKey else {
            // An ssh-key item's secret must be a key: 'fob ssh keygen' or 'fob ssh import' makes one.
            let kinds = ItemKind.allCases.filter { $0 != .sshKey }.map(\.rawValue).joined(separator: ", ")
            throw UsageError("--kind wants one of \(kinds), not '\(text)'", command: command)
        }
        return kind
    }

    /// `--label T` (an empty T removes the label), or `nil` when not given.
    fileprivate var labelChange: String?? {
        arguments.value("--label").map { $0.isEmpty ? nil : $0 }
    }

    /// `--comment C` or `--notes-file PATH` (empty removes the notes), or `nil` when neither is given.
    /// - Throws: ``UsageError`` for both at once, a file that cannot be read, or notes that are not text.
    fileprivate func notesChange() throws(UsageError) -> String?? {
        let comment = arguments.value("--comment")
        guard let path = arguments.value("--notes-file") else { return comment.map { $0.isEmpty ? nil : $0 } }
        guard comment == nil else {
            throw UsageError("--comment and --notes-file cannot be used together", command: command)
        }
        guard path != "-" else {
            throw UsageError("--notes-file wants a file; standard input holds the secret", command: command)
        }
        guard let bytes = FileDescriptorIO.readFile(atPath: path, limit: Item.maxNotesBytes + 3) else {
            throw UsageError("cannot read the notes file '\(path)'", command: command)
        }
        do { return .some(try ItemFieldInput.notes(Array(bytes))) } catch {
            throw UsageError(error.description, command: command)
        }
    }

    /// The `--accessible` value, if given.
    /// - Throws: ``UsageError`` for anything but `when-unlocked` and `after-first-unlock`.
    fileprivate func accessible() throws(UsageError) -> Accessibility? {
        guard let text = arguments.value("--accessible") else { return nil }
        switch text {
        case "when-unlocked": return .whenUnlocked
        case "after-first-unlock": return .afterFirstUnlock
        default:
            throw UsageError("--accessible wants when-unlocked or after-first-unlock, not '\(text)'", command: command)
        }
    }

    /// `--url URL` (empty removes it), or `nil` when not given.
    fileprivate var urlChange: String?? {
        arguments.value("--url").map { $0.isEmpty ? nil : $0 }
    }

    /// Whether any option that changes custom fields was given.
    /// How much of a stored item `save` and `update` read: the custom
    /// fields' values when field options change them (to merge), else only
    /// the listing, which reads no secret and so is never asked about.
    fileprivate var storedDetail: ItemDetail { changesFields ? .attributes : .listing }

    fileprivate var changesFields: Bool {
        !(arguments.allValues("--field").isEmpty && arguments.allValues("--hidden-field").isEmpty
            && arguments.allValues("--rm-field").isEmpty)
    }

    /// The visible fields of `--field` and the names of `--hidden-field`,
    /// checked before anything is read or asked.
    /// - Throws: ``UsageError`` naming the bad field.
    fileprivate func fieldArguments() throws(UsageError) -> (visible: [CustomField], hiddenNames: [String]) {
        do {
            var visible: [CustomField] = []
            for argument in arguments.allValues("--field") { visible.append(try ItemFieldInput.visibleField(argument)) }
            var hidden: [String] = []
            for name in arguments.allValues("--hidden-field") { hidden.append(try ItemFieldInput.name(name)) }
            for name in arguments.allValues("--rm-field") { _ = try ItemFieldInput.name(name) }
            return (visible, hidden)
        } catch {
            throw UsageError(error.description, command: command)
        }
    }

    /// Reads each hidden field's value (before the secret), in order.
    fileprivate func hiddenFields(_ names: [String]) throws -> [CustomField] {
        try names.map { name in
            let value = try readSecretLine(
                prompt: "Value of hidden field \"\(displaySafe(name))\": ",
                maxBytes: Item.maxFieldValueBytes, what: "the value of field '\(displaySafe(name))'")
            do throws(FieldInputError) {
                return CustomField(name: name, value: try ItemFieldInput.value(value, name: name), isHidden: true)
            } catch {
                throw UsageError(error.description, command: command)
            }
        }
    }

    /// The item's custom fields after this command's field options, or `nil` when none was given.
    fileprivate func fields(existing: [CustomField], visible: [CustomField], hidden: [CustomField]) -> [CustomField]? {
        guard changesFields else { return nil }
        return ItemFieldInput.merged(existing, setting: visible + hidden, removing: arguments.allValues("--rm-field"))
    }
}

/// The attribute options of `add`, `save` and `update`, checked before the
/// vault is touched; the values of hidden fields and the secret are read
/// later (``readValues(_:)``), once the item is known to have somewhere to go.
private struct AttributeOptions {
    let invocation: Invocation
    let kind: ItemKind?
    let accessible: Accessibility?
    let notes: String??
    let visible: [CustomField]
    let hiddenNames: [String]

    init(_ invocation: Invocation) throws(UsageError) {
        self.invocation = invocation
        kind = try invocation.kind()
        accessible = try invocation.accessible()
        notes = try invocation.notesChange()
        (visible, hiddenNames) = try invocation.fieldArguments()
    }

    /// Asks for each hidden field's value, then for the secret.
    /// - Parameter replacing: the secret replaces a stored one, so an empty
    ///   standard input is refused (``Invocation/readItemSecret(raw:what:replacing:)``).
    func readValues(replacing: Bool = false) throws -> (hidden: [CustomField], secret: SecretBytes) {
        let hidden = try invocation.hiddenFields(hiddenNames)
        let secret = try invocation.readItemSecret(
            raw: invocation.arguments.flag("--raw"), what: invocation.keyDescription, replacing: replacing)
        return (hidden, secret)
    }

    /// Asks for each hidden field's value only (`update --keep-secret`).
    func readHiddenValues() throws -> [CustomField] {
        try invocation.hiddenFields(hiddenNames)
    }

    /// The changes these options make to an item whose custom fields are
    /// `existingFields`, at the revision `--if-revision` names.
    func changes(existingFields: [CustomField], hidden: [CustomField], expected: UInt64?) -> ItemChanges {
        var changes = ItemChanges(
            label: invocation.labelChange, comment: notes, kind: kind, accessible: accessible,
            url: invocation.urlChange,
            customFields: invocation.fields(existing: existingFields, visible: visible, hidden: hidden))
        changes.expectedRevision = expected
        return changes
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
        let options = try AttributeOptions(invocation)
        let (service, account) = try invocation.newItemKey()
        let items = invocation.items()
        defer { items.close() }
        try items.prepare()
        if invocation.context.standardInputIsTerminal {
            // Do not ask for a secret that cannot be stored.
            do {
                _ = try items.item(ItemKey(service: service, account: account), detail: .listing)
                throw KeychainError.duplicateItem(invocation.keyDescription)
            } catch KeychainError.itemNotFound {}
        }
        let (hidden, secret) = try options.readValues()
        let changes = options.changes(existingFields: [], hidden: hidden, expected: nil)
        try items.add(
            Item(
                service: service, account: account, label: changes.label ?? nil, comment: changes.comment ?? nil,
                kind: changes.kind ?? .password, accessible: changes.accessible ?? .whenUnlocked,
                url: changes.url ?? nil, customFields: changes.customFields ?? [], secret: secret))
        return 0
    }
}

/// `fob save SERVICE ACCOUNT`: adds the item, or replaces its secret (and
/// the attributes given) when it exists; never reports a duplicate.
enum SaveCommand: FobCommand {
    static let name = "save"
    static let summary = "add an item, or update it if it exists (attributes not given are kept)"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options = itemAttributeOptions + [allowEmptyOption, ifRevisionOption]
    static let discussion = [
        secretDiscussion,
        """
        On an existing item only the secret and the attributes given change; a
        new item gets kind password unless --kind says otherwise.
        """,
        replacingDiscussion,
        ifRevisionDiscussion + " --if-revision 0 saves only a new item (exit 40 if it exists).",
    ].joined(separator: "\n\n")

    static func run(_ invocation: Invocation) throws -> Int32 {
        let options = try AttributeOptions(invocation)
        let expected = try invocation.expectedRevision()
        let (service, account) = try invocation.newItemKey()
        let items = invocation.items()
        defer { items.close() }
        try items.prepare()
        // Only the fields' values are needed (to merge them), never the secret.
        let stored = try items.itemIfPresent(
            ItemKey(service: service, account: account), detail: invocation.storedDetail)
        let (hidden, secret) = try options.readValues(replacing: stored != nil)
        let existing = invocation.changesFields ? stored?.customFields ?? [] : []
        let changes = options.changes(existingFields: existing, hidden: hidden, expected: expected)
        _ = try items.save(service: service, account: account, secret: secret, attributes: changes)
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
        .value("--field", "F", help: "print one field: user, url, notes, totp (the code) or a custom field"),
    ]
    static let discussion = """
        With --field a missing field is exit 44 (errSecItemNotFound).
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let raw = invocation.arguments.flag("--raw")
        let json = invocation.arguments.flag("--json")
        let field = invocation.arguments.value("--field")
        if raw && json { throw UsageError("--raw and --json cannot be used together", command: name) }
        if field != nil && json { throw UsageError("--field and --json cannot be used together", command: name) }
        let (service, account) = invocation.key
        let items = invocation.items()
        let item = try items.item(service: service, account: account)
        items.close()
        let out = invocation.standardOutput
        if let field {
            var value = try ItemFieldOutput.value(of: field, in: item, now: invocation.now)
            if !raw { value.append(0x0A) }
            out.write(value)
            value.wipe()
        } else if json {
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
    static let summary = "replace an item's secret (and attributes given); exit 44 if missing"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options = itemAttributeOptions + [keepSecretOption, allowEmptyOption, ifRevisionOption]
    static let discussion = [secretDiscussion, replacingDiscussion, ifRevisionDiscussion].joined(separator: "\n\n")

    static func run(_ invocation: Invocation) throws -> Int32 {
        let options = try AttributeOptions(invocation)
        let expected = try invocation.expectedRevision()
        let (service, account) = invocation.key
        let items = invocation.items()
        defer { items.close() }
        // Fail before reading a secret that has nowhere to go (the write checks the revision again).
        let existing = try items.item(ItemKey(service: service, account: account), detail: invocation.storedDetail)
        if let expected, expected != existing.revision {
            throw KeychainError.revisionMismatch(existing.displayName, expected: expected, current: existing.revision)
        }
        var changes: ItemChanges
        if invocation.arguments.flag("--keep-secret") {
            let hidden = try options.readHiddenValues()
            changes = options.changes(existingFields: existing.customFields, hidden: hidden, expected: expected)
        } else {
            let (hidden, secret) = try options.readValues(replacing: true)
            changes = options.changes(existingFields: existing.customFields, hidden: hidden, expected: expected)
            changes.secret = secret
        }
        try items.update(matching: .key(service: service, account: account), with: changes)
        return 0
    }
}

/// `fob rm SERVICE ACCOUNT`: deletes an item; exit 44 when missing.
enum RemoveCommand: FobCommand {
    static let name = "rm"
    static let summary = "delete an item; exit 44 if missing"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let options: [OptionSpec] = [ifRevisionOption]
    static let discussion = ifRevisionDiscussion

    static func run(_ invocation: Invocation) throws -> Int32 {
        let expected = try invocation.expectedRevision()
        let (service, account) = invocation.key
        let items = invocation.items()
        defer { items.close() }
        if let expected {
            var query = ItemQuery.key(service: service, account: account)
            query.expectedRevision = expected
            try items.delete(matching: query)
        } else {
            try items.delete(matching: .key(service: service, account: account))
        }
        return 0
    }
}

/// `fob mv SERVICE ACCOUNT NEW-SERVICE [NEW-ACCOUNT]`: renames an item in one
/// transaction, as `pass mv` does.
enum MoveCommand: FobCommand {
    static let name = "mv"
    static let summary = "rename an item (a new service, and account); exit 45 onto an existing item, 44 if missing"
    static let positionals = ["SERVICE", "ACCOUNT", "NEW-SERVICE", "NEW-ACCOUNT"]
    static let optionalPositionals = 1
    static let options: [OptionSpec] = [ifRevisionOption]
    static let discussion =
        """
        Without NEW-ACCOUNT the account stays. Everything else is kept: the
        secret, every attribute and field, the creation date and the persistent
        ID; the revision grows by one. One transaction, through the agent or not.
        """ + "\n\n" + ifRevisionDiscussion

    static func run(_ invocation: Invocation) throws -> Int32 {
        let expected = try invocation.expectedRevision()
        let (service, account) = invocation.key
        let positionals = invocation.arguments.positionals
        let newService: String
        do { newService = try ItemFieldInput.service(positionals[2]) } catch {
            throw UsageError(error.description, command: name)
        }
        let newAccount = positionals.count > 3 ? positionals[3] : account
        guard newService != service || newAccount != account else {
            throw UsageError("the new name is the item's own", command: name)
        }
        var changes = ItemChanges(service: newService, account: newAccount)
        changes.expectedRevision = expected
        let items = invocation.items()
        defer { items.close() }
        try items.update(matching: .key(service: service, account: account), with: changes)
        return 0
    }
}
