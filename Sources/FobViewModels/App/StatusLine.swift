/// A message for the user together with its tone, chosen where the message
/// is made, so the front end colours it without reading its words.
public struct StatusLine: Sendable, Equatable {
    /// How a message reads: what the front end's colour says about it.
    public enum Tone: Sendable, Equatable, CaseIterable {
        /// Something the user asked for was done ("Saved", "Copied…").
        case success
        /// Neutral news ("New item", "Cancelled", "Clipboard left alone…").
        case info
        /// Nothing failed, but the user should look ("No item selected",
        /// "Deleted elsewhere…").
        case warning
        /// Something failed ("Copy failed…", a store error).
        case error
    }

    /// The tone.
    public var tone: Tone
    /// The text; empty for no message.
    public var text: String

    /// A message with `tone`.
    public init(_ tone: Tone, _ text: String) {
        self.tone = tone
        self.text = text
    }

    /// No message.
    public static let empty = StatusLine(.info, "")

    /// Whether there is no text.
    public var isEmpty: Bool { text.isEmpty }

    /// A success message.
    public static func success(_ text: String) -> StatusLine { StatusLine(.success, text) }
    /// A neutral message.
    public static func info(_ text: String) -> StatusLine { StatusLine(.info, text) }
    /// A warning.
    public static func warning(_ text: String) -> StatusLine { StatusLine(.warning, text) }
    /// An error.
    public static func error(_ text: String) -> StatusLine { StatusLine(.error, text) }

    /// "No item selected", for list commands on an empty list.
    static let noSelection = StatusLine.warning("No item selected")
}
