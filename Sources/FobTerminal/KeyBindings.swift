import FobStore
import FobViewModels

/// Where a key binding applies: what the app shows, as far as keys go.
public enum KeyContext: Sendable, Equatable, CaseIterable {
    /// The terminal is below ``Renderer/minimumColumns`` × ``Renderer/minimumRows``.
    case tooSmall
    /// The help overlay.
    case help
    /// The help overlay's search field (after `/`): typing goes to it.
    case helpSearch
    /// The message history overlay.
    case messages
    /// A confirmation dialog.
    case confirm
    /// The logout review (F8): a list to tick, then Enter or Esc.
    case logoutReview
    /// The dialog of a consent question (F3).
    case consent
    /// The access log view (F4): typing narrows it.
    case accessLog
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
    /// The form's Programs rows (the access rule's programs) have focus:
    /// Up/Down select one, Delete removes it.
    case programs
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
            case .help: self = app.help.field == nil ? .help : .helpSearch
            case .messages: self = .messages
            case .confirm: self = .confirm
            case .logoutReview: self = .logoutReview
            case .consent: self = .consent
            case .accessLog: self = .accessLog
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
            case .kind, .fieldHidden, .accessMode, .accessForwarded: return .choice
            case .accessPrograms: return .programs
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
        /// Mouse clicks and wheel turns.
        case mouse

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
            case .mouse:
                switch key {
                case .click, .wheel: return true
                default: return false
                }
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
        /// The preview as last drawn: its rows, how many show at once, the
        /// first in view (``Renderer/previewRows``).
        public let previewRows: (rows: Int, room: Int, first: Int)

        /// Where the mouse reaches the list and the preview as last drawn.
        public let pointer: PointerAreas

