import Foundation

// Apple's CFError is toll-free bridged to NSError; here it is NSError, so
// `error.takeRetainedValue() as Error`, `(error as NSError).code` and the
// `CFError…` functions behave as on Apple platforms.
// Apple: https://developer.apple.com/documentation/corefoundation/cferror

/// An error object (Apple's `CFError`); here `NSError`. Errors from
/// ``SecAccessControlCreateWithFlags(_:_:_:_:)`` have the domain
/// ``kCFErrorDomainOSStatus`` and an `errSec…` status as their code.
public typealias CFError = NSError

/// A signed integer index or count (Apple's `CFIndex`).
public typealias CFIndex = Int

/// Bit flags (Apple's `CFOptionFlags`).
public typealias CFOptionFlags = UInt

/// A number object (Apple's `CFNumber`); here an `NSNumber`.
public typealias CFNumber = NSNumber

/// An error domain name (Apple's `CFErrorDomain`).
public typealias CFErrorDomain = CFString

/// A memory allocator (Apple's `CFAllocator`). FobSecurity takes one where
/// Apple's functions do and ignores it.
public final class CFAllocator: Sendable {
    private init() {}
}

/// The default allocator: `nil`, as Apple's is.
public let kCFAllocatorDefault: CFAllocator! = nil

/// The domain of errors whose code is an `OSStatus` (`"NSOSStatusErrorDomain"`).
public let kCFErrorDomainOSStatus: CFErrorDomain = "NSOSStatusErrorDomain"
/// The domain of POSIX `errno` codes (`"NSPOSIXErrorDomain"`).
public let kCFErrorDomainPOSIX: CFErrorDomain = "NSPOSIXErrorDomain"
/// The `userInfo` key of an error's description (`"NSLocalizedDescription"`).
public let kCFErrorLocalizedDescriptionKey: CFString = "NSLocalizedDescription"

/// Makes an error (Apple's `CFErrorCreate`).
/// - Parameters:
///   - allocator: ignored; pass `kCFAllocatorDefault` or `nil`.
///   - domain: the error domain, such as ``kCFErrorDomainOSStatus``.
///   - code: the code within the domain.
///   - userInfo: extra information, or `nil`.
/// - Returns: the error; never `nil`.
public func CFErrorCreate(
    _ allocator: CFAllocator?, _ domain: CFErrorDomain!, _ code: CFIndex,
    _ userInfo: CFDictionary?
) -> CFError! {
    NSError(domain: domain ?? "", code: code, userInfo: userInfo)
}

/// An error's code (Apple's `CFErrorGetCode`): for ``kCFErrorDomainOSStatus``, an `errSec…` status.
public func CFErrorGetCode(_ err: CFError!) -> CFIndex { err?.code ?? 0 }

/// An error's domain (Apple's `CFErrorGetDomain`).
public func CFErrorGetDomain(_ err: CFError!) -> CFErrorDomain! { err?.domain }

/// An error's description (Apple's `CFErrorCopyDescription`); for FobSecurity's
/// errors, the status's message and why it was returned.
public func CFErrorCopyDescription(_ err: CFError!) -> CFString! { err?.localizedDescription }

/// An error's failure reason (Apple's `CFErrorCopyFailureReason`), or `nil`.
public func CFErrorCopyFailureReason(_ err: CFError!) -> CFString? { err?.localizedFailureReason }

/// An error's recovery suggestion (Apple's `CFErrorCopyRecoverySuggestion`), or `nil`.
public func CFErrorCopyRecoverySuggestion(_ err: CFError!) -> CFString? { err?.localizedRecoverySuggestion }

/// An error's `userInfo` (Apple's `CFErrorCopyUserInfo`); empty when it has none.
public func CFErrorCopyUserInfo(_ err: CFError!) -> CFDictionary! { err?.userInfo ?? [:] }

/// An `OSStatus`-domain error for `status`, with Apple's message and `reason`.
func statusError(_ status: OSStatus, _ reason: String) -> CFError {
    let message = statusMessages[status] ?? "OSStatus \(status)"
    return NSError(
        domain: kCFErrorDomainOSStatus, code: Int(status),
        userInfo: [kCFErrorLocalizedDescriptionKey: "\(message) (\(reason))", NSLocalizedFailureReasonErrorKey: reason])
}
