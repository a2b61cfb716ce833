import FobSessions
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// One line of the item list: names and dates only, never a secret.
public struct ItemRow: Sendable, Equatable {
    /// The item's primary key.
    public var key: ItemKey
    /// The service.
    public var service: String { key.service }
    /// The account (User ID).
    public var account: String { key.account }
    /// The label, or empty.
    public var label: String
    /// The web address, or empty.
    public var url: String = ""
    /// Whether the item has a one-time seed (the list's 2FA mark).
    public var hasOneTimeCode = false
    /// The kind: password, token, oauth or note.
    public var kind: ItemKind
    /// The modification date.
    public var modified: Date
    /// The item's ``Item/revision`` as listed (0 when not read from a store).
    public var revision: UInt64 = 0
    /// When the token expires (token and oauth items whose expiry can be read).
    public var expires: Date?
    /// "expires in 4m" / "expired 2h ago", as of the last tick; `nil` without an expiry.
    public internal(set) var expiryText: String?
    /// How many versions a sync conflict left of the item (the vault's and
    /// the ones kept beside it); 0 without a conflict.
    public internal(set) var versions = 0
    /// The item's ``Item/persistentID`` (kept by a rename), or `nil` when
    /// not known: a reload finds a renamed item by it.
    public var persistentID: UUID?
    /// Whether the item has an access rule of its own (``Item/accessRule``
    /// not the default): what `is:shared` finds.
    public var hasAccessRule = false
}

/// The item list: every item sorted by service then account, found by
/// typing (``ListSearch``: terms over service, account, label, URL and kind,
/// best match first), with a selection that survives refreshes.
public final class ItemListModel {
    /// Every item, sorted.
    public private(set) var allRows: [ItemRow] = []
    /// The rows matching the filter: every row in listing order without
    /// one, the best matches first with one.
    public var rows: ShownRows { ShownRows(all: allRows, order: shownOrder) }
    /// The indices in ``allRows`` of the rows shown, or `nil` for all.
    private var shownOrder: [Int]?
    /// The last searches' terms, matches in listing order and matches
    /// ranked, newest last: Backspace back to one of them costs nothing, and
    /// a keystroke that narrows one searches only its matches.
    private var recentSearches: [(terms: [[UInt8]], inOrder: [Int], ranked: [Int])] = []
    /// How many searches ``recentSearches`` keeps.
    private static let recentSearchLimit = 32
    /// The filter text (plain field).
    public let filter = TextFieldState()
    /// The selected row's index in ``rows``, or `nil` when the list is empty.
    public private(set) var selectedIndex: Int?

    init() {}

    /// The selected row.
    public var selectedRow: ItemRow? { selectedIndex.map { rows[$0] } }

    /// What the list's columns need for every item (not only the filtered ones).
    public private(set) var columnNeeds = ListColumnNeeds()

    /// Each row's ``ListSearch/key(service:account:label:url:kind:)``,
    /// parallel to ``allRows``: folded once per load, so a filter keystroke
    /// is a byte scan, not a folding of every field.
    private var searchKeys = ListSearch.Index([])

    /// How many times the rows were replaced (a reload): lets the editor
    /// look for a change of its item only after one.
    public private(set) var generation = 0

    /// Sets every row's ``ItemRow/versions`` (0 for a key not in
    /// `versions`), keeping order, filter and selection.
    func setVersions(_ versions: [ItemKey: Int]) {
        for i in allRows.indices { allRows[i].versions = versions[allRows[i].key] ?? 0 }
    }

    /// The items renamed elsewhere at the last ``replace(with:renames:)``:
    /// each old key with its new one (found by ``ItemRow/persistentID``
    /// for the selected item, or as the change feed told).
    public private(set) var renames: [ItemKey: ItemKey] = [:]

