import FobStore
import Foundation

// Apple: https://developer.apple.com/documentation/security/secaccesscontrol
// and https://developer.apple.com/documentation/security/secaccesscontrolcreateflags

/// Conditions for reading an item (Apple's `SecAccessControlCreateFlags`), with Apple's raw values.
///
/// Fob cannot check a device passcode, biometry, a paired watch or an
/// application password, and a library never prompts: an item whose access
/// control needs any of them is refused by `SecItemAdd` and `SecItemUpdate`
/// with `errSecAuthFailed`, as Apple's keychain refuses it on a device
/// without a passcode, rather than stored unprotected.
public struct SecAccessControlCreateFlags: OptionSet, Sendable, Hashable {
    /// The flags' bits, as Apple's `CFOptionFlags`.
    public let rawValue: CFOptionFlags
    /// Flags from Apple's bits.
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    /// Biometry or the passcode (bit 0).
    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    /// Any enrolled biometry (bit 1).
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    /// Touch ID, any enrolled finger: Apple's older name of ``biometryAny``.
    public static let touchIDAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    /// The biometry enrolled now (bit 3).
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    /// Touch ID, the fingers enrolled now: Apple's older name of ``biometryCurrentSet``.
    public static let touchIDCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    /// The device passcode (bit 4).
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    /// A paired watch (bit 5).
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    /// A paired companion device (bit 5, Apple's newer name of ``watch``).
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    /// Any one of the constraints given (bit 14).
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    /// Every constraint given (bit 15).
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    /// Use of a private key in the Secure Enclave (bit 30): keys only.
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    /// An application-supplied password (bit 31).
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// Every bit Apple defines.
    static let known: SecAccessControlCreateFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode,
        .watch, .or, .and, .privateKeyUsage, .applicationPassword,
    ]
    /// The constraints that need someone to authenticate, which Fob cannot check.
    static let needsAuthentication: SecAccessControlCreateFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet,
        .devicePasscode, .watch, .applicationPassword,
    ]
}

/// An item's access control (Apple's `SecAccessControl`): an accessibility
/// class (`kSecAttrAccessible…` value) and flags. Immutable.
public final class SecAccessControl: Sendable, Equatable, CustomStringConvertible {
    /// The `kSecAttrAccessible…` value it was created with.
    public let protection: CFString
    /// The flags it was created with.
    public let flags: SecAccessControlCreateFlags

    init(protection: CFString, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }

    /// Equal protection and flags.
    public static func == (lhs: SecAccessControl, rhs: SecAccessControl) -> Bool {
        lhs.protection == rhs.protection && lhs.flags == rhs.flags
    }

    /// `<SecAccessControl protection: ak, flags: 0x0>`.
    public var description: String {
        "<SecAccessControl protection: \(protection), flags: 0x\(String(flags.rawValue, radix: 16))>"
    }
}

/// Apple's name for an access-control reference.
public typealias SecAccessControlRef = SecAccessControl

/// Makes an access-control object (Apple's `SecAccessControlCreateWithFlags`).
///
/// As on Apple platforms, creating one does not check what the device can
/// do; adding an item with it does (see ``SecAccessControlCreateFlags``).
/// - Parameters:
///   - allocator: ignored; pass `kCFAllocatorDefault` or `nil`.
///   - protection: a `kSecAttrAccessible…` value (not `kSecAttrAccessibleAlways…`).
///   - flags: the conditions; both `.or` and `.and` at once is an error.
///   - error: receives a retained ``CFError`` (domain ``kCFErrorDomainOSStatus``, code
///     `errSecParam`) on failure; pass `nil` if not needed.
/// - Returns: the object, or `nil` for an unknown protection, unknown flag
///   bits, or `.or` with `.and`.
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: Any,
    _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    error?.pointee = nil
    func fail(_ reason: String) -> SecAccessControl? {
        error?.pointee = Unmanaged.passRetained(statusError(errSecParam, reason))
        return nil
    }
    guard let name = unwrapOptional(protection) as? String else {
        return fail("the protection is not a kSecAttrAccessible… value")
    }
    guard (try? accessibility(named: name)) != nil else {
        return fail("the protection \"\(name)\" is not a usable kSecAttrAccessible… value")
    }
    guard flags.isSubset(of: .known) else {
        return fail("unknown SecAccessControlCreateFlags bits 0x\(String(flags.rawValue, radix: 16))")
    }
    guard !flags.isSuperset(of: [.or, .and]) else {
        return fail("SecAccessControlCreateFlags cannot hold both .or and .and")
    }
    return SecAccessControl(protection: name, flags: flags)
}

/// The store's accessibility class for a `kSecAttrAccessible…` value.
/// - Throws: `errSecParam` for `kSecAttrAccessibleAlways…` (Fob never reads a locked vault) and unknown values.
func accessibility(named name: String) throws(SecItemFailure) -> Accessibility {
    switch name {
    case kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
        kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly:
        return .whenUnlocked
    case kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly:
        return .afterFirstUnlock
    case kSecAttrAccessibleAlways, kSecAttrAccessibleAlwaysThisDeviceOnly:
        throw SecItemFailure(
            errSecParam, "kSecAttrAccessibleAlways… is not supported: a Fob vault is never read while locked")
    default:
        throw SecItemFailure(errSecParam, "unknown kSecAttrAccessible value \"\(name)\"")
    }
}

/// The `…ThisDeviceOnly` part of a `kSecAttrAccessible…` value (Fob keeps it
/// so that the value comes back as given), or `nil` for a plain value.
func deviceBinding(named name: String) -> DeviceBinding? {
    switch name {
    case kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly:
        return .thisDeviceOnly
    case kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: return .whenPasscodeSetThisDeviceOnly
    default: return nil
    }
}

/// The `kSecAttrAccessible…` value an item was given: its class, and the
/// `…ThisDeviceOnly` variant when it was given one.
func accessibilityName(_ accessible: Accessibility, _ binding: DeviceBinding? = nil) -> String {
    switch (accessible, binding) {
    case (_, .whenPasscodeSetThisDeviceOnly?): return kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
    case (.whenUnlocked, .thisDeviceOnly?): return kSecAttrAccessibleWhenUnlockedThisDeviceOnly
    case (.afterFirstUnlock, .thisDeviceOnly?): return kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
    case (.whenUnlocked, nil): return kSecAttrAccessibleWhenUnlocked
    case (.afterFirstUnlock, nil): return kSecAttrAccessibleAfterFirstUnlock
    }
}
