// Keychain constants with Apple's names and values (the values are the
// strings and numbers Apple's Security framework uses: SecItem.h, SecBase.h).

// MARK: - Item class

/// The item class key (`"class"`); required in every query.
public let kSecClass: CFString = "class"
/// A generic password (`"genp"`): keyed by service and account.
public let kSecClassGenericPassword: CFString = "genp"
/// An internet password (`"inet"`): keyed by server (stored as the item's service) and account.
public let kSecClassInternetPassword: CFString = "inet"
/// Certificates (`"cert"`): Fob holds none; queries find nothing, adds answer `errSecUnimplemented`.
public let kSecClassCertificate: CFString = "cert"
/// Cryptographic keys (`"keys"`): Fob holds none; queries find nothing, adds answer `errSecUnimplemented`.
public let kSecClassKey: CFString = "keys"
/// Identities (`"idnt"`): Fob holds none; queries find nothing, adds answer `errSecUnimplemented`.
public let kSecClassIdentity: CFString = "idnt"

// MARK: - Attributes Fob stores

/// The account name (`"acct"`), a `String`; part of the primary key.
public let kSecAttrAccount: CFString = "acct"
/// The service name of a generic password (`"svce"`), a `String`; part of the primary key.
public let kSecAttrService: CFString = "svce"
/// The server of an internet password (`"srvr"`), a `String`; stored as the item's service.
public let kSecAttrServer: CFString = "srvr"
/// A user-visible label (`"labl"`), a `String`.
public let kSecAttrLabel: CFString = "labl"
/// A user-editable comment (`"icmt"`), a `String`.
public let kSecAttrComment: CFString = "icmt"
/// The access group (`"agrp"`), a `String`; part of the primary key; empty by default.
public let kSecAttrAccessGroup: CFString = "agrp"
/// When the item may be read (`"pdmn"`): one of the `kSecAttrAccessible…` values.
public let kSecAttrAccessible: CFString = "pdmn"
/// The creation date (`"cdat"`), a `Date`; set by the store, matchable in queries.
public let kSecAttrCreationDate: CFString = "cdat"
/// The last modification date (`"mdat"`), a `Date`; set by the store, matchable in queries.
public let kSecAttrModificationDate: CFString = "mdat"
/// Application-defined bytes (`"gena"`), a `Data`; stored encrypted but not secret.
public let kSecAttrGeneric: CFString = "gena"

// MARK: - Fob's own attribute

/// Fob's item kind (`"fob_kind"`), one of ``kFobKindPassword`` (the default),
/// ``kFobKindToken``, ``kFobKindOAuth``, ``kFobKindNote``. Not an Apple key:
/// use it under `#if !canImport(Security)`. Token and OAuth items are the
/// ones `fob logout` deletes.
public let kFobAttrKind: CFString = "fob_kind"
/// A password (the default kind).
public let kFobKindPassword: CFString = "password"
/// A session token: deleted by `fob logout`.
public let kFobKindToken: CFString = "token"
/// An OAuth token set: deleted by `fob logout`.
public let kFobKindOAuth: CFString = "oauth"
/// A note.
public let kFobKindNote: CFString = "note"

// MARK: - Attributes Fob does not store (errSecNoSuchAttr)

/// `"desc"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrDescription: CFString = "desc"
/// `"crtr"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrCreator: CFString = "crtr"
/// `"type"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrType: CFString = "type"
/// `"invi"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrIsInvisible: CFString = "invi"
/// `"nega"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrIsNegative: CFString = "nega"
/// `"sdmn"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrSecurityDomain: CFString = "sdmn"
/// `"ptcl"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrProtocol: CFString = "ptcl"
/// `"atyp"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrAuthenticationType: CFString = "atyp"
/// `"port"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrPort: CFString = "port"
/// `"path"`: not stored by Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrPath: CFString = "path"
/// `"accc"`: access-control objects do not exist in Fob; using it answers `errSecNoSuchAttr`.
public let kSecAttrAccessControl: CFString = "accc"

// MARK: - Accepted and ignored

/// iCloud Keychain sync (`"sync"`): Fob never syncs. `false` and
/// ``kSecAttrSynchronizableAny`` are accepted; `true` answers `errSecUnimplemented`.
public let kSecAttrSynchronizable: CFString = "sync"
/// Matches synchronised and local items alike (`"syna"`).
public let kSecAttrSynchronizableAny: CFString = "syna"
/// Selects the data-protection keychain on macOS (`"nleg"`); a `Bool`, accepted and ignored.
public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// Whether authentication UI may be shown (`"u_AuthUI"`); Fob never shows any, so
/// every value behaves as ``kSecUseAuthenticationUIFail``.
public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// Allow authentication UI (`"u_AuthUIA"`).
public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Fail rather than show authentication UI (`"u_AuthUIF"`).
public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Skip items that need authentication UI (`"u_AuthUIS"`).
public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// A prompt for authentication UI (`"u_OpPrompt"`), a `String`; accepted and ignored.
public let kSecUseOperationPrompt: CFString = "u_OpPrompt"