        /// What `app` shows, with pages of `pageRows` list rows, a help of
        /// `helpPages` pages, the preview drawn as `previewRows` says and
        /// the mouse's reach `pointer`.
        public init(
            app: AppModel, pageRows: Int, helpPages: Int = 1,
            previewRows: (rows: Int, room: Int, first: Int) = (0, 0, 0), pointer: PointerAreas = PointerAreas()
        ) {
            self.app = app
            self.pageRows = pageRows
            self.helpPages = helpPages
            self.previewRows = previewRows
            self.pointer = pointer
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

/// The one table of key bindings. The key map (``KeyMap``) and the key legend on the bottom line
/// (``legend(for:)``) are read from it; the help overlay's text is ``HelpSections`` (docs/tui.md).
/// In a context the first row holding a key decides it; the legend lists its rows in table order.
public enum KeyBindings {
    /// Every binding.
    public static let table: [KeyBinding] = bound + listKeysInEditor(after: bound)

    /// Every binding but the editor's answer to the list's other keys.
    private static let bound: [KeyBinding] =
        tooSmall + HelpKeys.table + overlays + generator + setup + filter + list + form + editing

    /// Where the editor (the item form) has focus.
    static let editorContexts: [KeyContext] = [.field, .button, .choice, .generatorRow, .programs]

    /// With the terminal too small only Ctrl-Q (and F10) means something.
    private static let tooSmall: [KeyBinding] = [
        KeyBinding([.control("q"), .function(10)], in: [.tooSmall], .quit)
    ]

    /// The message history and confirmation dialogs.
    private static let overlays: [KeyBinding] = [
        KeyBinding(.any, in: [.messages], legend: .text("any key closes the messages")) { _, _ in .dismiss },
        // A dialog's answers are keys no typed word gives: Enter, Esc, Ctrl-.
        KeyBinding(.these([.enter]), in: [.confirm], legend: .computed { answer(0, $0) }) { _, _ in .confirm },
        KeyBinding(.these([.control("d")]), in: [.confirm], legend: .computed { secondAnswer("Ctrl-D", $0) }) {
            _, _ in .discardEdits
        },
        KeyBinding(.these([.control("o")]), in: [.confirm], legend: .computed { secondAnswer("Ctrl-O", $0) }) {
            _, _ in .keepOtherVersion
        },
        // Ctrl-L on the lock question and Ctrl-Q on the quit question: the
        // same key again answers yes (lock; lock and quit).
        KeyBinding(.these([.control("l")]), in: [.confirm]) { _, situation in
            asks(.lock, situation.app) ? .confirm : .dismiss
        },
        KeyBinding(.these([.control("q")]), in: [.confirm], legend: .computed { secondAnswer("Ctrl-Q", $0) }) {
            _, situation in asks(.quitLeavingUnlocked, situation.app) ? .lockAndQuit : .dismiss
        },
        KeyBinding(.these([.escape]), in: [.confirm], legend: .computed { lastAnswer($0) }) { _, _ in .dismiss },
        // The resolve dialog reveals both versions' passwords, as Ctrl-R does elsewhere.
        KeyBinding(.these([.control("r")]), in: [.confirm], legend: .computed(conflictRevealLegend)) { _, _ in
            .toggleReveal
        },
        // The consent dialog opens only on F3, so no word meant for the search answers it.
        KeyBinding([.character("t")], in: [.consent], .answerRequest(.untilLock), legend: "t until lock"),
        KeyBinding([.character("o")], in: [.consent], .answerRequest(.once), legend: "o once"),
        KeyBinding(.these([.character("m")]), in: [.consent], legend: .computed(leaseLegend)) { _, _ in
            .answerRequest(.minutes)
        },
        KeyBinding([.character("a")], in: [.consent], .answerRequest(.always), legend: "a always"),
        KeyBinding([.character("d")], in: [.consent], .answerRequest(.deny), legend: "d deny"),
        KeyBinding([.escape], in: [.consent], .dismiss, legend: "Esc later"),
        // The access log: typing narrows it, as in the list.
        KeyBinding(.text, in: [.accessLog], legend: .text("type to find")) { key, _ in insert(key) },
        KeyBinding([.down, .control("n")], in: [.accessLog], .moveSelection(1), legend: "Up/Down move"),
        KeyBinding([.up, .control("p")], in: [.accessLog], .moveSelection(-1)),
        KeyBinding(.these([.pageDown]), in: [.accessLog]) { _, situation in .moveSelection(max(situation.pageRows, 1))
        },
        KeyBinding(.these([.pageUp]), in: [.accessLog]) { _, situation in .moveSelection(-max(situation.pageRows, 1)) },
        KeyBinding([.end], in: [.accessLog], .moveSelection(farthest)),
        KeyBinding([.home], in: [.accessLog], .moveSelection(-farthest)),
        KeyBinding([.enter], in: [.accessLog], .submit, legend: "Enter details"),
        KeyBinding([.backspace], in: [.accessLog], .deleteBackward),
        KeyBinding([.left], in: [.accessLog], .moveCursor(.left)),
        KeyBinding([.right], in: [.accessLog], .moveCursor(.right)),
        KeyBinding([.control("u")], in: [.accessLog], .clearField),
        KeyBinding([.escape], in: [.accessLog], .cancel, legend: "Esc clear/close"),
        KeyBinding([.function(4)], in: [.accessLog], .showAccessLog, legend: "F4 close"),
        KeyBinding(
            .these([.down, .control("n")]), in: [.logoutReview], legend: .computed(tickingLegend("Up/Down move"))
        ) {
            _, _ in .moveSelection(1)
        },
        KeyBinding([.up, .control("p")], in: [.logoutReview], .moveSelection(-1)),
        KeyBinding(.these([.pageDown]), in: [.logoutReview]) { _, situation in
            .moveSelection(max(situation.pageRows, 1))
        },
        KeyBinding(.these([.pageUp]), in: [.logoutReview]) { _, situation in .moveSelection(-max(situation.pageRows, 1))
        },
        KeyBinding(.these([.character(" ")]), in: [.logoutReview], legend: .computed(tickingLegend("Space tick"))) {
            _, _ in .cycleKind(1)
        },
        KeyBinding(.these([.enter]), in: [.logoutReview], legend: .computed(logoutEnterLegend)) { _, _ in .confirm },
        KeyBinding([.escape], in: [.logoutReview], .dismiss, legend: "Esc cancel"),
    ]

    /// Where Alt-G opens the generator dialog: the list and the whole form.
    private static let mainContexts: [KeyContext] = [.list] + editorContexts

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
        KeyBinding([.escape, .control("q")], in: [.createVault, .unlock], .quit, legend: "Esc quit"),
    ]

    /// The farthest a selection moves (Home and End in the list).
    private static let farthest = Int(Int32.max)

    /// The item list. Typed text (space included) goes to the query, so every command is a key no
    /// typed word gives: Enter, Ctrl-, function keys, Delete (KeePassXC's Ctrl-B, Ctrl-T, Ctrl-E,
    /// Ctrl-L; fzf's Ctrl-N, Ctrl-P); what deletes, wipes or locks asks first.
    private static let list: [KeyBinding] = [
        KeyBinding(.text, in: [.list], legend: .text("type to find")) { key, _ in insert(key) },
        // The keys that act on the highlighted item are offered only while one is highlighted.
        KeyBinding(.these([.enter]), in: [.list], legend: onItem("Enter copy")) { _, _ in .submit },
        // At 80 columns the legend keeps these first four with help and quit.
        KeyBinding(.these([.control("e")]), in: [.list], legend: onItem("Ctrl-E edit")) { _, _ in .editSelected },
        KeyBinding(.these([.delete]), in: [.list], legend: onItem("Del delete")) { _, _ in .askDeleteSelected },
        KeyBinding(.these([.control("b")]), in: [.list], legend: onItem("Ctrl-B user")) { _, _ in .copyUserID },
        KeyBinding(.these([.control("t")]), in: [.list], legend: onItem("Ctrl-T code")) { _, _ in .copyOneTimeCode },
        KeyBinding([.control("o")], in: [.list], .newItem, legend: "Ctrl-O new"),
        KeyBinding([.control("l")], in: [.list], .askLock, legend: "Ctrl-L lock"),
        KeyBinding([.down, .control("n")], in: [.list, .filter], .moveSelection(1), legend: "Up/Down move"),
        KeyBinding([.up, .control("p")], in: [.list, .filter], .moveSelection(-1)),
        KeyBinding(.these([.pageDown]), in: [.list, .filter]) { _, situation in
            .moveSelection(max(situation.pageRows, 1))
        },
        KeyBinding(.these([.pageUp]), in: [.list, .filter]) { _, situation in
            .moveSelection(-max(situation.pageRows, 1))
        },
        // The preview scrolls by keys no typed word gives: a line with Shift-Up/Down, a page with Shift-PgUp/PgDn.
        KeyBinding(.these([.shiftDown, .shiftUp, .shiftPageDown, .shiftPageUp]), in: [.list, .filter]) {
            key, situation in
            let page = max(1, situation.previewRows.room - 2)
            let step: Int
            switch key {
            case .shiftDown: step = 1
            case .shiftUp: step = -1
            case .shiftPageDown: step = page
            default: step = -page
            }
            // From the offset the model holds (keys in one burst come before the next draw),
            // within the rows and room of the last draw.
            var drawn = situation.previewRows
            drawn.first = situation.app.mainModel?.previewOffset ?? drawn.first
            return .scrollPreview(to: Renderer.previewOffset(drawn, by: step))
        },
        // The mouse: a click on a row highlights it; the wheel moves the
        // highlight over the list and scrolls the preview over the preview.
        KeyBinding(.mouse, in: [.list, .filter]) { key, situation in situation.pointer.action(for: key, in: situation)
        },
        KeyBinding([.end], in: [.list], .moveSelection(farthest)),
        KeyBinding([.home], in: [.list], .moveSelection(-farthest)),
        KeyBinding([.control("y")], in: [.list], .undo, legend: "Ctrl-Y undo"),
        KeyBinding([.control("f")], in: [.list], .selectQuery),
        KeyBinding([.function(5)], in: [.list], .refreshSelected),
        KeyBinding([.function(6)], in: [.list], .resolveSelected),
        KeyBinding([.function(8)], in: [.list], .logoutWipe(service: nil), legend: "F8 logout"),
        KeyBinding([.tab], in: [.list, .filter], .focusNext),
        KeyBinding([.backTab], in: [.list, .filter], .focusPrevious),
        KeyBinding([.control("r")], in: [.list, .filter], .toggleReveal, legend: "Ctrl-R reveal"),
        KeyBinding([.escape], in: [.list], .cancel, legend: "Esc clear"),
        KeyBinding([.backspace], in: [.list], .deleteBackward),
        KeyBinding([.left], in: [.list], .moveCursor(.left)),
        KeyBinding([.right], in: [.list], .moveCursor(.right)),
        KeyBinding([.control("u")], in: [.list], .clearField),
        KeyBinding([.function(2)], in: [.list], .showMessages, legend: "F2 messages"),
        KeyBinding(.these([.function(3)]), in: [.list, .filter], legend: .computed(requestLegend)) { _, _ in
            .openRequest
        },
        KeyBinding([.function(4)], in: [.list, .filter], .showAccessLog, legend: "F4 log"),
        KeyBinding([.function(1)], in: [.list, .filter], .showHelp, legend: "F1 help"),
        KeyBinding([.control("q"), .function(10)], in: [.list, .filter], .askQuit, legend: "Ctrl-Q quit"),
        // The list's keys not about its highlighted item work from every pane: a new item (unsaved
        // edits are asked about first), the lock and the logout wipe (both ask), messages, log, request.
        KeyBinding([.control("o")], in: [.filter] + editorContexts, .newItem),
        KeyBinding([.control("l")], in: [.filter] + editorContexts, .askLock),
        KeyBinding([.function(8)], in: [.filter] + editorContexts, .logoutWipe(service: nil)),
        KeyBinding([.function(2)], in: [.filter] + editorContexts, .showMessages),
        KeyBinding(.these([.function(3)]), in: editorContexts, legend: .computed(requestLegend)) { _, _ in .openRequest
        },
        KeyBinding([.function(4)], in: editorContexts, .showAccessLog),
        // Undo from the editor too, as the message after a Save offers it (the editor shows the item as it was).
        KeyBinding([.control("y")], in: editorContexts, .undo),
        KeyBinding([.control("r")], in: [.programs], .toggleReveal),
    ]

    /// The list's other keys in the editor, where no row binds them: they act on the list's
    /// highlighted item, so there they change nothing and say so (``Action/listKeyInEditor(_:)``).
    private static func listKeysInEditor(after rows: [KeyBinding]) -> [KeyBinding] {
        let listKeys = rows.filter { $0.contexts.contains(.list) }.flatMap { row -> [Key] in
            guard case .these(let keys) = row.keys else { return [] }
            return keys
        }
        return editorContexts.map { context in
            let free = listKeys.filter { key in !rows.contains { $0.contexts.contains(context) && $0.keys.match(key) } }
            return KeyBinding(.these(free), in: [context]) { key, _ in .listKeyInEditor(key.name) }
        }
    }

    /// The query with its text selected (Ctrl-F): typing replaces it (its
    /// other editing keys are in ``editing``).
    private static let filter: [KeyBinding] = [
        KeyBinding(.text, in: [.filter], legend: .text("type to replace")) { key, _ in insert(key) },
        KeyBinding([.enter], in: [.filter], .submit, legend: "Enter keep"),
        KeyBinding([.escape], in: [.filter], .cancel, legend: "Esc clear"),
    ]

    /// The Home form's fields and buttons (the fields' editing keys are in ``editing``).
    private static let form: [KeyBinding] = [
        KeyBinding(.these([.tab]), in: [.field], legend: byNotes("Tab/S-Tab leave", else: "Tab/S-Tab move")) { _, _ in
            .focusNext
        },
        // Down/Up: in Notes the next or previous line, past its last or first one (and
        // in any other field) the next or previous field.
        KeyBinding([.down], in: [.field], .moveCursor(.lineDown)),
        KeyBinding([.tab, .right, .down], in: [.button], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.backTab], in: [.field], .focusPrevious),
        KeyBinding([.up], in: [.field], .moveCursor(.lineUp)),
        KeyBinding([.backTab, .left, .up], in: [.button], .focusPrevious),
        // In Notes Enter breaks the line; Tab, Shift-Tab, and Down on the last line leave it.
        KeyBinding(.these([.enter]), in: [.field], legend: byNotes("Enter new line", else: "Enter next")) { _, _ in
            .submit
        },
        KeyBinding([.enter, .character(" ")], in: [.button], .submit, legend: "Enter press"),
        KeyBinding(
            [.control("s")], in: [.field, .button, .choice, .generatorRow], .save, legend: "Ctrl-S save"),
        // Before Ctrl-R: where the legend has room for one of them (Password
        // at 80 columns), generating is the one a new item needs.
        KeyBinding(.these([.control("g")]), in: [.field], legend: onPassword("Ctrl-G generate")) { _, _ in
            .generatePassword
        },
        KeyBinding(.these([.control("r")]), in: [.field, .button], legend: .computed(revealLegend)) { _, _ in
            .toggleReveal
        },
        KeyBinding([.control("g")], in: [.list], .generatePassword),
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
        // Left/Right change a choice; a space typed into the form does not (no key changes data by surprise).
        KeyBinding([.right], in: [.choice], .cycleKind(1), legend: "Left/Right change"),
        KeyBinding([.left], in: [.choice], .cycleKind(-1)),
        KeyBinding([.enter], in: [.choice], .submit),
        KeyBinding([.tab, .down], in: [.choice], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.backTab, .up], in: [.choice], .focusPrevious),
        KeyBinding([.control("r")], in: [.choice], .toggleReveal),
        KeyBinding([.escape], in: [.choice], .cancel, legend: "Esc list"),
        KeyBinding([.delete, .backspace], in: [.programs], .removeProgram, legend: "Del remove"),
        KeyBinding([.down], in: [.programs], .moveSelection(1), legend: "Up/Down select"),
        KeyBinding([.up], in: [.programs], .moveSelection(-1)),
        KeyBinding([.tab], in: [.programs], .focusNext, legend: "Tab/S-Tab move"),
        KeyBinding([.backTab], in: [.programs], .focusPrevious),
        KeyBinding([.control("s")], in: [.programs], .save, legend: "Ctrl-S save"),
        KeyBinding([.escape], in: [.programs], .cancel, legend: "Esc list"),
        KeyBinding([.function(1)], in: editorContexts, .showHelp, legend: "F1 help"),
        // Quit from the editor too, as its legend says: unsaved edits are asked about first
        // (save, discard, keep editing).
        KeyBinding([.control("q"), .function(10)], in: editorContexts, .askQuit, legend: "Ctrl-Q quit"),
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

