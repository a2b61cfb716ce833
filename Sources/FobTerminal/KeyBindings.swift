import FobStore
import FobViewModels

/// Where a key binding applies: what the app shows, as far as keys go.
public enum KeyContext: Sendable, Equatable, CaseIterable {
    /// The terminal is below ``Renderer/minimumColumns`` × ``Renderer/minimumRows``.
    case tooSmall
    /// The help overlay.
    case help
    /// The message history overlay.
    case messages
    /// A confirmation dialog.
    case confirm
    /// The logout review (`W`): a list to tick, then y or n.
    case logoutReview
    /// The create-vault screen.
    case createVault
    /// The unlock screen.
    case unlock
    /// The item list has focus.
    case list
    /// The list's filter line has focus.
    case filter
    /// A form field (Service, User ID, Password) has focus.
    case field
    /// A form button (Save, Retrieve, Delete) has focus.
    case button
    /// A choice (the Kind field) has focus: Space and Left/Right change it.
    case choice
    /// The form's Generator row has focus: Enter opens the generator dialog.
    case generatorRow
    /// The generator dialog, with focus on one of its text fields (Length,
    /// Excluded characters, Words, Separator).
    case generatorField
    /// The generator dialog, with focus on the mode or a class toggle.
    case generatorChoice

    /// The context for what `app` shows.
    /// - Parameter fits: whether the terminal is big enough for the screens
    ///   (``Renderer/fits(rows:columns:)``).
    public init(_ app: AppModel, fits: Bool = true) {
        guard fits else {
            self = .tooSmall
            return
        }
        if let overlay = app.overlay {
            switch overlay {
            case .help: self = .help
            case .messages: self = .messages
            case .confirm: self = .confirm
            case .logoutReview: self = .logoutReview
            case .generator:
                let textFocused = app.mainModel?.generatorDialog?.focus.isText ?? false
                self = textFocused ? .generatorField : .generatorChoice
            }
            return
        }
        self = KeyContext.screen(app)
    }

    /// The context of the screen under any overlay (the help shows its
    /// section first).
    public static func screen(_ app: AppModel) -> KeyContext {
        switch app.screen {
        case .createVault: return .createVault
        case .unlock: return .unlock
        case .main(let main):
            switch main.focus {
            case .list: return .list
            case .filter: return .filter
            case .service, .userID, .password, .label, .url, .notes, .oneTimeSeed, .fieldName, .fieldValue:
                return .field
            case .generator: return .generatorRow
            case .saveButton, .retrieveButton, .deleteButton: return .button
            case .kind, .fieldHidden: return .choice
            }
        }
    }
}

/// One row of the key table: which keys, where, what they ask for, and how
/// the legend and the help overlay describe them.
public struct KeyBinding: Sendable {
    /// The keys a row binds.
    public enum Keys: Sendable {
        /// Exactly these keys.
        case these([Key])
        /// Typed characters and pastes: the text goes into the focused field.
        case text
        /// Every key.
        case any

        /// Whether `key` is one of these keys.
        func match(_ key: Key) -> Bool {
            switch self {
            case .these(let keys): return keys.contains(key)
            case .text:
                switch key {
                case .character, .paste: return true
                default: return false
                }
            case .any: return true
            }
        }
    }

    /// What the app shows when a key is pressed, for bindings whose action
    /// or legend depends on it.
    public struct Situation {
        /// The root view model (read only).
        public let app: AppModel
        /// How many list rows one page is (PageUp/PageDown).
        public let pageRows: Int
        /// How many pages the help overlay takes on this screen (1 when it fits).
        public let helpPages: Int

        /// What `app` shows, with pages of `pageRows` list rows and a help of `helpPages` pages.
        public init(app: AppModel, pageRows: Int, helpPages: Int = 1) {
            self.app = app
            self.pageRows = pageRows
            self.helpPages = helpPages
        }
    }

    /// A row's entry in the key legend (the bottom line).
    public enum Legend: Sendable {
        /// Fixed text.
        case text(String)
        /// Text that depends on what the app shows.
        case computed(@Sendable (AppModel) -> String)

        /// The text for `app`.
        func text(for app: AppModel) -> String {
            switch self {
            case .text(let text): return text
            case .computed(let make): return make(app)
            }
        }
    }

