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
}

extension SyncEngine.Conflict {
    /// The parts in which `other` (one of ``others``) differs from
    /// ``current``, in the tree's order; never their values.
    /// - Parameter other: a version kept beside the vault's.
    public func differingParts(of other: Item) -> [FieldGroup] {
        FieldGroup.allCases.filter { !$0.same(current, other) }
    }
}
