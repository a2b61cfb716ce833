import FobAccess
import FobAgent
import FobStore
import Foundation

// Apple's SecItem functions over a Fob vault. Each returns a status and never
// traps on bad input; see docs/secitem.md for what differs from Apple.

/// Adds an item (Apple's `SecItemAdd`,
/// <https://developer.apple.com/documentation/security/1401659-secitemadd>).
///
/// `kSecClass` is required; `kSecAttrService` (or `kSecAttrServer` for internet
/// passwords), `kSecAttrAccount` and `kSecAttrAccessGroup` default to `""`;
/// `kSecValueData` (a `Data`, up to 1 MiB) defaults to empty;
/// `kSecAttrAccessible` defaults to `kSecAttrAccessibleWhenUnlocked`;
/// `kSecAttrSynchronizable` to `false`. An internet password's protocol,
/// authentication type, path and security domain default to none and its
/// port to 0; all of them are part of its primary key.
/// - Parameters:
///   - attributes: the new item's class, attributes and secret, and
///     optionally `kSecReturnData` / `kSecReturnAttributes`.
///   - result: receives the added item as ``SecItemCopyMatching(_:_:)`` would
///     return it when return keys (data, attributes, persistent reference) are
///     given, else `nil`. Pass `nil` if not needed.
/// - Returns: `errSecSuccess`; `errSecDuplicateItem` if an item with the same
///   primary key exists; `errSecParam` for a malformed dictionary or an
///   attribute over its limit; `errSecNoSuchAttr` for an attribute of the
///   other password class; `errSecAuthFailed` for access control that needs a
///   passcode or biometry (or a wrong master password); `errSecUnimplemented`,
///   `errSecInteractionNotAllowed`, `errSecNoSuchKeychain`, `errSecDecode`, `errSecIO`.
/// - Important: the secret passes through `Data`, which cannot be wiped.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return run { () throws(SecItemFailure) in
        let parsed = try ParsedDictionary(attributes, role: .add)
        guard case .stored(let itemClass)? = parsed.itemClass else {
            throw SecItemFailure(errSecUnimplemented, "Fob stores only generic and internet passwords")
        }
        let item = parsed.attributes.newItem(itemClass, secret: SecretBytes(parsed.data ?? Data()))
        let answer: AnyObject? = try FobKeychain.withVault {
            (vault: any RequestStore) throws(SecItemFailure) -> AnyObject? in
            try store { () throws(KeychainError) in try vault.add(item) }
            guard parsed.returnsSomething else { return nil }
            let added = try store { () throws(KeychainError) in
                try vault.items(matching: ItemQuery.exact(for: item), limit: .one, withSecrets: parsed.returnData)[0]
            }
            return resultValue(for: [added], parsed: parsed, limit: .one)
        }
        result?.pointee = answer
    }
}

/// Finds items (Apple's `SecItemCopyMatching`,
/// <https://developer.apple.com/documentation/security/1398306-secitemcopymatching>).
///
/// Matches on every attribute given (strings byte for byte); without
/// `kSecAttrSynchronizable` only items stored with `false` match
/// (`kSecAttrSynchronizableAny` matches both); `kSecValuePersistentRef` finds
/// one item, with or without `kSecClass`. The result is chosen by the return
/// keys and `kSecMatchLimit` (default one): `kSecReturnData` alone gives
/// `Data`, `kSecReturnPersistentRef` alone a 20-byte `Data`;
/// `kSecReturnAttributes`, or more than one return key, gives
/// `[String: Any]` with Apple's keys (plus `kSecValueData` and
/// `kSecValuePersistentRef` when asked); with `kSecMatchLimitAll` or a count
/// above 1, an array of those; with no return key, nothing (only the status
/// says whether an item matches).
/// - Parameters:
///   - query: `kSecClass`, attributes to match, return keys and `kSecMatchLimit`.
///   - result: receives the result, or `nil`; pass `nil` to test for existence.
/// - Returns: `errSecSuccess`; `errSecItemNotFound` when nothing matches;
///   `errSecParam` for a malformed query; `errSecNoSuchAttr`,
///   `errSecUnimplemented`, `errSecInteractionNotAllowed`, `errSecAuthFailed`,
///   `errSecNoSuchKeychain`, `errSecDecode`, `errSecIO`.
/// - Important: returned secrets are `Data`, which cannot be wiped.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return run { () throws(SecItemFailure) in
        let parsed = try ParsedDictionary(query, role: .copy)
        let limit = parsed.limit ?? .one
        let answer: AnyObject? = try FobKeychain.withVault {
            (vault: any RequestStore) throws(SecItemFailure) -> AnyObject? in
            let found = try matches(of: parsed, in: vault, withSecrets: parsed.returnData)
            let kept: [Item]
            switch limit {
            case .one: kept = [found[0]]
            case .all: kept = found
            case .count(let n): kept = Array(found.prefix(n))
            }
            guard parsed.returnsSomething else { return nil }
            return resultValue(for: kept, parsed: parsed, limit: limit)
        }
        result?.pointee = answer
    }
}

