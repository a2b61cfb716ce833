import FobSessions
import FobStore
import FobTokens
import FoundationEssentials

/// The texts of the editor's plain fields, as typed or as they were shown
/// when an item was opened.
public struct EditorTexts: Sendable, Equatable {
    /// Service.
    public var service: String
    /// User ID (the account); empty is a value.
    public var userID: String
    /// Label.
    public var label: String
    /// URL.
    public var url: String
    /// Notes (several lines).
    public var notes: String

    /// Every field empty: what a typed (not opened) item is compared with,
    /// so that only filled-in fields count as changes.
    public static let empty = EditorTexts(service: "", userID: "", label: "", url: "", notes: "")

    /// The texts.
    public init(service: String, userID: String, label: String, url: String, notes: String) {
        self.service = service
        self.userID = userID
        self.label = label
        self.url = url
        self.notes = notes
    }
}

/// What the editor opened: the stored item as read when it was opened
/// (with its secret, wiped with the form) and the texts its fields showed
/// then, which may differ from the stored values (a field cannot show a
/// line break or an escape character).
public struct EditorBaseline: Sendable, Equatable {
    /// The item as read when opened.
    public var item: Item
    /// The fields' texts right after opening.
    public var shown: EditorTexts
    /// The item's name when it was opened, when another process renamed it
    /// since (the editor follows it; Save names the rename).
    public var renamedFrom: ItemKey?

    /// The opened item's key.
    public var key: ItemKey { ItemKey(item) }
}

/// What the user typed in the editor, read at Save.
public struct EditorInput: Sendable {
    /// The plain fields.
    public var texts: EditorTexts
    /// The Kind choice.
    public var kind: ItemKind
    /// The Password field.
    public var password: SecretBytes
    /// Whether the Password field was edited (typed, cleared, generated).
    public var passwordEdited: Bool
    /// The One-time seed field.
    public var seed: SecretBytes
    /// Whether the One-time seed field was edited.
    public var seedEdited: Bool
    /// The Field name field; empty when no custom field changes.
    public var fieldName: String
    /// The Field value field; empty removes the named field.
    public var fieldValue: SecretBytes
    /// The Field hidden choice.
    public var fieldHidden: Bool
    /// The Access rows' rule.
    public var accessRule = AccessRule()
}

/// Why the editor refuses to save: a message and the field to fix.
public struct EditorRefusal: Error, Sendable, Equatable {
    /// What is wrong, with the words the CLI uses for the same rule.
    public var message: String
    /// The field that has to change.
    public var focus: MainFocus
}

/// The pure editor: the form (and the item it opened, and the item as
/// stored now) in, the changes to write or a refusal out. Nothing here
/// touches the store.
public enum Editor {
    /// What a Save comes to.
    public enum Outcome: Sendable {
        /// Add a new item with this secret and these attributes.
        case add(key: ItemKey, secret: SecretBytes, changes: ItemChanges)
        /// Change the stored item `key`; `renamed` when Service or User ID changed.
        case update(key: ItemKey, changes: ItemChanges, renamed: Bool)
        /// Nothing was changed: nothing to write.
        case unchanged(ItemKey)
        /// The form cannot be saved.
        case refused(EditorRefusal)
        /// Saving would store an empty secret: ask first.
        case confirmEmptySecret(ItemKey)
        /// The opened item changed elsewhere since it was opened: these
        /// fields (named for people) differ; ask before writing.
        case changedElsewhere([String])
        /// The opened item was deleted elsewhere.
        case deletedElsewhere(ItemKey)
    }