    /// Replaces the items, keeping the selection (by key, or on the same
    /// item under its new name after a rename) and the filter.
    /// - Parameter told: renames the change feed told of, old key to new.
    func replace(with newRows: [ItemRow], renames told: [ItemKey: ItemKey] = [:]) {
        generation &+= 1
        let previous = selectedRow
        var selected = previous?.key
        let ordered = ListingOrder.ordered(newRows) { ($0.service, $0.account, $0.key.accessGroup) }
        allRows = ordered.map(\.element)
        searchKeys = ListSearch.Index(
            allRows.map {
                ListSearch.key(
                    service: $0.service, account: $0.account, label: $0.label, url: $0.url, kind: $0.kind.rawValue)
            })
        columnNeeds = ListColumnNeeds(allRows)
        recentSearches = []
        renames = told
        if let previous, let new = told[previous.key] ?? renamedKey(of: previous) {
            renames[previous.key] = new
            selected = new
        }
        applyFilter(keeping: selected)
    }

    /// The key `row` has now when it is no longer listed under its own but
    /// an item of its ``ItemRow/persistentID`` is (renamed elsewhere).
    private func renamedKey(of row: ItemRow) -> ItemKey? {
        guard let id = row.persistentID, !allRows.contains(where: { $0.key == row.key }) else { return nil }
        return allRows.first { $0.persistentID == id }?.key
    }

    /// Notes that `old` is listed as `new` now (a rename found outside
    /// ``replace(with:renames:)``, for the form's item).
    func noteRename(_ old: ItemKey, to new: ItemKey) { renames[old] = new }

    /// The key of the listed item with persistent id `id`, if any.
    func key(persistentID id: UUID) -> ItemKey? { allRows.first { $0.persistentID == id }?.key }

    /// The persistent id of the listed item `key`, if known.
    func persistentID(of key: ItemKey) -> UUID? { allRows.first { $0.key == key }?.persistentID }

    /// Replaces the rows of `removing` and those with the keys of
    /// `upserting` by `upserting`, keeping order, filter and selection:
    /// a change applied without reading every item again.
    /// - Parameter renames: the renames among them, old key to new.
    func patch(upserting: [ItemRow], removing: [ItemKey], renames: [ItemKey: ItemKey] = [:]) {
        guard !upserting.isEmpty || !removing.isEmpty else { return }
        let gone = Set(removing).union(upserting.map(\.key))
        var rows = allRows.filter { !gone.contains($0.key) }
        rows += upserting
        replace(with: rows, renames: renames)
    }

    /// Re-applies the filter, keeping the selected item if it still shows.
    func applyFilter(keeping key: ItemKey? = nil) {
        let previousIndex = selectedIndex
        let wanted = key ?? selectedRow?.key
        search()
        let rows = self.rows
        if rows.isEmpty {
            selectedIndex = nil
        } else if let wanted, let index = rows.firstIndex(where: { $0.key == wanted }) {
            selectedIndex = index
        } else {
            selectedIndex = min(previousIndex ?? 0, rows.count - 1)
        }
    }

    /// The filter's text changed: the rows matching it, best first, with
    /// the selection on the best match (``ListSearch``).
    func filterChanged() {
        search()
        selectedIndex = rows.isEmpty ? nil : 0
    }

    /// Sets ``shownOrder`` for the filter's terms, searching only the last
    /// matches when the new terms narrow the last ones.
    private func search() {
        let (words, predicates) = ListPredicate.split(filter.text)
        guard predicates.isEmpty else {
            // Predicates depend on the time (is:expired, is:soon): never cached.
            // They are tested first, each row in place (cheap beside ranking),
            // and only the rows they keep are ranked by the words.
            let now = lastNow
            let kept = allRows.withUnsafeBufferPointer { rows in
                rows.indices.filter { i in predicates.allSatisfy { $0.holds(for: rows[i], now: now) } }
            }
            let terms = ListSearch.terms(words)
            shownOrder = terms.isEmpty ? kept : ListSearch.ranked(searchKeys, terms: terms, among: kept).ranked
            return
        }
        // Terms are split at spaces: leading and trailing ones (a stray key, a paste) match nothing.
        let terms = ListSearch.terms(filter.text)
        guard !terms.isEmpty else {
            shownOrder = nil
            return
        }
        if let known = recentSearches.lastIndex(where: { $0.terms == terms }) {
            shownOrder = recentSearches[known].ranked
            recentSearches.append(recentSearches.remove(at: known))
            return
        }
        let candidates = recentSearches.filter { ListSearch.narrows($0.terms, to: terms) }
            .min { $0.inOrder.count < $1.inOrder.count }?.inOrder
        let found = ListSearch.ranked(searchKeys, terms: terms, among: candidates)
        shownOrder = found.ranked
        recentSearches.append((terms, found.inOrder, found.ranked))
        if recentSearches.count > ItemListModel.recentSearchLimit { recentSearches.removeFirst() }
    }