    /// Whether the dialog showing has `purpose`.
    static func asks(_ purpose: ConfirmDialog.Purpose, _ app: AppModel) -> Bool {
        guard case .confirm(let dialog) = app.overlay else { return false }
        return dialog.purpose == purpose
    }

    /// The answers of the dialog showing (``ConfirmDialog/answers``).
    private static func answers(_ app: AppModel) -> [String] {
        guard case .confirm(let dialog) = app.overlay else { return [] }
        return dialog.answers
    }

    /// The `index`th answer of the dialog showing, lower case, for the legend.
    @Sendable private static func answer(_ index: Int, _ app: AppModel) -> String {
        let all = answers(app)
        guard all.indices.contains(index) else { return "" }
        let parts = all[index].split(separator: " ", maxSplits: 1)
        return parts.count == 2 ? "\(parts[0]) \(parts[1].lowercased())" : all[index]
    }

    /// The dialog's second answer when it is given by `key` (`Ctrl-D`), else nothing.
    @Sendable private static func secondAnswer(_ key: String, _ app: AppModel) -> String {
        let all = answers(app)
        guard all.count == 3, all[1].hasPrefix(key + " ") else { return "" }
        return answer(1, app)
    }

    /// F3's legend while a consent question waits, else nothing.
    @Sendable private static func requestLegend(_ app: AppModel) -> String {
        app.mainModel?.consent.bar == nil ? "" : "F3 answer request"
    }

