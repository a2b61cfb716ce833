import FobStore
import FoundationEssentials

extension FieldGroup {
    /// How `fob conflicts --show` names the part, such as `secret` or `notes`.
    public var name: String {
        switch self {
        case .secret: "secret"
        case .notes: "notes"
        case .url: "url"
        case .label: "label"
        case .oneTimePassword: "one-time password"
        case .customFields: "custom fields"
        case .kind: "kind"
        case .access: "accessibility"
        case .generic: "generic attribute"
        case .apple: "Keychain attributes"
        }
    }

    /// The parts that hold what a user wrote into the item (all but its
    /// kind and its accessibility): a merge that drops a version differing
    /// in one of them keeps it as a conflicting version instead.
    static let userData: Set<FieldGroup> = Set(allCases).subtracting([.kind, .access])
}

extension SyncEngine.Conflict {
    /// The parts `fob resolve --keep remote` takes from `other` (one of
    /// ``others``): those it lost in the merge whose values differ from
    /// ``current``'s (for a version recorded without its parts, every part
    /// that differs), in the tree's order; never their values.
    /// - Parameter other: a version kept beside the vault's.
    public func differingParts(of other: Sibling) -> [FieldGroup] {
        other.takenParts(over: current)
    }
}

extension Sibling {
    /// The parts of this version that replace `current`'s when it is kept:
    /// the ones it lost in the merge (or, not known, every one), where the
    /// values differ.
    func takenParts(over current: Item) -> [FieldGroup] {
        FieldGroup.allCases.filter { (parts?.contains($0) ?? true) && !$0.same(current, item) }
    }

    /// `current` with this version's ``takenParts(over:)``: its other parts,
    /// merged from other edits, stay as they are.
    func kept(over current: Item) -> Item {
        var kept = current
        for group in takenParts(over: current) { group.copy(from: item, into: &kept) }
        return kept
    }
}