    /// The keys.
    public let keys: Keys
    /// Where the keys mean ``action(for:in:)``.
    public let contexts: [KeyContext]
    /// The legend entry, or `nil` for keys the legend leaves out.
    public let legend: Legend?
    private let makeAction: @Sendable (Key, Situation) -> Action

    /// A row whose keys all ask for `action`.
    init(_ keys: [Key], in contexts: [KeyContext], _ action: Action, legend: String? = nil) {
        self.init(.these(keys), in: contexts, legend: legend.map(Legend.text)) { _, _ in action }
    }

    /// A row whose action depends on the key or on what the app shows.
    init(
        _ keys: Keys, in contexts: [KeyContext], legend: Legend? = nil,
        action: @escaping @Sendable (Key, Situation) -> Action
    ) {
        self.keys = keys
        self.contexts = contexts
        self.legend = legend
        makeAction = action
    }

    /// The intent `key` (one of ``keys``) stands for in `situation`.
    public func action(for key: Key, in situation: Situation) -> Action { makeAction(key, situation) }
}

/// The one table of key bindings. The key map (``KeyMap``) and the key
/// legend on the bottom line (``legend(for:)``) are read from it; the help
/// overlay's text is ``HelpSections`` (docs/tui.md).
///
/// In a context the first row holding a key decides it; the legend lists
/// a context's rows in table order.
public enum KeyBindings {
    /// Every binding.
    public static let table: [KeyBinding] = tooSmall + overlays + generator + setup + list + filter + form + editing

    /// With the terminal too small only `q` means something.
    private static let tooSmall: [KeyBinding] = [
        KeyBinding([.character("q")], in: [.tooSmall], .quit)
    ]

    /// The help overlay and confirmation dialogs.
    private static let overlays: [KeyBinding] = [
        KeyBinding(.any, in: [.messages], legend: .text("any key closes the messages")) { _, _ in .dismiss },
        KeyBinding(.any, in: [.help], legend: .text("any key closes the help")) { key, situation in
            // A help taller than the screen comes in pages; past the last one, Space closes it.
            if situation.helpPages > 1 {
                if [.character(" "), .pageDown, .down].contains(key), situation.app.helpPage + 1 < situation.helpPages {
                    return .moveSelection(1)
                }
                if [.pageUp, .up].contains(key) { return .moveSelection(-1) }
            }
            // q and Esc close the help like any other key: they never quit.
            return .dismiss
        },
        // The unsaved-edits question names its three answers in the legend too.
        KeyBinding(
            .these([.character("y"), .character("Y")]), in: [.confirm],
            legend: .computed {
                asksToLeaveEditor($0)
                    ? "y save" : asksAboutChanges($0) ? "y write over" : asksToResolve($0) ? "y keep this" : "y yes"
            }
        ) { _, _ in .confirm },
        KeyBinding(
            .these([.character("n"), .character("N"), .escape]), in: [.confirm],
            legend: .computed { asksToLeaveEditor($0) || asksAboutChanges($0) ? "n/Esc keep editing" : "n/Esc no" }
        ) { _, _ in .dismiss },
        KeyBinding(
            .these([.character("d"), .character("D")]), in: [.confirm],
            legend: .computed { asksToLeaveEditor($0) ? "d discard" : "" }
        ) { _, _ in .discardEdits },
        // The changed-elsewhere question: r reloads the item, dropping the
        // edits; the sync conflict's: r keeps the other device's version.
        KeyBinding(
            .these([.character("r"), .character("R")]), in: [.confirm],
            legend: .computed { asksAboutChanges($0) ? "r reload" : asksToResolve($0) ? "r keep other" : "" }
        ) { _, situation in asksToResolve(situation.app) ? .keepOtherVersion : .discardEdits },
        KeyBinding([.down, .character("j")], in: [.logoutReview], .moveSelection(1), legend: "Up/Down move"),
        KeyBinding([.up, .character("k")], in: [.logoutReview], .moveSelection(-1)),
        KeyBinding(.these([.pageDown]), in: [.logoutReview]) { _, situation in
            .moveSelection(max(situation.pageRows, 1))
        },
        KeyBinding(.these([.pageUp]), in: [.logoutReview]) { _, situation in .moveSelection(-max(situation.pageRows, 1))
        },
        KeyBinding([.character(" ")], in: [.logoutReview], .cycleKind(1), legend: "Space tick"),
        KeyBinding([.character("y"), .character("Y")], in: [.logoutReview], .confirm, legend: "y delete"),
        KeyBinding(
            [.character("n"), .character("N"), .escape], in: [.logoutReview], .dismiss, legend: "n/Esc cancel"),
    ]