// MARK: - Accessibility values

/// Readable while the vault is unlocked (`"ak"`): Fob's default.
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// Readable after the first unlock (`"ck"`).
public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// `"aku"`: stored as ``kSecAttrAccessibleWhenUnlocked`` (a Fob vault never leaves the machine).
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// `"cku"`: stored as ``kSecAttrAccessibleAfterFirstUnlock`` (a Fob vault never leaves the machine).
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// `"akpu"`: stored as ``kSecAttrAccessibleWhenUnlocked`` (a Fob vault always has a master password).
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
/// `"dk"` (deprecated by Apple): refused with `errSecParam`; Fob never reads a locked vault.
public let kSecAttrAccessibleAlways: CFString = "dk"
/// `"dku"` (deprecated by Apple): refused with `errSecParam`; Fob never reads a locked vault.
public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"

// MARK: - Values, results and limits

/// The secret (`"v_Data"`), a `Data` of up to 1 MiB.
public let kSecValueData: CFString = "v_Data"
/// An item reference (`"v_Ref"`): not implemented (`errSecUnimplemented`).
public let kSecValueRef: CFString = "v_Ref"
/// A persistent item reference (`"v_PersistentRef"`): not implemented (`errSecUnimplemented`).
public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// Return the secret as `Data` (`"r_Data"`), a `Bool`.
public let kSecReturnData: CFString = "r_Data"
/// Return the attributes as `[String: Any]` (`"r_Attributes"`), a `Bool`.
public let kSecReturnAttributes: CFString = "r_Attributes"
/// Return an item reference (`"r_Ref"`): `true` answers `errSecUnimplemented`.
public let kSecReturnRef: CFString = "r_Ref"
/// Return a persistent reference (`"r_PersistentRef"`): `true` answers `errSecUnimplemented`.
public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// How many matches to return (`"m_Limit"`): ``kSecMatchLimitOne`` (the default),
/// ``kSecMatchLimitAll``, or a positive `Int`.
public let kSecMatchLimit: CFString = "m_Limit"
/// Return the first match only (`"m_LimitOne"`); the result is a single value.
public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Return every match (`"m_LimitAll"`); the result is an array.
public let kSecMatchLimitAll: CFString = "m_LimitAll"

// MARK: - Statuses (SecBase.h)

/// No error (0).
public let errSecSuccess: OSStatus = 0
/// No error (0), Apple's `MacTypes.h` name.
public let noErr: OSStatus = 0
/// Function or operation not implemented (-4).
public let errSecUnimplemented: OSStatus = -4
/// I/O error (-36).
public let errSecIO: OSStatus = -36
/// One or more parameters passed to a function were not valid (-50).
public let errSecParam: OSStatus = -50
/// The user name or passphrase you entered is not correct (-25293).
public let errSecAuthFailed: OSStatus = -25293
/// The specified keychain could not be found (-25294).
public let errSecNoSuchKeychain: OSStatus = -25294
/// The specified item already exists in the keychain (-25299).
public let errSecDuplicateItem: OSStatus = -25299
/// The specified item could not be found in the keychain (-25300).
public let errSecItemNotFound: OSStatus = -25300
/// The specified attribute does not exist (-25303).
public let errSecNoSuchAttr: OSStatus = -25303
/// User interaction is not allowed (-25308): the vault is locked or no master password is available.
public let errSecInteractionNotAllowed: OSStatus = -25308
/// Unable to decode the provided data (-26275): the vault is damaged or not a Fob vault.
public let errSecDecode: OSStatus = -26275

/// Apple's message for each status this module returns.
let statusMessages: [OSStatus: String] = [
    errSecSuccess: "No error.",
    errSecUnimplemented: "Function or operation not implemented.",
    errSecIO: "I/O error.",
    errSecParam: "One or more parameters passed to a function were not valid.",
    errSecAuthFailed: "The user name or passphrase you entered is not correct.",
    errSecNoSuchKeychain: "The specified keychain could not be found.",
    errSecDuplicateItem: "The specified item already exists in the keychain.",
    errSecItemNotFound: "The specified item could not be found in the keychain.",
    errSecNoSuchAttr: "The specified attribute does not exist.",
    errSecInteractionNotAllowed: "User interaction is not allowed.",
    errSecDecode: "Unable to decode the provided data.",
]