    /// Decides what Save writes.
    /// - Parameters:
    ///   - input: what the form holds.
    ///   - opened: what the editor opened, or `nil` for a typed item.
    ///   - current: the item as stored now: the opened item re-read, or the
    ///     item at the typed Service and User ID; `nil` when there is none.
    ///   - allowEmptySecret: the user confirmed storing an empty secret.
    ///   - overwriteChanges: the user confirmed writing over changes made elsewhere.
    public static func save(
        _ input: EditorInput, opened: EditorBaseline?, current: Item?,
        allowEmptySecret: Bool = false, overwriteChanges: Bool = false
    ) -> Outcome {
        if let refusal = check(input, storedSecret: current?.secret) { return .refused(refusal) }
        let typedKey = ItemKey(service: input.texts.service, account: input.texts.userID)
        if let opened {
            guard let current else { return .deletedElsewhere(opened.key) }
            let changed = changedElsewhere(opened: opened.item, current: current)
            if !changed.isEmpty && !overwriteChanges { return .changedElsewhere(changed) }
        }
        let shown = opened?.shown ?? .empty
        var changes = attributeChanges(input, shown: shown, openedKind: opened?.item.kind)
        switch seedChange(input, hadSeed: current?.oneTimePassword != nil, opened: opened != nil) {
        case .failure(let refusal): return .refused(refusal)
        case .success(let seed): if let seed { changes.oneTimePassword = seed }
        }
        // The rule is written when it differs from the one the editor showed
        // (for a typed item: the default rule, so only a rule chosen counts).
        if input.accessRule != (opened?.item.accessRule ?? AccessRule()) { changes.accessRule = input.accessRule }
        if let fields = fieldChanges(input, existing: current?.customFields ?? []) {
            guard fields.count <= Item.maxCustomFields else {
                return .refused(
                    EditorRefusal(
                        message: "An item holds at most \(Item.maxCustomFields) fields; nothing saved",
                        focus: .fieldName))
            }
            changes.customFields = fields
        }
        guard let current else {
            if input.password.count == 0 && !allowEmptySecret { return .confirmEmptySecret(typedKey) }
            // Added only if no item appeared at this key since it was looked up.
            changes.expectedRevision = 0
            return .add(key: typedKey, secret: input.password, changes: changes)
        }
        let key = ItemKey(current)
        // Empty Password keeps the stored secret, for a typed item as for an
        // opened one; emptying an opened item's Password on purpose asks.
        if input.password.count > 0 {
            changes.secret = input.password
        } else if opened != nil && input.passwordEdited && (current.secret?.count ?? 0) > 0 {
            guard allowEmptySecret else { return .confirmEmptySecret(key) }
            changes.secret = input.password
        }
        var renamed = false
        if opened != nil && (input.texts.service != shown.service || input.texts.userID != shown.userID) {
            changes.service = input.texts.service
            changes.account = input.texts.userID
            renamed = true
        }
        guard !changes.changesNothing else { return .unchanged(key) }
        // A conditional write: refused if another writer comes between the
        // read of `current` and the write.
        if current.revision > 0 { changes.expectedRevision = current.revision }
        return .update(key: key, changes: changes, renamed: renamed)
    }

    /// The rules shared with the CLI (``ItemFieldInput``): a non-empty
    /// Service, a custom field name the CLI would take, and kind `oauth`
    /// only for a secret the oauth commands can read.
    /// - Parameter storedSecret: the stored secret that an empty Password keeps.
    /// - Returns: the first refusal, or `nil` when the form may be saved.
    public static func check(_ input: EditorInput, storedSecret: SecretBytes?) -> EditorRefusal? {
        do { _ = try ItemFieldInput.service(input.texts.service) } catch {
            return EditorRefusal(message: "Service: \(error.description); nothing saved", focus: .service)
        }
        if !input.fieldName.isEmpty {
            do {
                let name = try ItemFieldInput.name(input.fieldName)
                if input.fieldValue.count > 0 { _ = try ItemFieldInput.value(input.fieldValue, name: name) }
            } catch {
                return EditorRefusal(message: "Field name: \(error.description); nothing saved", focus: .fieldName)
            }
        }
        if input.kind == .oauth {
            var bytes = (input.password.count > 0 ? input.password : (storedSecret ?? SecretBytes([UInt8]())))
                .unsafeArray
            defer { bytes.wipe() }
            do { _ = try OAuthTokenSet.decode(bytes) } catch {
                return EditorRefusal(
                    message: "Kind oauth: the secret is not a token set the oauth commands can use (\(error)); "
                        + "use fob oauth login, or another kind; nothing saved",
                    focus: .kind)
            }
        }
        return nil
    }

    /// Label, URL, Notes and Kind: each only when it differs from what the
    /// field showed (for a typed item: when filled in).
    static func attributeChanges(_ input: EditorInput, shown: EditorTexts, openedKind: ItemKind?) -> ItemChanges {
        var changes = ItemChanges()
        func change(_ text: String, _ before: String) -> String?? {
            text == before ? nil : .some(text.isEmpty ? nil : text)
        }
        changes.label = change(input.texts.label, shown.label)
        changes.url = change(input.texts.url, shown.url)
        changes.comment = change(input.texts.notes, shown.notes)
        if let openedKind {
            if input.kind != openedKind { changes.kind = input.kind }
        } else if input.kind != .password {
            changes.kind = input.kind
        }
        return changes
    }

    /// The One-time seed change: `nil` for none, `.some(nil)` to remove it.
    static func seedChange(_ input: EditorInput, hadSeed: Bool, opened: Bool) -> Result<SecretBytes??, EditorRefusal> {
        guard input.seedEdited || (!opened && input.seed.count > 0) else { return .success(nil) }
        guard input.seed.count > 0 else { return .success(hadSeed ? .some(nil) : nil) }
        guard EditorSession.generator(from: input.seed)?.period != nil else {
            return .failure(
                EditorRefusal(
                    message: "One-time seed: not an otpauth://totp/ URI or base32 secret; nothing saved",
                    focus: .oneTimeSeed))
        }
        return .success(.some(input.seed))
    }

