import CNcurses

/// The one table that gives each ``Role`` its look: a colour pair and
/// attributes on colour terminals, attributes alone on monochrome ones or
/// when `NO_COLOR` is set (https://no-color.org).
public struct Theme: Sendable {
    /// A look for one role.
    public struct Look: Sendable {
        /// Foreground and background (ncurses colour numbers; -1 = the terminal's default).
        public var foreground: Int16, background: Int16
        /// Attributes added with colour.
        public var colourAttributes: Attributes
        /// Attributes used instead of colour.
        public var monoAttributes: Attributes
    }

    /// ncurses video attributes by name, independent of their bit values.
    public struct Attributes: OptionSet, Sendable {
        /// The set as bits (ours, not ncurses's).
        public let rawValue: UInt8
        /// A set from its bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `A_BOLD`.
        public static let bold = Attributes(rawValue: 1)
        /// `A_REVERSE`.
        public static let reverse = Attributes(rawValue: 2)
        /// `A_UNDERLINE`.
        public static let underline = Attributes(rawValue: 4)
        /// `A_DIM`.
        public static let dim = Attributes(rawValue: 8)
    }

    /// The looks, by role.
    public static let table: [Role: Look] = [
        .normal: Look(foreground: -1, background: -1, colourAttributes: [], monoAttributes: []),
        .title: Look(foreground: Int16(COLOR_CYAN), background: -1, colourAttributes: .bold, monoAttributes: .bold),
        .label: Look(foreground: -1, background: -1, colourAttributes: .bold, monoAttributes: .bold),
        .field: Look(foreground: -1, background: -1, colourAttributes: .underline, monoAttributes: .underline),
        .focus: Look(
            foreground: Int16(COLOR_BLACK), background: Int16(COLOR_CYAN), colourAttributes: [],
            monoAttributes: .reverse),
        .button: Look(foreground: Int16(COLOR_CYAN), background: -1, colourAttributes: .bold, monoAttributes: .bold),
        .selection: Look(
            foreground: Int16(COLOR_BLACK), background: Int16(COLOR_WHITE), colourAttributes: [],
            monoAttributes: .reverse),
        .error: Look(
            foreground: Int16(COLOR_RED), background: -1, colourAttributes: .bold, monoAttributes: [.bold, .underline]),
        .expired: Look(foreground: Int16(COLOR_RED), background: -1, colourAttributes: .bold, monoAttributes: .bold),
        .masked: Look(
            foreground: Int16(COLOR_YELLOW), background: -1, colourAttributes: .underline, monoAttributes: .underline),
        .legend: Look(
            foreground: Int16(COLOR_BLACK), background: Int16(COLOR_CYAN), colourAttributes: [],
            monoAttributes: .reverse),
        .dim: Look(foreground: -1, background: -1, colourAttributes: .dim, monoAttributes: .dim),
        .info: Look(foreground: Int16(COLOR_GREEN), background: -1, colourAttributes: [], monoAttributes: .bold),
        .warning: Look(
            foreground: Int16(COLOR_YELLOW), background: -1, colourAttributes: .bold, monoAttributes: .underline),
    ]

    /// Whether colour is in use.
    public let colour: Bool
    private let attributes: [attr_t]
    private let pairs: [Int16]

    /// Sets up colour pairs when the terminal has colours and `NO_COLOR` is
    /// unset or empty. Call after the screen is initialised.
    /// - Parameter environment: the process environment (for `NO_COLOR`).
    init(environment: [String: String]) {
        let noColour = !(environment["NO_COLOR"] ?? "").isEmpty
        var useColour = false
        if !noColour, has_colors(), start_color() == OK {
            _ = use_default_colors()
            useColour = true
        }
        colour = useColour
        var attrs: [attr_t] = []
        var pairNumbers: [Int16] = []
        for role in Role.allCases {
            let look = Theme.table[role]!
            if useColour {
                let pair = Int16(role.rawValue + 1)
                _ = init_pair(pair, look.foreground, look.background)
                attrs.append(Theme.bits(look.colourAttributes))
                pairNumbers.append(pair)
            } else {
                attrs.append(Theme.bits(look.monoAttributes))
                pairNumbers.append(0)
            }
        }
        attributes = attrs
        pairs = pairNumbers
    }

    /// The ncurses video attributes for `role` (without the colour pair).
    func attributes(for role: Role) -> attr_t { attributes[role.rawValue] }

    /// The colour pair for `role`; 0 (the terminal's colours) without colour.
    func pair(for role: Role) -> Int16 { pairs[role.rawValue] }

    private static func bits(_ a: Attributes) -> attr_t {
        var bits = fob_a_normal()
        if a.contains(.bold) { bits |= fob_a_bold() }
        if a.contains(.reverse) { bits |= fob_a_reverse() }
        if a.contains(.underline) { bits |= fob_a_underline() }
        if a.contains(.dim) { bits |= fob_a_dim() }
        return bits
    }
}
