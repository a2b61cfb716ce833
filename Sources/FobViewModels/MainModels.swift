import Foundation
import FobStore
import FobSessions

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
    /// The kind: password, token, oauth or note.
    public var kind: ItemKind
    /// The modification date.
    public var modified: Date
    /// When the token expires (token and oauth items whose expiry can be read).
    public var expires: Date?
    /// "expires in 4m" / "expired 2h ago", as of the last tick; `nil` without an expiry.
    public internal(set) var expiryText: String?

    /// The modification date as `yyyy-MM-dd HH:mm` in local time.
    public var modifiedText: String { ItemRow.dateFormatter.string(from: modified) }

    private static let dateFormatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm"
        return f
    }()
}

/// The item list: every item, filtered as you type over service, account and
/// label (case- and diacritic-insensitive), sorted by service then account,
/// with a selection that survives refreshes.
public final class ItemListModel {
    /// Every item, sorted.
    public private(set) var allRows: [ItemRow] = []
    /// The rows matching the filter, sorted by service then account.
    public private(set) var rows: [ItemRow] = []
    /// The filter text (plain field).
    public let filter = TextFieldState()
    /// The selected row's index in ``rows``, or `nil` when the list is empty.
    public private(set) var selectedIndex: Int?

    init() {}

    /// The selected row.
    public var selectedRow: ItemRow? { selectedIndex.map { rows[$0] } }

    /// The folded UTF-8 of each row's service, account and label (one line
    /// each), parallel to ``allRows``: folded once per load, so a filter
    /// keystroke over 10,000 rows is a byte search, not 30,000 foldings.
    private var searchKeys: [[UInt8]] = []

    /// Replaces the items, keeping the selection (by key) and the filter.
    func replace(with newRows: [ItemRow]) {
        let selected = selectedRow?.key
        let folded = newRows.map { row in
            (row: row, service: ItemListModel.fold(row.service), account: ItemListModel.fold(row.account))
        }
        let sorted = folded.sorted { a, b in
            if a.service != b.service { return a.service < b.service }
            if a.account != b.account { return a.account < b.account }
            return ItemListModel.ordering(a.row, b.row)
        }
        allRows = sorted.map(\.row)
        searchKeys = sorted.map { Array("\($0.service)\n\($0.account)\n\(ItemListModel.fold($0.row.label))".utf8) }
        applyFilter(keeping: selected)
    }

    /// Re-applies the filter, keeping the selected item if it still shows.
    func applyFilter(keeping key: ItemKey? = nil) {
        let previousIndex = selectedIndex
        let wanted = key ?? selectedRow?.key
        // Leading and trailing spaces (a stray key, a paste) match nothing on their own.
        let needle = Array(ItemListModel.fold(filter.text.trimmingCharacters(in: .whitespaces)).utf8)
        if needle.isEmpty {
            rows = allRows
        } else {
            rows = []
            for (index, key) in searchKeys.enumerated() where ItemListModel.bytes(key, contain: needle) {
                rows.append(allRows[index])
            }
        }
        if rows.isEmpty {
            selectedIndex = nil
        } else if let wanted, let index = rows.firstIndex(where: { $0.key == wanted }) {
            selectedIndex = index
        } else {
            selectedIndex = min(previousIndex ?? 0, rows.count - 1)
        }
    }

    /// Selects the row with `key` if it shows.
    func select(_ key: ItemKey) {
        if let index = rows.firstIndex(where: { $0.key == key }) { selectedIndex = index }
    }

    /// Moves the selection by `delta` rows, stopping at the ends.
    func moveSelection(by delta: Int) {
        guard !rows.isEmpty else { return }
        selectedIndex = max(0, min(rows.count - 1, (selectedIndex ?? 0) + delta))
    }

    /// Recomputes the expiry texts for `now`.
    func updateExpiryTexts(now: Date) {
        for i in allRows.indices { allRows[i].expiryText = allRows[i].expires.map { TokenExpiry.describe($0, now: now) } }
        for i in rows.indices { rows[i].expiryText = rows[i].expires.map { TokenExpiry.describe($0, now: now) } }
    }

    /// Drops every row and the filter.
    func wipe() {
        allRows = []
        searchKeys = []
        rows = []
        selectedIndex = nil
        filter.clear()
    }

    /// Whether `haystack` contains `needle` (non-empty) as a byte substring.
    static func bytes(_ haystack: [UInt8], contain needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        let first = needle[0]
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count, haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    static func fold(_ text: String) -> String {
        // ASCII has no diacritics: lower case is the whole fold, and far cheaper.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// Service, then account, each compared case- and diacritic-insensitively,
    /// with the exact bytes breaking ties so the order is total.
    static func ordering(_ a: ItemRow, _ b: ItemRow) -> Bool {
        let keysA = [fold(a.service), fold(a.account)], keysB = [fold(b.service), fold(b.account)]
        if keysA != keysB { return keysA.lexicographicallyPrecedes(keysB) }
        let rawA = [a.service, a.account, a.key.accessGroup], rawB = [b.service, b.account, b.key.accessGroup]
        return rawA.lexicographicallyPrecedes(rawB) { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// The Home form of the seeds: `Service`, `User ID`, `Password`, buttons
/// Save / Retrieve / Delete, then `Retrieved ID`, `Retrieved Password`
/// (masked until revealed) and `Message`.
public final class HomeFormModel {
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
    /// The Message line.
    public internal(set) var message = StatusLine.empty

    init() {}

    /// What to draw for Retrieved Password: one `•` per character while
    /// hidden; the text when revealed (or `(N bytes, not text)` for binary
    /// secrets); empty when nothing was retrieved.
    /// - Important: a revealed value is a `String` that cannot be wiped.
    public var retrievedPasswordText: String {
        guard let secret = retrievedPassword else { return "" }
        guard let text = secret.unsafeString else { return "(\(secret.count) bytes, not text)" }
        if isRetrievedPasswordRevealed { return text }
        return String(repeating: TextFieldState.maskCharacter, count: text.count)
    }

    /// Drops the retrieved values.
    func clearRetrieved() {
        retrievedKey = nil
        retrievedID = ""
        retrievedPassword = nil
        isRetrievedPasswordRevealed = false
    }

    /// Wipes every field and value.
    func wipe() {
        service.clear()
        userID.clear()
        password.clear()
        clearRetrieved()
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

    init() {}

    /// The focused text field, if focus is on one.
    public var focusedField: TextFieldState? {
        switch focus {
        case .filter: return list.filter
        case .service: return form.service
        case .userID: return form.userID
        case .password: return form.password
        case .list, .saveButton, .retrieveButton, .deleteButton: return nil
        }
    }

    /// Wipes everything the screen holds.
    func wipe() {
        list.wipe()
        form.wipe()
        focus = .list
    }
}
