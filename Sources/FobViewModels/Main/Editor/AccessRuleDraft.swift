import FobStore

/// The editor's Access rows, in the Keychain's terms: the item's access
/// rule as edited (``AccessRule``: the mode for programs the lists do not
/// name, what a request with no controlling terminal gets, the trusted
/// and denied programs), the selected program, and the vault's default
/// that a rule with no mode follows. Save writes ``rule`` through the
/// store's update when it differs from the opened item's rule; the agent
/// checks that change as it checks a read.
public struct AccessRuleDraft: Sendable, Equatable {
    /// The rule as edited.
    public internal(set) var rule = AccessRule()
    /// The selected program of ``programs`` (0 when there is none).
    public internal(set) var selection = 0
    /// The vault's access default, as the store said when the item was opened.
    public internal(set) var vaultDefault = AccessRule.Mode.any

    /// The choices of the Access row, in the order Space steps through them:
    /// the vault's default (`nil`), then every mode.
    static let modes: [AccessRule.Mode?] = [nil] + AccessRule.Mode.allCases.map { $0 }

    /// The Access row: `default (ask)`, `any`, `ask` or `deny`.
    public var modeText: String { rule.mode?.name ?? "default (\(vaultDefault.name))" }

    /// The Forwarded row: `as others`, `ask` or `deny`.
    public var forwardedText: String {
        switch rule.forwarded {
        case .same: return "as others"
        case .ask: return "ask"
        case .deny: return "deny"
        }
    }

    /// The Programs rows, trusted first (`trusted /usr/bin/git`, `denied
    /// /usr/bin/curl`), paths as stored; empty when the rule names none.
    public var programs: [String] {
        rule.trusted.map { "trusted " + $0.path } + rule.denied.map { "denied " + $0.path }
    }

    /// Steps the Access row by `step` (+1 next, -1 previous), wrapping.
    mutating func cycleMode(_ step: Int) {
        let all = Self.modes
        let index = all.firstIndex(of: rule.mode) ?? 0
        rule.mode = all[(index + step % all.count + all.count) % all.count]
    }

    /// Steps the Forwarded row by `step`, wrapping.
    mutating func cycleForwarded(_ step: Int) {
        let all = AccessRule.Forwarded.allCases
        let index = all.firstIndex(of: rule.forwarded) ?? 0
        rule.forwarded = all[(index + step % all.count + all.count) % all.count]
    }

    /// Moves the selected program by `step`.
    /// - Returns: `false` when the move would leave the rows (focus moves on instead).
    mutating func moveSelection(by step: Int) -> Bool {
        let next = selection + step
        guard programs.indices.contains(next) else { return false }
        selection = next
        return true
    }

    /// Removes the selected program from its list.
    /// - Returns: the removed row's text, or `nil` when the rule names no program.
    mutating func removeSelected() -> String? {
        let rows = programs
        guard rows.indices.contains(selection) else { return nil }
        let removed = rows[selection]
        if selection < rule.trusted.count {
            rule.trusted.remove(at: selection)
        } else {
            rule.denied.remove(at: selection - rule.trusted.count)
        }
        selection = min(selection, max(0, programs.count - 1))
        return removed
    }

    /// The draft of an item's stored `rule`, under a vault whose default is `vaultDefault`.
    init(rule: AccessRule = AccessRule(), vaultDefault: AccessRule.Mode = .any) {
        self.rule = rule
        self.vaultDefault = vaultDefault
    }
}
