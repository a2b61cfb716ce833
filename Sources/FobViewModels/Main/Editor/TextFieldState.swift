import FobStore
import FoundationEssentials

/// Where a cursor move goes in a ``TextFieldState``.
public enum CursorMove: Sendable, Equatable {
    /// One character left.
    case left
    /// One character right.
    case right
    /// Before the first character; in a field of several lines, the start
    /// of the cursor's line, and from there the first character.
    case home
    /// After the last character; in a field of several lines, the end of
    /// the cursor's line, and from there after the last character.
    case end
    /// The line above, at the same column (or its end), in a field of
    /// several lines (the Notes field); nothing in a one-line field.
    case lineUp
    /// The line below, as ``lineUp``.
    case lineDown
}

/// An editable one-line text field whose contents can be wiped: the text
/// lives as UTF-8 bytes in one buffer that is zeroed whenever bytes are
/// removed, the buffer grows, the field is cleared, and when the field goes
/// away.
///
/// The cursor and every edit work in whole characters (extended grapheme
/// clusters), so a masked field shows one `•` per character and
/// ``deleteBackward()`` removes "é" or "👍🏽" at once.
///
/// A reference type on purpose: copies of the bytes would escape wiping.
/// Use one instance from one thread.
///
/// - Important: ``text`` returns a `String` copy that cannot be wiped; for
///   a secure field, take the value with ``secret()``.
public final class TextFieldState {
    /// Whether the field holds a secret: shown masked unless revealed.
    public let isSecure: Bool
    /// The most UTF-8 bytes the field accepts; more input is ignored.
    public let maxBytes: Int
    /// Whether the field keeps line breaks (the Notes field); one-line fields drop them.
    public let allowsLineBreaks: Bool
    /// How many line breaks typed or pasted text held that this one-line
    /// field dropped since ``takeDroppedLineBreaks()`` (so the screen can say so).
    public private(set) var droppedLineBreaks = 0
    /// Whether a secure field currently shows its characters.
    public private(set) var isRevealed = false
    /// The cursor position, in characters from the start (0...``count``).
    public private(set) var cursor = 0
    /// Whether the whole text is selected (Ctrl-F on the query): the next
    /// typed text or delete replaces it, a cursor move keeps it.
    public private(set) var isAllSelected = false

    /// UTF-8 bytes; spare capacity is always zeroed.
    private var bytes: [UInt8] = []
    /// The UTF-8 length of each character, in order.
    private var lengths: [Int] = []

    /// The mask character shown for each character of a secure field.
    public static let maskCharacter: Character = "•"

    /// Creates a field.
    /// - Parameters:
    ///   - secure: whether the field holds a secret (masked, wiped).
    ///   - text: initial contents (for plain fields).
    ///   - maxBytes: the most UTF-8 bytes accepted; default 65,536.
    ///   - allowsLineBreaks: keep `\n` (and `\r\n`, `\r` as `\n`) in the text.
    public init(secure: Bool = false, text: String = "", maxBytes: Int = 65_536, allowsLineBreaks: Bool = false) {
        isSecure = secure
        self.maxBytes = maxBytes
        self.allowsLineBreaks = allowsLineBreaks
        bytes.reserveCapacity(64)
        if !text.isEmpty { insert(text) }
    }

    deinit { wipeStorage() }

    /// The number of characters.
    public var count: Int { lengths.count }
    /// Whether the field holds no characters.
    public var isEmpty: Bool { lengths.isEmpty }
    /// The number of UTF-8 bytes held.
    public var byteCount: Int { bytes.count }

    /// The contents as text.
    /// - Important: the `String` cannot be wiped; for secure fields use ``secret()``.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// A copy of the bytes in protected memory.
    public func secret() -> SecretBytes { SecretBytes(bytes) }