/// Changes every matching item (Apple's `SecItemUpdate`,
/// <https://developer.apple.com/documentation/security/1393617-secitemupdate>).
///
/// Matching is as in ``SecItemCopyMatching(_:_:)``. Changing a primary-key
/// attribute (service or server, account, access group, synchronizable, an
/// internet password's protocol, port, path, authentication type or security
/// domain) moves the item; its persistent reference stays the same.
/// - Parameters:
///   - query: `kSecClass` and attributes to match (no return keys, and no
///     limit but `kSecMatchLimitAll`).
///   - attributesToUpdate: the attributes and/or `kSecValueData` to set; it may
///     repeat the query's `kSecClass` but not change it.
/// - Returns: `errSecSuccess`; `errSecItemNotFound` when nothing matches;
///   `errSecDuplicateItem` when a changed service, account or access group
///   collides with another item; `errSecParam` for malformed or empty
///   dictionaries, a class change or `kSecAttrSynchronizableAny` as a new value;
///   `errSecAuthFailed` for access control that needs a passcode or biometry;
///   `errSecNoSuchAttr`, `errSecUnimplemented`, `errSecInteractionNotAllowed`,
///   `errSecNoSuchKeychain`, `errSecDecode`, `errSecIO`.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    run { () throws(SecItemFailure) in
        let parsed = try ParsedDictionary(query, role: .updateQuery)
        let update = try ParsedDictionary(attributesToUpdate, role: .updateAttributes)
        if let newClass = update.itemClass, newClass != parsed.itemClass {
            throw SecItemFailure(errSecParam, "SecItemUpdate cannot change an item's kSecClass")
        }
        guard !update.attributes.isEmpty || update.data != nil else {
            throw SecItemFailure(errSecParam, "SecItemUpdate needs at least one attribute or kSecValueData to change")
        }
        guard case .stored(let itemClass)? = parsed.itemClass else {
            throw SecItemFailure(
                errSecItemNotFound, "Fob holds no items of class \(query[kSecClass].map { "\($0)" } ?? "")")
        }
        try update.checkAttributes(of: itemClass)
        let changes = update.attributes.changes(secret: update.data.map { SecretBytes($0) })
        try FobKeychain.withVault { (vault: any RequestStore) throws(SecItemFailure) in
            if parsed.attributes.needsLocalFilter {
                for item in try matches(of: parsed, in: vault, withSecrets: false) {
                    try store { () throws(KeychainError) in
                        try vault.update(matching: ItemQuery.exact(for: item), with: changes)
                    }
                }
            } else {
                try store { () throws(KeychainError) in
                    try vault.update(matching: parsed.attributes.storeQuery(itemClass), with: changes)
                }
            }
        }
    }
}

/// Deletes every matching item (Apple's `SecItemDelete`,
/// <https://developer.apple.com/documentation/security/1395547-secitemdelete>);
/// matching is as in ``SecItemCopyMatching(_:_:)``.
/// - Parameter query: `kSecClass` and attributes to match; `kSecValueData` is ignored.
/// - Returns: `errSecSuccess`; `errSecItemNotFound` when nothing matches;
///   `errSecParam` for a malformed query; `errSecNoSuchAttr`,
///   `errSecUnimplemented`, `errSecInteractionNotAllowed`, `errSecAuthFailed`,
///   `errSecNoSuchKeychain`, `errSecDecode`, `errSecIO`.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    run { () throws(SecItemFailure) in
        let parsed = try ParsedDictionary(query, role: .delete)
        guard case .stored(let itemClass)? = parsed.itemClass else {
            throw SecItemFailure(
                errSecItemNotFound, "Fob holds no items of class \(query[kSecClass].map { "\($0)" } ?? "")")
        }
        try FobKeychain.withVault { (vault: any RequestStore) throws(SecItemFailure) in
            if parsed.attributes.needsLocalFilter {
                for item in try matches(of: parsed, in: vault, withSecrets: false) {
                    try store { () throws(KeychainError) in try vault.delete(matching: ItemQuery.exact(for: item)) }
                }
            } else {
                try store { () throws(KeychainError) in
                    try vault.delete(matching: parsed.attributes.storeQuery(itemClass))
                }
            }
        }
    }
}

/// A sentence describing `status` (Apple's `SecCopyErrorMessageString`,
/// <https://developer.apple.com/documentation/security/1394686-seccopyerrormessagestring>).
/// - Parameters:
///   - status: an `errSec…` status.
///   - reserved: pass `nil`.
/// - Returns: Apple's message (SecBase.h) for every status declared in this
///   module, which includes every status it returns; else `"OSStatus <status>"`; never `nil`.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    statusMessages[status] ?? "OSStatus \(status)"
}

// MARK: - Internals

