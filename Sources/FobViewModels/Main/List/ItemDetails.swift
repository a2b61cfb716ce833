import FobSessions
import FobStore
import FobTokens
import FoundationEssentials

/// One read-only line of the form's details: a caption and what to show.
public struct DetailRow: Sendable, Equatable {
    /// The caption, such as `One-time code` or a custom field's name.
    public var label: String
    /// The text, masks for a hidden value; line breaks shown as `⏎`.
    public var text: String
    /// Whether ``text`` is masks standing for a hidden value.
    public var masked: Bool
}

extension HomeFormModel {
    /// The opened item's read-only details as of `now`: the one-time code
    /// and its seconds left (masked until Ctrl-R), the custom fields (hidden
    /// ones masked until Ctrl-R), and a token's decoded claims (subject,
    /// issuer, audience, scope) with its expiry counting down.
    public func detailRows(at now: Date) -> [DetailRow] {
        var rows: [DetailRow] = []
        if let code = oneTimeCodeText(at: now) {
            rows.append(DetailRow(label: "One-time code", text: code, masked: !isRetrievedPasswordRevealed))
        } else if openedHasSeed {
            rows.append(DetailRow(label: "One-time code", text: "(the stored seed cannot be read)", masked: false))
        }
        for field in customFields {
            let hidden = field.isHidden && !isRetrievedPasswordRevealed
            let text: String
            if hidden {
                text = ItemPreview.mask
            } else {
                text = field.unsafeText.map(HomeFormModel.visibleLineBreaks) ?? "(\(field.value.count) bytes, not text)"
            }
            rows.append(DetailRow(label: field.name, text: text, masked: hidden))
        }
        if let details = tokenDetails {
            let claims = details.jwt?.claims ?? [:]
            func claim(_ name: String) -> String? { claims[name]?.displayText }
            for (label, name) in [("Subject", "sub"), ("Issuer", "iss"), ("Audience", "aud"), ("Scope", "scope")] {
                if let value = claim(name) {
                    rows.append(DetailRow(label: label, text: displaySafe(value), masked: false))
                }
            }
            rows.append(
                DetailRow(
                    label: "Expires",
                    text: details.expiryText(now: now)
                        + (details.canRefresh ? "  (F5 refreshes)" : ""), masked: false))
        }
        return rows
    }
}