    /// Selects the row with `key` if it shows.
    func select(_ key: ItemKey) {
        if let index = rows.firstIndex(where: { $0.key == key }) { selectedIndex = index }
    }

    /// Selects the item `key`, clearing the filter first when it hides the
    /// item (a new item saved while a filter is kept), so that the
    /// highlight is never left on another item.
    /// - Returns: whether the filter was cleared.
    @discardableResult
    func reveal(_ key: ItemKey) -> Bool {
        guard !rows.contains(where: { $0.key == key }), allRows.contains(where: { $0.key == key }) else {
            select(key)
            return false
        }
        filter.clear()
        applyFilter(keeping: key)
        return true
    }

    /// Earlier queries, newest last (at most ``queryHistoryLimit``): only
    /// the ones used, that matched an item the user then copied or opened,
    /// so that a secret typed here by mistake (a master password) is not
    /// kept. Held in memory only, never written anywhere; wiped on lock.
    public private(set) var queryHistory: [String] = []
    /// Which of ``queryHistory`` the query was recalled from, while it is unchanged.
    private var recalled: Int?
    /// Whether Up recalls a query anywhere in the list: from when the
    /// query was cleared (or recalled) until the selection moves.
    private var recallArmed = true

    /// The query was cleared (Esc): the next Up recalls the last one.
    func armRecall() { recallArmed = true }
    /// How many queries ``queryHistory`` keeps.
    static let queryHistoryLimit = 20

    /// Keeps the query for ``recallQuery()`` as the user acts on the item it
    /// found: an empty query, or one that matches nothing, is not kept.
    func rememberQuery() {
        let query = filter.text
        guard !query.isEmpty, selectedRow != nil else { return }
        queryHistory.removeAll { $0 == query }
        queryHistory.append(query)
        if queryHistory.count > ItemListModel.queryHistoryLimit { queryHistory.removeFirst() }
        recalled = nil
    }

    /// Up right after the query was cleared, or on the top row: with an
    /// empty query, the newest earlier query; with a query recalled and
    /// unchanged, the one before it.
    /// - Returns: whether a query was recalled (else Up moves the selection).
    func recallQuery() -> Bool {
        guard recallArmed || (selectedIndex ?? 0) == 0 else { return false }
        let next: Int
        if filter.isEmpty {
            next = queryHistory.count - 1
        } else if let recalled, queryHistory.indices.contains(recalled), filter.text == queryHistory[recalled] {
            next = recalled - 1
        } else {
            return false
        }
        guard next >= 0 else { return false }
        recalled = next
        filter.setText(queryHistory[next])
        filterChanged()
        return true
    }

    func moveSelection(by delta: Int) {
        recallArmed = false
        guard !rows.isEmpty else { return }
        selectedIndex = max(0, min(rows.count - 1, (selectedIndex ?? 0) + delta))
    }

    /// The time of the last ``updateExpiryTexts(now:)``: what `is:expired`
    /// and `is:soon` are judged by.
    private var lastNow = Date(timeIntervalSince1970: 0)

    /// Recomputes the expiry texts for `now`.
    func updateExpiryTexts(now: Date) {
        lastNow = now
        for i in allRows.indices where allRows[i].expires != nil {
            allRows[i].expiryText = allRows[i].expires.map { TokenExpiry.describe($0, now: now) }
        }
    }

    /// Drops every row and the filter.
    func wipe() {
        allRows = []
        searchKeys = ListSearch.Index([])
        columnNeeds = ListColumnNeeds()
        shownOrder = nil
        recentSearches = []
        selectedIndex = nil
        queryHistory = []
        recalled = nil
        filter.clear()
    }
}

/// The Home form of the seeds: `Service`, `User ID`, `Password`, buttons
/// Save / Retrieve / Delete, then `Retrieved ID`, `Retrieved Password`
/// (masked until revealed) and `Message`.
public final class HomeFormModel {
    /// Appended to a message when the form's retrieved values were dropped.
    static let retrievedClearedNote = "; Retrieved ID and Password cleared"

