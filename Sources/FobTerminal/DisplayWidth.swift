import CNcurses
@preconcurrency import Glibc

/// Measures text in terminal cells, one grapheme cluster at a time, with the
/// C library's `wcwidth` under the process's `LC_CTYPE`.
///
/// A cluster takes the width of its first scalar; the marks that follow it
/// (combining accents, variation selectors, zero-width joiners) add nothing,
/// except that U+FE0F (emoji presentation) makes an emoji two cells wide.
/// So `café` (with `é` precomposed or as `e` + U+0301) is 4 cells, `密码` 4,
/// and `🔑` 2.
public enum DisplayWidth {
    /// The cells a cluster takes on screen, or `nil` when the terminal cannot
    /// show it (a control character, a lone combining mark, or anything the
    /// locale does not know: everything non-ASCII under `LANG=C`).
    /// - Parameter cluster: one grapheme cluster.
    /// - Returns: 1 or 2, or `nil`.
    public static func cells(of cluster: Character) -> Int? {
        let scalars = cluster.unicodeScalars
        guard let first = scalars.first else { return nil }
        let value = first.value
        if value < 0x20 || value == 0x7F { return nil }
        if value < 0x7F { return 1 }
        let width = Int(fob_wcwidth(value))
        guard width > 0 else { return nil }
        if width == 1, first.properties.isEmoji, scalars.contains(where: { $0.value == 0xFE0F }) {
            return 2
        }
        return min(width, 2)
    }

    /// The cells `text` takes after ``Glyphs/displayable(_:)`` replaced what
    /// cannot be shown: the same in either glyph set, since a replacement
    /// takes one cell as every cluster without a width is counted.
    /// - Parameter text: any text.
    public static func cells(of text: String) -> Int {
        // Printable ASCII is one cell a byte: no grapheme breaking needed.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        var total = 0
        for cluster in text { total += cells(of: cluster) ?? 1 }
        return total
    }
}

/// The few symbols the screens draw, in a UTF-8 form and an ASCII form for
/// terminals whose locale is not UTF-8.
public struct Glyphs: Sendable, Equatable {
    /// One per masked character.
    public var mask: Character
    /// The end of a cut value.
    public var ellipsis: Character
    /// Stands for a cluster that cannot be shown.
    public var replacement: Character
    /// Box lines: horizontal and vertical.
    public var horizontal: Character, vertical: Character
    /// Box corners.
    public var topLeft: Character, topRight: Character, bottomLeft: Character, bottomRight: Character
    /// Marks the selected row of a list.
    public var pointer: Character
    /// Whether the locale can show text beyond ASCII.
    public var unicode: Bool
    /// Whether the screens' own symbols (`✓ ✗ ▸ • … ● ↓ ↑ ⏎ ·`) are drawn as
    /// ASCII stand-ins (``asciiSymbol(for:)``): on a terminal whose font lacks
    /// them (the Linux console, `TERM=linux`) or a locale that is not UTF-8.
    public var asciiSymbols: Bool = false

    /// Symbols for a UTF-8 locale: `•`, `…`, U+FFFD, box drawing.
    public static let unicodeSet = Glyphs(
        mask: "•", ellipsis: "…", replacement: "\u{FFFD}",
        horizontal: "─", vertical: "│", topLeft: "┌", topRight: "┐",
        bottomLeft: "└", bottomRight: "┘", pointer: "▸", unicode: true)
    /// Symbols for any other locale: `*`, `~`, `?`, `-`, `|`, `+`.
    public static let asciiSet = Glyphs(
        mask: "*", ellipsis: "~", replacement: "?",
        horizontal: "-", vertical: "|", topLeft: "+", topRight: "+",
        bottomLeft: "+", bottomRight: "+", pointer: ">", unicode: false, asciiSymbols: true)
    /// Symbols for the Linux console (`TERM=linux`) under a UTF-8 locale: its
    /// fonts hold the box-drawing lines and Latin text but not the symbols,
    /// which get their ASCII stand-ins (`+ x > * ~ * v ^ | -`).
    public static let consoleSet = Glyphs(
        mask: "*", ellipsis: "~", replacement: "?",
        horizontal: "─", vertical: "│", topLeft: "┌", topRight: "┐",
        bottomLeft: "└", bottomRight: "┘", pointer: ">", unicode: true, asciiSymbols: true)

