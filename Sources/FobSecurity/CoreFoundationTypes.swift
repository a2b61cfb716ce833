import Foundation

// Linux Foundation has no CoreFoundation types for Swift code (`CFDictionary`,
// `CFTypeRef`, `CFString` do not exist there). These aliases make Keychain
// code written for Apple platforms compile unchanged: `[String: Any]` casts
// to `CFDictionary` with `as`, `kSecClass as String` is an identity cast, and
// `var result: CFTypeRef?` / `AnyObject?` can be passed as `&result`.

/// A result code: `errSecSuccess` (0) or a negative `errSec…` status (Apple's `OSStatus`).
public typealias OSStatus = Int32

/// Any object reference (Apple's `CFTypeRef`). Results of ``SecItemCopyMatching(_:_:)``
/// are boxed `Data`, `[String: Any]`, `[Data]` or `[[String: Any]]` values; cast them back with `as?`.
public typealias CFTypeRef = AnyObject

/// A Keychain string constant (Apple's `CFString`); here simply a `String`.
public typealias CFString = String

/// A query or attribute dictionary (Apple's `CFDictionary`); here a `[String: Any]`.
public typealias CFDictionary = [String: Any]

/// Bytes (Apple's `CFData`); here a `Data`.
public typealias CFData = Data

/// An array (Apple's `CFArray`); here an `[Any]`.
public typealias CFArray = [Any]

/// A boolean object (Apple's `CFBoolean`); here an `NSNumber`, so that it
/// fits both `[String: Any]` and `[String: AnyObject]` dictionaries.
public typealias CFBoolean = NSNumber

/// `true`, declared implicitly unwrapped as Apple's is, so `kCFBooleanTrue!` compiles.
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)

/// `false`, declared implicitly unwrapped as Apple's is, so `kCFBooleanFalse!` compiles.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)