    /// Enter's legend in the logout review: it deletes, or with nothing to delete only locks.
    @Sendable private static func logoutEnterLegend(_ app: AppModel) -> String {
        app.mainModel?.logoutReview?.rows.isEmpty == true ? "Enter lock" : "Enter delete"
    }

    /// A legend entry of the logout review that names `text` only while it has rows to tick.
    private static func tickingLegend(_ text: String) -> @Sendable (AppModel) -> String {
        { app in app.mainModel?.logoutReview?.rows.isEmpty == false ? text : "" }
    }

    /// The lease answer's legend, with its length.
    @Sendable private static func leaseLegend(_ app: AppModel) -> String {
        guard let prompt = app.mainModel?.consent.dialog else { return "m minutes" }
        return "m \(prompt.leaseShortText)"
    }

    /// Ctrl-R's legend in the resolve dialog of a sync conflict, else nothing.
    @Sendable private static func conflictRevealLegend(_ app: AppModel) -> String {
        guard case .confirm(let dialog) = app.overlay, case .resolveConflict = dialog.purpose else { return "" }
        return app.mainModel?.conflictVersions?.secrets == nil ? "Ctrl-R reveal" : "Ctrl-R hide"
    }

    /// The dialog's Esc answer.
    @Sendable private static func lastAnswer(_ app: AppModel) -> String {
        answer(answers(app).count - 1, app)
    }
}