    /// The Service field.
    public let service = TextFieldState()
    /// The User ID field (the item's account).
    public let userID = TextFieldState()
    /// The Password field (masked).
    public let password = TextFieldState(secure: true, maxBytes: Item.maxSecretBytes)
    /// The item the retrieved values came from, or `nil`.
    public internal(set) var retrievedKey: ItemKey?
    /// The account of the last retrieved item, or empty.
    public internal(set) var retrievedID = ""
    /// The last retrieved secret, held until the next retrieve, clear or lock.
    public internal(set) var retrievedPassword: SecretBytes?
    /// Whether the Retrieved Password shows its characters.
    public internal(set) var isRetrievedPasswordRevealed = false
    /// The Message line (the status line shows it too); each message set
    /// is passed to ``messageObserver`` for the message history.
    public internal(set) var message = StatusLine.empty {
        didSet { if !message.isEmpty { messageObserver?(message) } }
    }
    /// Told of every message set (the main screen's ``MainModel/messages``).
    var messageObserver: ((StatusLine) -> Void)?

    // MARK: The rest of the item (below the seeds' form)

    /// The Kind choice; what a saved item becomes (a token is wiped by logout).
    public internal(set) var kind: ItemKind = .password
    /// The Label field.
    public let label = TextFieldState(maxBytes: Item.maxTextBytes)
    /// The URL field.
    public let url = TextFieldState(maxBytes: Item.maxTextBytes)
    /// The Notes field: several lines (Enter adds a line break).
    public let notes = TextFieldState(maxBytes: Item.maxNotesBytes, allowsLineBreaks: true)
    /// The One-time seed field (masked): an `otpauth://totp/` URI or a base32
    /// secret. Empty for an opened item until edited (the stored seed stays).
    public let oneTimeSeed = TextFieldState(secure: true, maxBytes: Item.maxOneTimePasswordBytes)
    /// The Field name field: Save sets (or, with an empty value, removes) the custom field of this name.
    public let fieldName = TextFieldState(maxBytes: Item.maxFieldNameBytes)
    /// The Field value field (masked until Ctrl-R).
    public let fieldValue = TextFieldState(secure: true, maxBytes: Item.maxFieldValueBytes)
    /// Whether the custom field Save sets is hidden (default yes).
    public internal(set) var fieldHidden = true
    /// The Access rows: the item's access rule as edited.
    public internal(set) var access = AccessRuleDraft()
    /// The item the form was opened on (Ctrl-E in the list); Save
    /// updates (or renames) it. `nil` for a new item.
    public internal(set) var openedKey: ItemKey?
    /// Whether the opened item has a non-empty secret.
    public internal(set) var openedHasSecret = false
    /// Whether the opened item has a one-time seed.
    public internal(set) var openedHasSeed = false
    /// Whether the Password field was edited since the item was opened
    /// (until then Save keeps the stored secret).
    public internal(set) var passwordEdited = false
    /// Whether the One-time seed field was edited since the item was opened.
    public internal(set) var seedEdited = false
    /// The opened item's custom fields (hidden values stay masked).
    public internal(set) var customFields: [CustomField] = []
    /// The opened token or OAuth item's decoded claims and expiry, decoded
    /// when opened and dropped with the form (never on list refreshes).
    public internal(set) var tokenDetails: TokenDetails?
    /// The opened item's one-time-password generator, when it has a seed.
    public internal(set) var oneTimePassword: OneTimePassword?
    /// What the editor opened (the item as read then, and what its fields
    /// showed): Save writes only what differs from it; `nil` for a new item.
    public internal(set) var baseline: EditorBaseline?
    /// The item a new item's draft was opened as, deleted elsewhere while
    /// the draft's edits were unsaved (``editorTitle`` names it); `nil` otherwise.
    public internal(set) var draftOfDeleted: ItemKey?

    init() {}

    /// The one-time code at `now` and the seconds it has left, or `nil`
    /// without a seed. Computed from `now` on each call, so a code that
    /// rolls over while shown is replaced at the next draw.
    public func oneTimeCode(at now: Date) -> (code: String, secondsLeft: Int?)? {
        guard let otp = oneTimePassword else { return nil }
        return (otp.code(at: now), otp.secondsLeft(at: now))
    }