/// Runs one call, turning its failure into a status.
private func run(_ body: () throws(SecItemFailure) -> Void) -> OSStatus {
    do {
        try body()
        return errSecSuccess
    } catch {
        return error.status
    }
}

/// Runs a store operation, converting its error.
@discardableResult
private func store<R>(_ body: () throws(KeychainError) -> R) throws(SecItemFailure) -> R {
    do { return try body() } catch { throw SecItemFailure(error) }
}

/// The items matching a parsed query, sorted by service then account.
/// - Throws: `errSecItemNotFound` when none match.
private func matches(of parsed: ParsedDictionary, in vault: any RequestStore, withSecrets: Bool) throws(SecItemFailure)
    -> [Item]
{
    guard case .stored(let itemClass)? = parsed.itemClass else {
        throw SecItemFailure(errSecItemNotFound, "Fob holds no items of this class")
    }
    let values = parsed.attributes
    var found = try store { () throws(KeychainError) in
        // No one-time seed or custom field value: no SecItem attribute holds one.
        try vault.items(matching: values.storeQuery(itemClass), limit: .all, detail: withSecrets ? .secret : .listing)
    }
    if values.needsLocalFilter {
        found = found.filter(values.matches)
        guard !found.isEmpty else { throw SecItemFailure(errSecItemNotFound, "no item matches the query") }
    }
    return found
}

/// The result object for `items` by the return keys and limit, as Apple
/// documents it: one kind of result alone is that value (`Data` for data or
/// a persistent reference, a ``SecKeychainItem`` for a reference);
/// attributes, or more than one kind, give a dictionary holding
/// `kSecValueData`, `kSecValuePersistentRef` and `kSecValueRef` beside the
/// attributes asked for; several matches give an array of those.
private func resultValue(for items: [Item], parsed: ParsedDictionary, limit: ResultLimit) -> AnyObject {
    let kinds = [parsed.returnData, parsed.returnAttributes, parsed.returnPersistentRef, parsed.returnRef]
        .filter { $0 }.count
    let values: [Any]
    if parsed.returnAttributes || kinds > 1 {
        values = items.map { item in
            var out = parsed.returnAttributes ? attributeDictionary(item) : [:]
            if parsed.returnData { out[kSecValueData] = secretData(item) }
            if parsed.returnPersistentRef { out[kSecValuePersistentRef] = PersistentReference.make(item) }
            if parsed.returnRef { out[kSecValueRef] = SecKeychainItem(item) }
            return out
        }
    } else if parsed.returnPersistentRef {
        values = items.map(PersistentReference.make)
    } else if parsed.returnRef {
        values = items.map(SecKeychainItem.init)
    } else {
        values = items.map(secretData)
    }
    return limit == .one ? values[0] as AnyObject : values as AnyObject
}

private func secretData(_ item: Item) -> Data {
    item.secret?.withUnsafeBytes { Data($0) } ?? Data()
}

/// An item's attributes under Apple's keys and value types: those of its
/// class always (with their defaults), the optional ones when set.
private func attributeDictionary(_ item: Item) -> [String: Any] {
    var out: [String: Any] = [
        kSecClass: item.itemClass == .genericPassword ? kSecClassGenericPassword : kSecClassInternetPassword,
        item.itemClass == .genericPassword ? kSecAttrService : kSecAttrServer: item.service,
        kSecAttrAccount: item.account,
        kSecAttrAccessGroup: item.accessGroup,
        kSecAttrAccessible: accessibilityName(item.accessible, item.deviceBinding),
        kSecAttrCreationDate: item.created,
        kSecAttrModificationDate: item.modified,
        kSecAttrSynchronizable: item.synchronizable,
        kFobAttrKind: item.kind.rawValue,
    ]
    if item.itemClass == .internetPassword {
        out[kSecAttrPort] = item.port
        out[kSecAttrPath] = item.path
        out[kSecAttrSecurityDomain] = item.securityDomain
        if !item.internetProtocol.isEmpty { out[kSecAttrProtocol] = item.internetProtocol }
        if !item.authenticationType.isEmpty { out[kSecAttrAuthenticationType] = item.authenticationType }
    }
    if let label = item.label { out[kSecAttrLabel] = label }
    if let comment = item.comment { out[kSecAttrComment] = comment }
    if let generic = item.generic { out[kSecAttrGeneric] = Data(generic) }
    if let description = item.itemDescription { out[kSecAttrDescription] = description }
    if let type = item.itemType { out[kSecAttrType] = NSNumber(value: type) }
    if let creator = item.creator { out[kSecAttrCreator] = NSNumber(value: creator) }
    if item.isInvisible { out[kSecAttrIsInvisible] = true }
    if item.isNegative { out[kSecAttrIsNegative] = true }
    if let flags = item.accessControlFlags {
        out[kSecAttrAccessControl] = SecAccessControl(
            protection: accessibilityName(item.accessible, item.deviceBinding),
            flags: SecAccessControlCreateFlags(rawValue: CFOptionFlags(truncatingIfNeeded: flags)))
    }
    return out
}