    /// Inserts `string` at the cursor and moves the cursor after it.
    ///
    /// Control characters (tabs, escapes) are dropped, and so are line
    /// breaks unless ``allowsLineBreaks`` (each counted in
    /// ``droppedLineBreaks``), so a pasted line ending does not become part
    /// of a password unnoticed. A combining mark
    /// typed after a character joins that character. Input beyond
    /// ``maxBytes`` is ignored.
    /// - Parameter string: typed or pasted text.
    public func insert(_ string: String) {
        for var character in string {
            if character == "\n" || character == "\r\n" || character == "\r" {
                guard allowsLineBreaks else {
                    droppedLineBreaks += 1
                    continue
                }
                character = "\n"
            } else if character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                continue
            }
            var encoded = Array(String(character).utf8)
            defer { encoded.wipe() }
            guard bytes.count + encoded.count <= maxBytes else { return }
            insertCharacter(encoded)
        }
    }

    /// The count of dropped line breaks, reset to zero.
    public func takeDroppedLineBreaks() -> Int {
        defer { droppedLineBreaks = 0 }
        return droppedLineBreaks
    }

    /// The warning that `count` line breaks were dropped from a one-line field, or `nil` for none.
    static func droppedNote(_ count: Int) -> StatusLine? {
        guard count > 0 else { return nil }
        return .warning("Dropped \(count) line break\(count == 1 ? "" : "s"): this field holds one line")
    }

    /// Deletes the whole character before the cursor, if any.
    public func deleteBackward() {
        guard cursor > 0 else { return }
        removeCharacter(at: cursor - 1)
        cursor -= 1
    }

    /// Deletes the whole character after the cursor, if any.
    public func deleteForward() {
        guard cursor < count else { return }
        removeCharacter(at: cursor)
    }

    /// Moves the cursor.
    public func moveCursor(_ move: CursorMove) {
        switch move {
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(count, cursor + 1)
        case .home:
            let start = lineStarts[cursorPosition.line]
            cursor = cursor == start ? 0 : start
        case .end:
            let starts = lineStarts
            let line = cursorPosition.line
            let end = line + 1 < starts.count ? starts[line + 1] - 1 : count
            cursor = cursor == end ? count : end
        case .lineUp: moveLine(-1)
        case .lineDown: moveLine(1)
        }
    }

    /// Moves the cursor `step` lines down (up when negative), keeping its
    /// column where the line is long enough, else to the line's end.
    /// - Returns: whether there was such a line (else the cursor stays).
    @discardableResult
    public func moveLine(_ step: Int) -> Bool {
        let position = cursorPosition
        let starts = lineStarts
        let target = position.line + step
        guard starts.indices.contains(target) else { return false }
        let end = target + 1 < starts.count ? starts[target + 1] - 1 : count
        cursor = min(starts[target] + position.column, end)
        return true
    }

    /// The cursor's line (0 for the first) and column, in characters.
    public var cursorPosition: (line: Int, column: Int) {
        let starts = lineStarts
        let line = (starts.lastIndex { $0 <= cursor } ?? 0)
        return (line, cursor - starts[line])
    }

    /// Where each line starts, in characters: 0, then after each line break.
    private var lineStarts: [Int] {
        var starts = [0]
        guard allowsLineBreaks else { return starts }
        for (index, character) in text.enumerated() where character == "\n" { starts.append(index + 1) }
        return starts
    }

    /// Selects the whole text (when there is any), so that the next typed
    /// text replaces it.
    public func selectAll() { isAllSelected = !isEmpty }

    /// Wipes and empties the field and hides it again.
    public func clear() {
        isAllSelected = false
        wipeStorage()
        bytes.removeAll(keepingCapacity: true)
        lengths.removeAll()
        cursor = 0
        isRevealed = false
    }

    /// Replaces the contents with `text` (cursor at the end).
    public func setText(_ text: String) {
        clear()
        insert(text)
    }

    /// Shows or hides the characters of a secure field (no effect on plain fields).
    public func toggleReveal() {
        if isSecure { isRevealed.toggle() }
    }

    /// Hides the characters again.
    public func hide() { isRevealed = false }

    // MARK: - Storage

    private func byteOffset(ofCharacter index: Int) -> Int {
        // Typing and pasting append at the end: keep that O(1).
        if index == lengths.count { return bytes.count }
        return lengths[..<index].reduce(0, +)
    }

    private func insertCharacter(_ encoded: [UInt8]) {
        let offset = byteOffset(ofCharacter: cursor)
        ensureCapacity(bytes.count + encoded.count)
        bytes.insert(contentsOf: encoded, at: offset)
        // A combining mark (or other extender) joins the character before it.
        if cursor > 0 {
            let previousStart = offset - lengths[cursor - 1]
            let joined = String(decoding: bytes[previousStart..<(offset + encoded.count)], as: UTF8.self)
            if joined.count == 1 {
                lengths[cursor - 1] += encoded.count
                return
            }
        }
        lengths.insert(encoded.count, at: cursor)
        cursor += 1
    }

    private func removeCharacter(at index: Int) {
        let start = byteOffset(ofCharacter: index)
        let length = lengths[index]
        let total = bytes.count
        bytes.withUnsafeMutableBufferPointer { buffer in
            var i = start
            while i + length < total {
                buffer[i] = buffer[i + length]
                i += 1
            }
            for j in (total - length)..<total { buffer[j] = 0 }
        }
        bytes.removeLast(length)
        lengths.remove(at: index)
    }

    /// Grows the buffer by copying into a new one and wiping the old, so no
    /// stale copy is left behind by a reallocation.
    private func ensureCapacity(_ needed: Int) {
        guard needed > bytes.capacity else { return }
        var grown: [UInt8] = []
        grown.reserveCapacity(max(needed, bytes.capacity * 2, 64))
        grown.append(contentsOf: bytes)
        wipeStorage()
        bytes = grown
    }

    private func wipeStorage() {
        bytes.wipe()
    }
}

extension TextFieldState {
    /// Applies an editing action (typing, deleting, moving the cursor,
    /// clearing, revealing) to this field.
    /// - Returns: whether `action` was an editing action.
    func apply(_ action: Action) -> Bool {
        if isAllSelected {
            // Typing replaces the selected text; a delete takes it all.
            isAllSelected = false
            switch action {
            case .insert: clear()
            case .deleteBackward, .deleteForward:
                clear()
                return true
            default: break
            }
        }
        switch action {
        case .insert(let text): insert(text)
        case .deleteBackward: deleteBackward()
        case .deleteForward: deleteForward()
        case .moveCursor(let move): moveCursor(move)
        case .clearField: clear()
        case .toggleReveal: toggleReveal()
        default: return false
        }
        return true
    }
}