    /// What to draw for the One-time code: the code while revealed
    /// (Ctrl-R), one `•` per digit while hidden, and the seconds left.
    public func oneTimeCodeText(at now: Date) -> String? {
        guard let (code, left) = oneTimeCode(at: now) else { return nil }
        let shown =
            isRetrievedPasswordRevealed ? code : String(repeating: TextFieldState.maskCharacter, count: code.count)
        return left.map { "\(shown)  \($0) s left" } ?? shown
    }

    /// What to draw for Retrieved Password: a mask of fixed width
    /// (``ItemPreview/mask``) while hidden, so its length cannot be counted; the text
    /// when revealed, line breaks shown as `⏎` (or `(N bytes, not text)` for
    /// binary secrets); empty when nothing was retrieved.
    /// - Important: a revealed value is a `String` that cannot be wiped.
    public var retrievedPasswordText: String {
        guard let secret = retrievedPassword else { return "" }
        guard secret.isValidUTF8 else { return "(\(secret.count) bytes, not text)" }
        guard isRetrievedPasswordRevealed, let text = secret.unsafeString else {
            return ItemPreview.mask
        }
        return HomeFormModel.visibleLineBreaks(text)
    }

    /// `text` with each line break (`\r\n`, `\n`, `\r`) as `⏎`, so a
    /// multi-line value shows on one line without control characters.
    public static func visibleLineBreaks(_ text: String) -> String {
        guard text.contains(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) else { return text }
        return String(text.map { $0 == "\n" || $0 == "\r\n" || $0 == "\r" ? "⏎" : $0 })
    }

    /// The number of Unicode scalars in UTF-8 `secret` (bytes that do not
    /// continue a sequence): how many masks to draw, read without decoding.
    static func characterCount(_ secret: SecretBytes) -> Int {
        secret.withUnsafeBytes { $0.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }
    }

    /// Drops the retrieved values.
    func clearRetrieved() {
        retrievedKey = nil
        retrievedID = ""
        retrievedPassword = nil
        isRetrievedPasswordRevealed = false
    }

    /// Empties the rest of the item and forgets the opened one.
    func clearItem() {
        kind = .password
        label.clear()
        url.clear()
        notes.clear()
        oneTimeSeed.clear()
        fieldName.clear()
        fieldValue.clear()
        fieldHidden = true
        access = AccessRuleDraft(vaultDefault: access.vaultDefault)
        passwordEdited = false
        seedEdited = false
        forgetOpened()
        draftOfDeleted = nil
    }

    /// Forgets the opened item and what was kept of it beside the fields
    /// (its secret and seed, custom fields, token details, code, baseline).
    private func forgetOpened() {
        openedKey = nil
        openedHasSecret = false
        openedHasSeed = false
        customFields = []
        tokenDetails = nil
        oneTimePassword = nil
        baseline = nil
    }

    /// Keeps what the fields hold as a new item's draft: the opened item
    /// was deleted elsewhere (as `key`), so the retrieved values and what
    /// was kept of it (its secret, seed, custom fields) go; Save adds a new item.
    func keepAsNewItem(deleted key: ItemKey) {
        clearRetrieved()
        forgetOpened()
        draftOfDeleted = key
    }

    /// Wipes every field and value.
    func wipe() {
        service.clear()
        userID.clear()
        password.clear()
        clearRetrieved()
        clearItem()
        message = .empty
    }
}

