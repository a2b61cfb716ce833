import CNcurses

/// One result of ncurses's `get_wch`: a character, or a function key code
/// (`KEY_UP`, `KEY_RESIZE`, …).
public enum RawInput: Equatable, Sendable {
    /// A character (`get_wch` returned `OK`): a Unicode scalar value.
    case character(UInt32)
    /// A function key (`get_wch` returned `KEY_CODE_YES`): an ncurses key code.
    case function(Int32)
    /// A mouse event (`KEY_MOUSE`, read with `getmouse`): its cell and its
    /// button (1 the left one pressed, 4 the wheel up, 5 the wheel down).
    case mouse(row: Int, column: Int, button: Int)
}

/// A key press (or paste) as the screens understand it.
public enum Key: Equatable, Sendable {
    /// Printable text: one grapheme cluster.
    case character(Character)
    /// Ctrl plus a letter, given in lower case (`control("r")` is Ctrl-R);
    /// Tab, Enter and Backspace have their own cases.
    case control(Character)
    /// Alt (Meta) plus a character, sent as Esc and the character. Decoded
    /// so that Alt+x never acts as Esc followed by x; no key binding uses it.
    case alt(Character)
    /// Text from a bracketed paste, markers removed, line ends as `\n`.
    case paste(String)
    /// Enter or Return (`\r`, `\n`, `KEY_ENTER`).
    case enter
    /// Tab.
    case tab
    /// Shift-Tab (`KEY_BTAB`, `ESC [Z`).
    case backTab
    /// Backspace (DEL, Ctrl-H, `KEY_BACKSPACE`).
    case backspace
    /// Delete (`KEY_DC`).
    case delete
    /// Esc pressed alone (nothing followed within the read burst).
    case escape
    /// Cursor and paging keys.
    case up, down, left, right, home, end, pageUp, pageDown
    /// Shift with Up, Down, PageUp or PageDown (the preview's scroll keys).
    case shiftUp, shiftDown, shiftPageUp, shiftPageDown
    /// The left mouse button pressed on this cell (0-based).
    case click(row: Int, column: Int)
    /// The mouse wheel turned over this cell: `down` towards the end.
    case wheel(down: Bool, row: Int, column: Int)
    /// The terminal changed size.
    case resize
    /// F1 to F12.
    case function(Int)

    /// A key as the legend and the help spell it (`Ctrl-T`, `F5`, `PgDn`).
    public var name: String {
        switch self {
        case .control(let c): return "Ctrl-" + c.uppercased()
        case .alt(let c): return "Alt-" + c.uppercased()
        case .function(let n): return "F\(n)"
        case .character(let c): return String(c)
        case .enter: return "Enter"
        case .tab: return "Tab"
        case .backTab: return "Shift-Tab"
        case .backspace: return "Backspace"
        case .delete: return "Delete"
        case .escape: return "Esc"
        case .up: return "Up"
        case .down: return "Down"
        case .left: return "Left"
        case .right: return "Right"
        case .home: return "Home"
        case .end: return "End"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .shiftUp: return "Shift-Up"
        case .shiftDown: return "Shift-Down"
        case .shiftPageUp: return "Shift-PgUp"
        case .shiftPageDown: return "Shift-PgDn"
        case .paste, .click, .wheel, .resize: return "that key"
        }
    }
}

/// Turns raw `get_wch` results into ``Key``s: printable scalars grouped
/// into grapheme clusters, Esc told apart from Alt sequences, and bracketed
/// paste (`ESC [200~` … `ESC [201~`) collected into one ``Key/paste(_:)``
/// so the markers never reach a field.
///
/// Feed every input of one read burst, then call ``flush(idle:)``.
public struct KeyDecoder: Sendable {
    private enum State: Sendable {
        case ground
        case escape
        case csi([UInt32])
        case ss3
        case paste([Unicode.Scalar])
    }