    /// The custom fields after the Field name / value change, or `nil` when
    /// no field is named.
    static func fieldChanges(_ input: EditorInput, existing: [CustomField]) -> [CustomField]? {
        guard !input.fieldName.isEmpty else { return nil }
        if input.fieldValue.count == 0 {
            return ItemFieldInput.merged(existing, setting: [], removing: [input.fieldName])
        }
        let field = CustomField(name: input.fieldName, value: input.fieldValue, isHidden: input.fieldHidden)
        return ItemFieldInput.merged(existing, setting: [field], removing: [])
    }

    /// What changed in the stored item since the editor opened it, named
    /// for people (`label`, `password` …); empty when nothing did.
    ///
    /// The one place that decides "changed elsewhere": the item changed when
    /// its ``Item/revision`` moved on (every write of it moves it, also one
    /// that leaves every field as it was); items not read from a store
    /// (revision 0) are compared by modification date.
    public static func changedElsewhere(opened: Item, current: Item) -> [String] {
        guard isNewer(current, than: opened) else { return [] }
        var names: [String] = []
        if opened.service != current.service || opened.account != current.account { names.append("service / user ID") }
        if opened.secret != current.secret { names.append("password") }
        if opened.label != current.label { names.append("label") }
        if opened.url != current.url { names.append("URL") }
        if opened.comment != current.comment { names.append("notes") }
        if opened.kind != current.kind { names.append("kind") }
        if opened.oneTimePassword != current.oneTimePassword { names.append("one-time seed") }
        if opened.customFields != current.customFields { names.append("fields") }
        if opened.accessRule != current.accessRule { names.append("access rule") }
        if names.isEmpty { names.append("other attributes") }
        return names
    }

    /// Whether `current` was written since `opened` was read (the one
    /// "changed elsewhere" rule, for Save and for the list's reloads alike).
    public static func isNewer(_ current: Item, than opened: Item) -> Bool {
        isNewer(revision: current.revision, modified: current.modified, than: opened)
    }

    /// Whether an item now at `revision` and `modified` (a list row, an
    /// item read again) was written since `opened` was read: by revision,
    /// or by modification date when either has none (0).
    public static func isNewer(revision: UInt64, modified: Date, than opened: Item) -> Bool {
        guard opened.revision > 0 && revision > 0 else { return opened.modified != modified }
        return opened.revision != revision
    }
}

extension ItemChanges {
    /// Whether none of the attributes the editor sets is changed.
    fileprivate var changesNothing: Bool {
        service == nil && account == nil && label == nil && comment == nil && url == nil && kind == nil
            && secret == nil && oneTimePassword == nil && customFields == nil && accessRule == nil
    }
}

extension HomeFormModel {
    /// What the fields hold now, for ``Editor/save(_:opened:current:allowEmptySecret:overwriteChanges:)``.
    public var editorInput: EditorInput {
        EditorInput(
            texts: EditorTexts(
                service: service.text, userID: userID.text, label: label.text, url: url.text, notes: notes.text),
            kind: kind, password: password.secret(), passwordEdited: passwordEdited,
            seed: oneTimeSeed.secret(), seedEdited: seedEdited, fieldName: fieldName.text,
            fieldValue: fieldValue.secret(), fieldHidden: fieldHidden, accessRule: access.rule)
    }

    /// Whether the form holds edits Save has not written: a field differs
    /// from what the opened item showed (for a new item: a field is filled in).
    public var hasUnsavedEdits: Bool {
        let shown = baseline?.shown ?? .empty
        let texts = EditorTexts(
            service: service.text, userID: userID.text, label: label.text, url: url.text, notes: notes.text)
        return texts != shown || kind != (baseline?.item.kind ?? .password) || (passwordEdited && !password.isEmpty)
            || (baseline != nil && passwordEdited) || seedEdited || !fieldName.isEmpty || !fieldValue.isEmpty
            || (baseline == nil && !password.isEmpty) || access.rule != (baseline?.item.accessRule ?? AccessRule())
    }

    /// The editor's title: `Editing SERVICE / USER ID` for an opened item,
    /// `New item (from deleted SERVICE / USER ID)` for the edits kept of an
    /// item deleted elsewhere, `New item` otherwise, with a leading `● `
    /// while there are unsaved edits.
    public var editorTitle: String {
        let draft = draftOfDeleted.map { "New item (from deleted \($0.shortName))" } ?? "New item"
        let name = baseline.map { "Editing " + $0.key.shortName } ?? draft
        return hasUnsavedEdits ? "● " + name : name
    }
}