    /// The set for the process's `LC_CTYPE` (call `setlocale` first) and
    /// the terminal named by `TERM`.
    /// - Parameter term: the `TERM` variable (`linux` is the kernel console).
    public static func current(term: String?) -> Glyphs {
        guard let codeset = nl_langinfo(Int32(CODESET)) else { return asciiSet }
        let name = String(cString: codeset).uppercased()
        return select(utf8: name == "UTF-8" || name == "UTF8", term: term)
    }

    /// The set for a locale that is UTF-8 (`utf8`) or not, on terminal `term`:
    /// ASCII for a non-UTF-8 locale, ``consoleSet`` for the Linux console
    /// (`linux`, `linux-16color`…), else ``unicodeSet``.
    public static func select(utf8: Bool, term: String?) -> Glyphs {
        guard utf8 else { return asciiSet }
        let console = term == "linux" || term?.hasPrefix("linux-") == true
        return console ? consoleSet : unicodeSet
    }

    /// The ASCII stand-in for one of the screens' symbols, `nil` for any other cluster.
    /// - Parameter cluster: one grapheme cluster.
    public static func asciiSymbol(for cluster: Character) -> Character? {
        switch cluster {
        case "✓": return "+"
        case "✗", "×": return "x"
        case "▸", "→": return ">"
        case "•", "●": return "*"
        case "…": return "~"
        case "↓": return "v"
        case "↑": return "^"
        case "⏎": return "|"
        case "·", "—": return "-"
        case "─": return "-"
        case "│": return "|"
        case "\u{201C}", "\u{201D}": return "\""
        default: return nil
        }
    }

    /// `cluster` if the terminal can show it, else its ASCII stand-in or the
    /// replacement; and its width.
    /// - Parameter cluster: one grapheme cluster.
    /// - Returns: the cluster to draw and its cells (1 or 2).
    public func displayable(_ cluster: Character) -> (Character, Int) {
        if asciiSymbols, let stand = Self.asciiSymbol(for: cluster) {
            // Box lines stay where the font has them (the console's).
            if unicode, cluster == "─" || cluster == "│" { return (cluster, 1) }
            return (stand, 1)
        }
        if !unicode, !cluster.isASCII { return (replacement, 1) }
        if let w = DisplayWidth.cells(of: cluster) { return (cluster, w) }
        return (replacement, 1)
    }
}

/// Cutting text to a width in cells.
public enum TextFit {
    /// `text` cut to at most `width` cells, ending in the ellipsis when it was
    /// cut; clusters the terminal cannot show are replaced first.
    /// - Parameters:
    ///   - text: any text.
    ///   - width: the cells available (0 or more).
    ///   - glyphs: the symbols in use.
    /// - Returns: the clusters to draw with their widths; their sum is at most `width`.
    public static func fit(_ text: String, width: Int, glyphs: Glyphs) -> [(Character, Int)] {
        guard width > 0 else { return [] }
        var out: [(Character, Int)] = []
        var used = 0
        var cut = false
        for cluster in text {
            let (shown, w) = glyphs.displayable(cluster)
            if used + w > width {
                cut = true
                break
            }
            out.append((shown, w))
            used += w
        }
        guard cut else { return out }
        // Make room for the one-cell ellipsis.
        while used + 1 > width, let last = out.popLast() { used -= last.1 }
        out.append((glyphs.ellipsis, 1))
        return out
    }

    /// The result of ``fit(_:width:glyphs:)`` as a string.
    public static func truncate(_ text: String, width: Int, glyphs: Glyphs) -> String {
        String(fit(text, width: width, glyphs: glyphs).map(\.0))
    }
}
