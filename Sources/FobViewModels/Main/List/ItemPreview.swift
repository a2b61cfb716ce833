import FobAccess
import FobAgent
import FobSessions
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// What the preview pane shows of the highlighted item, read from the store
/// when the selection moves: names, dates, the one-time code in clear and
/// the token's claims, never the secret or a hidden field's value unless
/// revealed (Ctrl-R), which fetches them again. What it holds is what it
/// shows: the seed stays in the store, the code is kept with the moment it
/// changes, and a hidden value is held only while it is revealed.
public struct ItemPreview: Sendable, Equatable {
    /// One line of the preview: a caption and its text.
    public struct Line: Sendable, Equatable {
        /// How a line's text reads.
        public enum Style: Sendable, Equatable {
            /// Ordinary text.
            case plain
            /// A fixed-width mask standing for a hidden value.
            case masked
            /// Text to wrap over several lines (notes).
            case wrapped
            /// A time that has passed (an expired token).
            case expired
            /// A time less than ``ItemPreview/soon`` away (a token about to expire).
            case soon
        }
        /// The caption, such as `Service` or a custom field's name.
        public var label: String
        /// The text; control characters written out (``displaySafe(_:)``).
        public var text: String
        /// How it reads.
        public var style: Style

        /// A line `label`: `text` in `style`.
        public init(_ label: String, _ text: String, _ style: Style = .plain) {
            self.label = label
            self.text = text
            self.style = style
        }
    }

    /// How close an expiry is marked as soon: 5 minutes.
    public static let soon: TimeInterval = 300

    /// The item shown.
    public let key: ItemKey
    /// The modification date of the item shown.
    public let modified: Date
    /// The ``Item/revision`` of the item shown: another one means read it again.
    public let revision: UInt64
    /// Whether the secret and hidden fields show in clear (Ctrl-R).
    public let revealed: Bool
    /// The lines before the time-dependent ones.
    let head: [Line]
    /// The lines after them (custom fields).
    let tail: [Line]
    /// The current one-time code and when it changes, or `nil`.
    let code: (text: String, until: Date?)?
    /// Whether the item has a seed that cannot be read.
    let unreadableSeed: Bool
    /// The token's expiry, or `nil`.
    public let expires: Date?
    /// Whether F5 can refresh it.
    let canRefresh: Bool
    /// Whether the item is a token (so "no expiry" is worth saying).
    let isToken: Bool

    /// The width of every mask the preview shows, whatever the value's length.
    public static let maskWidth = 8
    /// The mask: ``maskWidth`` mask characters.
    public static let mask = String(repeating: TextFieldState.maskCharacter, count: maskWidth)

    /// The preview of `item`, fetched with its secret, as of `now`.
    /// - Parameter revealed: whether the secret and hidden fields show in clear.
    public init(item: Item, now: Date, revealed: Bool) {
        key = ItemKey(item)
        modified = item.modified
        revision = item.revision
        self.revealed = revealed
        var head = [
            Line("Service", displaySafe(item.service)), Line("User ID", displaySafe(item.account)),
            Line("Kind", item.kind.rawValue),
        ]
        if let label = item.label, !label.isEmpty {
            head.append(Line(item.kind == .sshKey ? "Comment" : "Label", displaySafe(label)))
        }
        if let url = item.url, !url.isEmpty { head.append(Line("URL", displaySafe(url))) }
        let key = SSHKeyItem.details(item)
        if let key {
            head += ItemPreview.sshKeyLines(key)
        } else {
            head.append(ItemPreview.secretLine(item, revealed: revealed))
        }
        if let notes = item.notes, !notes.isEmpty { head.append(Line("Notes", ItemPreview.notesText(notes), .wrapped)) }
        self.head = head
        var tail: [Line] = []
        for field in item.customFields where key == nil || !SSHKeyItem.isKeyField(field.name) {
            let name = displaySafe(field.name)
            if field.isHidden && !revealed {
                tail.append(Line(name, ItemPreview.mask, .masked))
            } else {
                let text = field.unsafeText.map { displaySafe(HomeFormModel.visibleLineBreaks($0)) }
                tail.append(Line(name, text ?? "(\(field.value.count) bytes, not text)"))
            }
        }
        let details = item.kind.isSessionToken ? TokenDetails(item: item) : nil
        tail += ItemPreview.claims(details)
        tail.append(Line("Modified", ItemPreview.localTime(item.modified, now: now, alwaysDate: true)))
        self.tail = tail
        let generator = item.oneTimePassword.flatMap(EditorSession.generator(from:))
        code = generator.map { otp in
            (otp.code(at: now), otp.secondsLeft(at: now).map { now.addingTimeInterval(TimeInterval($0)) })
        }
        unreadableSeed = item.oneTimePassword != nil && generator == nil
        expires = details?.expiresAt
        canRefresh = details?.canRefresh ?? false
        isToken = item.kind.isSessionToken
    }