/// The main screen: the item list beside the Home form.
public final class MainModel {
    /// The item list.
    public let list = ItemListModel()
    /// The Home form.
    public let form = HomeFormModel()
    /// What has focus.
    public internal(set) var focus: MainFocus = .list
    /// The password generator's settings: what Ctrl-G makes, what the
    /// Generator row summarises. Kept across items and locks for the UI's
    /// run; never a password.
    public internal(set) var generatorSettings: PasswordPolicy
    /// The generator dialog while it shows (``Overlay/generator``), else `nil`.
    public internal(set) var generatorDialog: GeneratorDialogModel?
    /// The preview of the highlighted item, or `nil` with none.
    public internal(set) var preview: ItemPreview?
    /// The last messages shown (F2).
    public internal(set) var messages = MessageLog()
    /// Whole seconds left to undo the newest delete or replaced secret
    /// with Ctrl-Y, or `nil` when there is nothing to undo: kept in view
    /// (the list's title) however many messages follow the delete's.
    public internal(set) var undoSecondsLeft: Int?
    /// The logout review while it shows (``Overlay/logoutReview``), else `nil`.
    public internal(set) var logoutReview: LogoutReviewModel?
    /// What the last sync did and which items have conflicts, or `nil`
    /// when the vault does not sync.
    public internal(set) var sync: SyncOverview?
    /// The agent's consent questions waiting for this UI, and the one the dialog shows.
    public internal(set) var consent = ConsentModel()
    /// The access log view while it shows (``Overlay/accessLog``), else `nil`.
    public internal(set) var accessLog: AccessLogScreen?

    /// How far the preview of which item is scrolled: rows out of view above.
    private var previewScroll: (key: ItemKey, offset: Int)?

    /// The preview's first row in view (0 the first): as scrolled for the
    /// highlighted item, 0 once the highlight moves to another.
    public var previewOffset: Int {
        guard let scroll = previewScroll, scroll.key == list.selectedRow?.key else { return 0 }
        return scroll.offset
    }

    /// Scrolls the highlighted item's preview to `offset` (never below 0).
    func scrollPreview(to offset: Int) {
        previewScroll = list.selectedRow.map { ($0.key, max(0, offset)) }
    }

    /// The resolve dialog's versions (F6): which item, and their secrets
    /// once Ctrl-R revealed them (`nil` while masked).
    public internal(set) var conflictVersions: (key: ItemKey, secrets: ConflictSecrets?)?

    /// The resolve dialog's two secrets as it draws them: each masked with
    /// a mask of fixed width (``ItemPreview/mask``) until Ctrl-R, then as
    /// text (line breaks as `⏎`, `(N bytes, not text)` for binary ones,
    /// `(none)` for none); `nil` when the dialog shows no conflict.
    /// - Important: a revealed value is a `String` that cannot be wiped.
    public var conflictSecretTexts: (local: String, other: String)? {
        guard let versions = conflictVersions else { return nil }
        guard let secrets = versions.secrets else { return (ItemPreview.mask, ItemPreview.mask) }
        func text(_ secret: SecretBytes?) -> String {
            guard let secret, secret.count > 0 else { return "(none)" }
            guard secret.isValidUTF8, let text = secret.unsafeString else { return "(\(secret.count) bytes, not text)" }
            return HomeFormModel.visibleLineBreaks(text)
        }
        return (text(secrets.local), text(secrets.other))
    }

    /// The preview's sync line for the highlighted item: `2 versions; F6
    /// keeps one`, or `nil` when it has no conflict.
    public var conflictNote: String? {
        guard let row = list.selectedRow, row.versions > 1 else { return nil }
        return "\(row.versions) versions; F6 keeps one"
    }

    /// - Parameter generatorSettings: the generator's settings to start with.
    init(generatorSettings: PasswordPolicy = PasswordPolicy()) {
        self.generatorSettings = generatorSettings
    }

    /// The Generator row's text: the settings in one line (``GeneratorSpec/summary(of:)``).
    public var generatorSummary: String { GeneratorSpec.summary(of: generatorSettings) }

    /// The focused text field, if focus is on one.
    public var focusedField: TextFieldState? {
        switch focus {
        case .list, .filter: return list.filter
        case .service: return form.service
        case .userID: return form.userID
        case .password: return form.password
        case .label: return form.label
        case .url: return form.url
        case .notes: return form.notes
        case .oneTimeSeed: return form.oneTimeSeed
        case .fieldName: return form.fieldName
        case .fieldValue: return form.fieldValue
        case .saveButton, .retrieveButton, .deleteButton, .kind, .fieldHidden, .generator, .accessMode,
            .accessForwarded, .accessPrograms:
            return nil
        }
    }

    /// Wipes everything the screen holds.
    func wipe() {
        list.wipe()
        form.wipe()
        generatorDialog?.wipe()
        generatorDialog = nil
        preview = nil
        messages.removeAll()
        logoutReview = nil
        accessLog = nil
        focus = .list
    }
}