    private var state: State = .ground
    private var text = ""
    /// A paste larger than this (in scalars) is ended early rather than grow without bound.
    public static let maxPaste = 1 << 20
    private static let pasteEnd: [UInt32] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]

    /// A decoder in the ground state.
    public init() {}

    /// Whether a paste has started and not yet ended.
    public var inPaste: Bool { if case .paste = state { return true } else { return false } }

    /// Decodes one input.
    /// - Returns: the keys it completes (often none: text waits for ``flush(idle:)``).
    public mutating func feed(_ input: RawInput) -> [Key] {
        var out: [Key] = []
        switch state {
        case .paste(var buffer):
            switch input {
            case .character(let c):
                if let s = Unicode.Scalar(c) { buffer.append(s) }
                if buffer.count >= 6, buffer.suffix(6).map(\.value) == Self.pasteEnd {
                    buffer.removeLast(6)
                    state = .ground
                    out.append(.paste(Self.pasteText(buffer)))
                } else if buffer.count >= Self.maxPaste {
                    state = .ground
                    out.append(.paste(Self.pasteText(buffer)))
                } else {
                    state = .paste(buffer)
                }
            case .function(let code):
                if code == KEY_ENTER { buffer.append("\n") }
                state = .paste(buffer)
            case .mouse:
                state = .paste(buffer)
            }
            return out
        case .escape:
            if case .character(let c) = input {
                if c == 0x5B {
                    state = .csi([])
                    return out
                }
                if c == 0x4F {
                    state = .ss3
                    return out
                }
                if c >= 0x20, c != 0x7F, let s = Unicode.Scalar(c) {
                    state = .ground
                    out.append(.alt(Character(s)))
                    return out
                }
            }
            state = .ground
            out.append(.escape)
        case .csi(var params):
            if case .character(let c) = input, c >= 0x20, c <= 0x7E {
                if c >= 0x40 {
                    state = .ground
                    if let key = Self.csiKey(params: params, final: c) {
                        out.append(key)
                    } else if c == 0x7E, params == [0x32, 0x30, 0x30] {
                        state = .paste([])
                    }
                    return out
                }
                params.append(c)
                if params.count > 16 { state = .ground } else { state = .csi(params) }
                return out
            }
            // Not a control sequence after all: it was Alt-[.
            state = .ground
            out.append(.alt("["))
        case .ss3:
            state = .ground
            if case .character(let c) = input, let key = Self.ss3Key(c) {
                out.append(key)
                return out
            }
            out.append(.alt("O"))
        case .ground:
            break
        }
        out += ground(input)
        return out
    }

    /// Ends a read burst: pending text comes out as clusters and a lone Esc
    /// as ``Key/escape``. A paste or control sequence still open waits for
    /// more input unless `idle` (nothing arrived for a whole poll interval),
    /// when the paste is delivered as it stands and a partial sequence dropped.
    public mutating func flush(idle: Bool = false) -> [Key] {
        var out = takeText()
        switch state {
        case .escape:
            state = .ground
            out.append(.escape)
        case .ss3:
            state = .ground
            out.append(.alt("O"))
        case .csi:
            if idle { state = .ground }
        case .paste(let buffer):
            if idle {
                state = .ground
                out.append(.paste(Self.pasteText(buffer)))
            }
        case .ground:
            break
        }
        return out
    }

    private mutating func ground(_ input: RawInput) -> [Key] {
        switch input {
        case .mouse(let row, let column, let button):
            var out = takeText()
            switch button {
            case 1: out.append(.click(row: row, column: column))
            case 4, 5: out.append(.wheel(down: button == 5, row: row, column: column))
            default: break
            }
            return out
        case .function(let code):
            var out = takeText()
            if let key = Self.functionKey(code) { out.append(key) }
            return out
        case .character(let c):
            if c >= 0x20, c != 0x7F, !(0x80..<0xA0).contains(c), let s = Unicode.Scalar(c) {
                text.unicodeScalars.append(s)
                return []
            }
            var out = takeText()
            switch c {
            case 0x1B: state = .escape
            case 0x09: out.append(.tab)
            case 0x0A, 0x0D: out.append(.enter)
            case 0x08, 0x7F: out.append(.backspace)
            case 0x01...0x1A: out.append(.control(Character(Unicode.Scalar(c + 0x60)!)))
            default: break
            }
            return out
        }
    }

    private mutating func takeText() -> [Key] {
        guard !text.isEmpty else { return [] }
        let keys = text.map { Key.character($0) }
        text = ""
        return keys
    }

    private static func pasteText(_ scalars: [Unicode.Scalar]) -> String {
        var s = String.UnicodeScalarView()
        s.append(contentsOf: scalars)
        return String(s).replacingCRLF()
    }

    static func functionKey(_ code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_HOME, KEY_A1: return .home
        case KEY_END, KEY_C1: return .end
        case KEY_PPAGE, KEY_A3: return .pageUp
        case KEY_NPAGE, KEY_C3: return .pageDown
        case KEY_SR: return .shiftUp
        case KEY_SF: return .shiftDown
        case KEY_SPREVIOUS: return .shiftPageUp
        case KEY_SNEXT: return .shiftPageDown
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_ENTER: return .enter
        case KEY_BTAB: return .backTab
        case KEY_RESIZE: return .resize
        case KEY_F0 + 1...KEY_F0 + 12: return .function(Int(code - KEY_F0))
        default: return nil
        }
    }

    /// Sequences ncurses did not decode itself (terminfo without them).
    private static func csiKey(params: [UInt32], final: UInt32) -> Key? {
        let p = String(String.UnicodeScalarView(params.compactMap(Unicode.Scalar.init)))
        switch (p, final) {
        case ("", 0x41): return .up
        case ("", 0x42): return .down
        case ("", 0x43): return .right
        case ("", 0x44): return .left
        case ("", 0x48), ("1", 0x7E), ("7", 0x7E): return .home
        case ("", 0x46), ("4", 0x7E), ("8", 0x7E): return .end
        case ("", 0x5A): return .backTab
        case ("3", 0x7E): return .delete
        case ("5", 0x7E): return .pageUp
        case ("6", 0x7E): return .pageDown
        case ("1;2", 0x41): return .shiftUp
        case ("1;2", 0x42): return .shiftDown
        case ("5;2", 0x7E): return .shiftPageUp
        case ("6;2", 0x7E): return .shiftPageDown
        default: return nil
        }
    }

    private static func ss3Key(_ c: UInt32) -> Key? {
        switch c {
        case 0x41: return .up
        case 0x42: return .down
        case 0x43: return .right
        case 0x44: return .left
        case 0x48: return .home
        case 0x46: return .end
        case 0x4D: return .enter
        case 0x50...0x53: return .function(Int(c - 0x4F))
        default: return nil
        }
    }
}

extension String {
    /// `\r\n` and lone `\r` as `\n`.
    func replacingCRLF() -> String {
        var out = String.UnicodeScalarView()
        var previousCR = false
        for s in unicodeScalars {
            if s == "\r" {
                out.append("\n")
                previousCR = true
                continue
            }
            if s == "\n", previousCR {
                previousCR = false
                continue
            }
            previousCR = false
            out.append(s)
        }
        return String(out)
    }
}