    /// The lines as of `now`: the item's fields, the one-time code with its
    /// seconds left, custom fields, the token's claims and expiry, the
    /// modification date.
    public func lines(at now: Date) -> [Line] {
        var lines = head
        if let code {
            let left = code.until.map { " · \(max(0, Int($0.timeIntervalSince(now).rounded(.up)))) s left" } ?? ""
            lines.append(Line("2FA code", code.text + left))
        } else if unreadableSeed {
            lines.append(Line("2FA code", "(the stored seed cannot be read)"))
        }
        if isToken { lines.append(expiryLine(at: now)) }
        return lines + tail
    }

    /// Whether the one-time code shown has changed by `now` (read the item again).
    public func isStale(at now: Date) -> Bool {
        guard let until = code?.until else { return false }
        return now >= until
    }

    /// `Expires  20:28 · in 52m`, styled expired or soon.
    private func expiryLine(at now: Date) -> Line {
        guard let expires else { return Line("Expires", "no expiry") }
        let left = expires.timeIntervalSince(now)
        let relative = left > 0 ? "in \(TimeText.duration(left))" : "\(TimeText.duration(left)) ago"
        let refresh = canRefresh ? "  (F5 refreshes)" : ""
        let style: Line.Style = left <= 0 ? .expired : (left <= ItemPreview.soon ? .soon : .plain)
        return Line("Expires", "\(ItemPreview.localTime(expires, now: now)) · \(relative)\(refresh)", style)
    }

    /// The secret's line: a fixed-width mask, or the text when revealed.
    /// An SSH key's own lines in place of its secret: type, fingerprint, the
    /// hosts it is for, its constraints and its public key line; the private
    /// key is never shown, revealed or not.
    private static func sshKeyLines(_ key: SSHKeyDetails) -> [Line] {
        var lines = [
            Line("Key type", key.type), Line("Fingerprint", key.fingerprint),
            Line("Private key", "kept in the vault; signs through the SSH agent"),
        ]
        let hosts = key.hosts.isEmpty ? "every host" : key.hosts.joined(separator: ", ")
        lines.append(Line("Hosts", displaySafe(hosts), .wrapped))
        if key.destinationHops > 0 { lines.append(Line("Destinations", "\(key.destinationHops) hops (ssh-add -h)")) }
        if key.confirm { lines.append(Line("Confirm", "every use is asked (ssh-add -c)")) }
        lines.append(Line("Public key", displaySafe(key.publicKey), .wrapped))
        return lines
    }

    private static func secretLine(_ item: Item, revealed: Bool) -> Line {
        let name = item.kind == .password ? "Password" : "Secret"
        guard let secret = item.secret, secret.count > 0 else { return Line(name, "(empty)") }
        guard revealed else { return Line(name, mask, .masked) }
        guard let text = secret.unsafeString else { return Line(name, "(\(secret.count) bytes, not text)") }
        return Line(name, displaySafe(HomeFormModel.visibleLineBreaks(text)))
    }

    /// Notes with control characters but line breaks written out.
    private static func notesText(_ notes: String) -> String {
        notes.split(separator: "\n", omittingEmptySubsequences: false).map { displaySafe(String($0)) }
            .joined(separator: "\n")
    }

    /// A token's decoded claims: subject, issuer, audience, scope.
    private static func claims(_ details: TokenDetails?) -> [Line] {
        guard let claims = details?.jwt?.claims else { return [] }
        var lines: [Line] = []
        for (label, name) in [("Subject", "sub"), ("Issuer", "iss"), ("Audience", "aud"), ("Scope", "scope")] {
            if let text = claims[name]?.displayText { lines.append(Line(label, displaySafe(text))) }
        }
        return lines
    }

    /// A token's expiry in the list's narrow column: `in 52m`, `!2h ago`
    /// when past (the `!` marks it without colour), `*in 4m` within
    /// ``soon``; only the largest unit (FobTokens' `TimeText`).
    public static func listExpiry(_ expiry: Date, now: Date) -> (text: String, expired: Bool, soon: Bool) {
        let left = expiry.timeIntervalSince(now)
        let unit = TimeText.duration(left).split(separator: " ").first.map(String.init) ?? ""
        if left <= 0 { return ("!\(unit) ago", true, false) }
        if left <= soon { return ("*in \(unit)", false, true) }
        return ("in \(unit)", false, false)
    }

    /// `20:28` on the day of `now`, else `2026-12-01 20:28`, in local time.
    public static func localTime(_ date: Date, now: Date, alwaysDate: Bool = false) -> String {
        let day = DateText.local(date, "%Y-%m-%d")
        if !alwaysDate, day == DateText.local(now, "%Y-%m-%d") { return DateText.local(date, "%H:%M") }
        return DateText.local(date, "%Y-%m-%d %H:%M")
    }

    public static func == (a: ItemPreview, b: ItemPreview) -> Bool {
        a.key == b.key && a.modified == b.modified && a.revision == b.revision && a.revealed == b.revealed
            && a.head == b.head
            && a.tail == b.tail && a.code?.text == b.code?.text && a.code?.until == b.code?.until
            && a.expires == b.expires
    }
}