    /// Where Alt-G opens the generator dialog: the list and the whole form.
    private static let mainContexts: [KeyContext] = [.list, .field, .button, .choice, .generatorRow]

    /// The generator dialog (its text fields' editing keys are in ``editing``).
    private static let generator: [KeyBinding] = [
        KeyBinding(
            [.tab, .down], in: [.generatorField, .generatorChoice], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.backTab, .up], in: [.generatorField, .generatorChoice], .focusPrevious),
        KeyBinding(
            [.character(" "), .right], in: [.generatorChoice], .cycleKind(1), legend: "Space switch"),
        KeyBinding([.left], in: [.generatorChoice], .cycleKind(-1)),
        KeyBinding(
            [.control("g")], in: [.generatorField, .generatorChoice], .generatePassword, legend: "Ctrl-G new"),
        KeyBinding(
            [.control("r")], in: [.generatorField, .generatorChoice], .toggleReveal, legend: "Ctrl-R reveal"),
        KeyBinding(
            [.enter], in: [.generatorField, .generatorChoice], .submit, legend: "Enter use"),
        KeyBinding(
            [.escape], in: [.generatorField, .generatorChoice], .cancel, legend: "Esc cancel"),
        KeyBinding([.control("u")], in: [.generatorField], .clearField),
    ]

    /// The create-vault and unlock screens (their text editing is in ``editing``).
    private static let setup: [KeyBinding] = [
        KeyBinding([.tab, .down], in: [.createVault], .focusNext, legend: "Tab next field"),
        KeyBinding([.backTab, .up], in: [.createVault], .focusPrevious),
        KeyBinding([.enter], in: [.createVault], .submit, legend: "Enter create"),
        KeyBinding([.enter], in: [.unlock], .submit, legend: "Enter unlock"),
        KeyBinding([.control("r")], in: [.createVault, .unlock], .toggleReveal, legend: "Ctrl-R reveal"),
        KeyBinding(.these([.control("t")]), in: [.createVault], legend: .text("Ctrl-T key derivation")) {
            _, situation in
            .setKDFPreset(KeyMap.nextPreset(after: situation.app.createVaultModel?.kdfPreset ?? .moderate))
        },
        KeyBinding([.escape], in: [.createVault, .unlock], .quit, legend: "Esc quit"),
    ]

    /// The farthest a selection moves (Home and End in the list).
    private static let farthest = Int(Int32.max)

    /// The item list; its rows carry the help overlay's lines.
    private static let list: [KeyBinding] = [
        KeyBinding(
            [.down, .character("j")], in: [.list], .moveSelection(1), legend: "Up/Down j/k move"),
        KeyBinding([.up, .character("k")], in: [.list], .moveSelection(-1)),
        KeyBinding(.these([.pageDown]), in: [.list, .filter]) { _, situation in
            .moveSelection(max(situation.pageRows, 1))
        },
        KeyBinding(.these([.pageUp]), in: [.list, .filter]) { _, situation in
            .moveSelection(-max(situation.pageRows, 1))
        },
        KeyBinding([.end], in: [.list], .moveSelection(farthest)),
        KeyBinding([.home], in: [.list], .moveSelection(-farthest)),
        KeyBinding(
            [.character("/")], in: [.list], .startFilter, legend: "/ filter"),
        KeyBinding(
            // No legend entry: `e edit` says the same, and the bottom line
            // at 80 columns keeps `l lock` and `W logout` instead.
            [.enter], in: [.list], .openSelected
        ),
        KeyBinding(
            [.character("c")], in: [.list], .copySelected, legend: "c/u/o copy"),
        KeyBinding(
            [.character("u")], in: [.list], .copyUserID),
        KeyBinding(
            [.character("o")], in: [.list], .copyOneTimeCode),
        KeyBinding(
            [.character("e")], in: [.list], .editSelected, legend: "e edit"),
        KeyBinding(
            [.character("r")], in: [.list], .refreshSelected),
        KeyBinding(
            [.character("n")], in: [.list], .newItem, legend: "n new"),
        KeyBinding(
            [.character("d")], in: [.list], .deleteSelected, legend: "d delete"),
        KeyBinding(
            [.character("z")], in: [.list], .undo),
        KeyBinding(
            [.character("V")], in: [.list], .resolveSelected),
        KeyBinding(
            [.character("l")], in: [.list], .lock, legend: "l lock"),
        KeyBinding(
            [.character("W")], in: [.list], .logoutWipe(service: nil), legend: "W logout"),
        KeyBinding(
            [.tab], in: [.list], .focusNext),
        KeyBinding([.backTab], in: [.list], .focusPrevious),
        KeyBinding(
            [.control("r")], in: [.list], .toggleReveal, legend: "Ctrl-R reveal"),
        KeyBinding(
            [.escape], in: [.list], .cancel),
        KeyBinding(
            [.character("m")], in: [.list], .showMessages, legend: "m messages"),
        KeyBinding(
            [.character("?"), .function(1)], in: [.list], .showHelp, legend: "? help"),
        KeyBinding(
            [.character("q")], in: [.list], .quit, legend: "q quit"),
    ]

    /// The filter line (its other editing keys are in ``editing``).
    private static let filter: [KeyBinding] = [
        KeyBinding(.text, in: [.filter], legend: .text("type to filter")) { key, _ in insert(key) },
        KeyBinding([.enter], in: [.filter], .submit, legend: "Enter keep"),
        KeyBinding([.escape], in: [.filter], .cancel, legend: "Esc clear"),
        KeyBinding([.control("r")], in: [.filter], .toggleReveal),
        KeyBinding([.down], in: [.filter], .moveSelection(1), legend: "Up/Down move"),
        KeyBinding([.up], in: [.filter], .moveSelection(-1)),
        KeyBinding([.tab], in: [.filter], .focusNext),
        KeyBinding([.backTab], in: [.filter], .focusPrevious),
    ]

    /// The Home form's fields and buttons (the fields' editing keys are in ``editing``).
    private static let form: [KeyBinding] = [
        KeyBinding([.tab, .down], in: [.field], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.tab, .right, .down], in: [.button], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.backTab, .up], in: [.field], .focusPrevious),
        KeyBinding([.backTab, .left, .up], in: [.button], .focusPrevious),
        KeyBinding([.enter], in: [.field], .submit, legend: "Enter next"),
        KeyBinding([.enter, .character(" ")], in: [.button], .submit, legend: "Enter press"),
        KeyBinding(
            [.control("s")], in: [.field, .button, .choice, .generatorRow], .save, legend: "Ctrl-S save"),
        KeyBinding(.these([.control("r")]), in: [.field, .button], legend: .computed(revealLegend)) { _, _ in
            .toggleReveal
        },
        KeyBinding([.control("g")], in: [.field], .generatePassword, legend: "Ctrl-G generate"),
        KeyBinding(
            [.control("g")], in: [.list], .generatePassword),
        KeyBinding(
            [.alt("g")], in: mainContexts, .openGenerator),
        KeyBinding(
            [.enter, .character(" "), .control("g")], in: [.generatorRow], .openGenerator,
            legend: "Enter/Ctrl-G settings"),
        KeyBinding([.tab, .down], in: [.generatorRow], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.backTab, .up], in: [.generatorRow], .focusPrevious),
        KeyBinding([.control("r")], in: [.generatorRow], .toggleReveal),
        KeyBinding([.escape], in: [.generatorRow], .cancel, legend: "Esc list"),
        KeyBinding([.control("u")], in: [.field], .clearField, legend: "Ctrl-U clear"),
        KeyBinding([.escape], in: [.field, .button], .cancel, legend: "Esc list"),
        KeyBinding([.character(" "), .right], in: [.choice], .cycleKind(1), legend: "Space/Left/Right change"),
        KeyBinding([.left], in: [.choice], .cycleKind(-1)),
        KeyBinding([.enter], in: [.choice], .submit),
        KeyBinding([.tab, .down], in: [.choice], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.backTab, .up], in: [.choice], .focusPrevious),
        KeyBinding([.control("r")], in: [.choice], .toggleReveal),
        KeyBinding([.escape], in: [.choice], .cancel, legend: "Esc list"),
        KeyBinding([.character("?"), .function(1)], in: [.button], .showHelp, legend: "? help"),
    ]

    /// Keys that edit the focused text field.
    private static let editing: [KeyBinding] = [
        KeyBinding(.text, in: [.createVault, .unlock, .field, .generatorField]) { key, _ in insert(key) },
        KeyBinding([.backspace], in: textContexts, .deleteBackward),
        KeyBinding([.delete, .control("d")], in: textContexts, .deleteForward),
        KeyBinding([.left, .control("b")], in: textContexts, .moveCursor(.left)),
        KeyBinding([.right, .control("f")], in: textContexts, .moveCursor(.right)),
        KeyBinding([.home, .control("a")], in: textContexts, .moveCursor(.home)),
        KeyBinding([.end, .control("e")], in: textContexts, .moveCursor(.end)),
        KeyBinding([.control("u")], in: [.createVault, .unlock, .filter], .clearField),
    ]

    /// Where a text field has focus.
    private static let textContexts: [KeyContext] = [.createVault, .unlock, .filter, .field, .generatorField]

    /// A typed character or a paste as text to insert.
    private static func insert(_ key: Key) -> Action {
        switch key {
        case .character(let c): return .insert(String(c))
        case .paste(let text): return .insert(text)
        default: return .insert("") // not reached: `.text` rows match only characters and pastes
        }
    }

    /// What Ctrl-R reveals from a form field or button: the Retrieved
    /// Password, except in the Password field while it holds text or when
    /// nothing was retrieved, where it is the typed password.
    @Sendable private static func revealLegend(_ app: AppModel) -> String {
        guard let main = app.mainModel, main.focus == .password else { return "Ctrl-R reveal retrieved" }
        let retrieved = main.form.password.isEmpty && main.form.retrievedPassword != nil
        return "Ctrl-R " + (retrieved ? "reveal retrieved" : "reveal typed")
    }

    // MARK: - Derived

    /// The first row binding `key` in `context`.
    public static func binding(for key: Key, in context: KeyContext) -> KeyBinding? {
        table.first { $0.contexts.contains(context) && $0.keys.match(key) }
    }

    /// The key legend for what `app` shows: its context's legend entries in
    /// table order, two spaces apart.
    public static func legend(for app: AppModel) -> String {
        legendEntries(for: app).joined(separator: "  ")
    }

    /// The legend entries for what `app` shows, in table order
    /// (``Layout/fitLegend(_:width:)`` drops some on a narrow screen).
    public static func legendEntries(for app: AppModel) -> [String] {
        let context = KeyContext(app)
        return table.filter { $0.contexts.contains(context) }.compactMap { $0.legend?.text(for: app) }
            .filter { !$0.isEmpty }
    }

    /// Whether the dialog showing asks what to do with an editor's unsaved
    /// edits (`y` save, `d` discard, `n`/Esc keep editing).
    static func asksToLeaveEditor(_ app: AppModel) -> Bool {
        guard case .confirm(let dialog) = app.overlay, case .leaveEditor = dialog.purpose else { return false }
        return true
    }

    /// Whether the dialog showing asks what to do with edits of an item
    /// that changed elsewhere (`y` write over, `r` reload, `n`/Esc keep editing).
    static func asksAboutChanges(_ app: AppModel) -> Bool {
        guard case .confirm(let dialog) = app.overlay, case .saveOverChanges = dialog.purpose else { return false }
        return true
    }

    /// Whether the dialog showing asks which version of a conflicting item
    /// to keep (`y` this vault's, `r` the other one, `n`/Esc neither).
    static func asksToResolve(_ app: AppModel) -> Bool {
        guard case .confirm(let dialog) = app.overlay, case .resolveConflict = dialog.purpose else { return false }
        return true
    }
}
