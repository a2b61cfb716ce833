// Keychain constants with Apple's names and values (the values are the
// strings and numbers Apple's Security framework uses: SecItem.h, SecBase.h).
// Apple: https://developer.apple.com/documentation/security/keychain_services/keychain_items/item_attribute_keys_and_values

// MARK: - Item class

/// The item class key (`"class"`); required in every query.
public let kSecClass: CFString = "class"
/// A generic password (`"genp"`): keyed by service, account, access group and synchronizable.
public let kSecClassGenericPassword: CFString = "genp"
/// An internet password (`"inet"`): keyed by server (stored as the item's service), protocol,
/// port, path, authentication type, security domain, account, access group and synchronizable.
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

// MARK: - Internet-password attributes
// Apple: https://developer.apple.com/documentation/security/ksecclassinternetpassword
// The primary key of an internet password is server, protocol, port, path,
// authentication type, security domain, account, access group and
// synchronizable (https://developer.apple.com/documentation/security/errsecduplicateitem).

/// The security domain of an internet password (`"sdmn"`), a `String`; part of the primary key.
public let kSecAttrSecurityDomain: CFString = "sdmn"
/// The protocol of an internet password (`"ptcl"`): one of the `kSecAttrProtocol…` values; part of the primary key.
public let kSecAttrProtocol: CFString = "ptcl"
/// The authentication scheme of an internet password (`"atyp"`): one of the
/// `kSecAttrAuthenticationType…` values; part of the primary key.
public let kSecAttrAuthenticationType: CFString = "atyp"
/// The port of an internet password (`"port"`), an `Int` from 0 to 65,535; part of the primary key.
public let kSecAttrPort: CFString = "port"
/// The path of an internet password (`"path"`), a `String`, such as a URL path; part of the primary key.
public let kSecAttrPath: CFString = "path"

// MARK: - Attributes of both password classes

/// What kind of item this is, for people (`"desc"`), a `String`.
public let kSecAttrDescription: CFString = "desc"
/// The item's creator (`"crtr"`): a four-character code as a number (`UInt32`).
public let kSecAttrCreator: CFString = "crtr"
/// The item's type (`"type"`): a four-character code as a number (`UInt32`).
public let kSecAttrType: CFString = "type"
/// Whether the item is hidden from user-facing lists (`"invi"`), a `Bool`.
public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a placeholder without a valid password (`"nega"`), a `Bool`.
public let kSecAttrIsNegative: CFString = "nega"
/// The item's access control (`"accc"`): a ``SecAccessControl``. Not together with `kSecAttrAccessible`.
public let kSecAttrAccessControl: CFString = "accc"
/// Whether the item is synchronised through iCloud Keychain (`"sync"`), a `Bool`.
/// Fob never synchronises: an item added with `true` is kept locally and
/// marked, as on a device without iCloud Keychain. The value is part of the
/// primary key; a query without it matches only items stored with `false`.
public let kSecAttrSynchronizable: CFString = "sync"
/// A query value of `kSecAttrSynchronizable` (`"syna"`) matching items stored with either value.
public let kSecAttrSynchronizableAny: CFString = "syna"

// MARK: - kSecAttrProtocol values (Apple: SecItem.h)

/// FTP (`"ftp "`).
public let kSecAttrProtocolFTP: CFString = "ftp "
/// A client-side FTP account (`"ftpa"`).
public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
/// HTTP (`"http"`).
public let kSecAttrProtocolHTTP: CFString = "http"
/// IRC (`"irc "`).
public let kSecAttrProtocolIRC: CFString = "irc "
/// NNTP (`"nntp"`).
public let kSecAttrProtocolNNTP: CFString = "nntp"
/// POP3 (`"pop3"`).
public let kSecAttrProtocolPOP3: CFString = "pop3"
/// SMTP (`"smtp"`).
public let kSecAttrProtocolSMTP: CFString = "smtp"
/// SOCKS (`"sox "`).
public let kSecAttrProtocolSOCKS: CFString = "sox "
/// IMAP (`"imap"`).
public let kSecAttrProtocolIMAP: CFString = "imap"
/// LDAP (`"ldap"`).
public let kSecAttrProtocolLDAP: CFString = "ldap"
/// AppleTalk (`"atlk"`).
public let kSecAttrProtocolAppleTalk: CFString = "atlk"
/// AFP over TCP (`"afp "`).
public let kSecAttrProtocolAFP: CFString = "afp "
/// Telnet (`"teln"`).
public let kSecAttrProtocolTelnet: CFString = "teln"
/// SSH (`"ssh "`).
public let kSecAttrProtocolSSH: CFString = "ssh "
/// FTP over TLS/SSL (`"ftps"`).
public let kSecAttrProtocolFTPS: CFString = "ftps"
/// HTTP over TLS/SSL (`"htps"`).
public let kSecAttrProtocolHTTPS: CFString = "htps"
/// An HTTP proxy (`"htpx"`).
public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
/// An HTTPS proxy (`"htsx"`).
public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
/// An FTP proxy (`"ftpx"`).
public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
/// SMB (`"smb "`).
public let kSecAttrProtocolSMB: CFString = "smb "
/// RTSP (`"rtsp"`).
public let kSecAttrProtocolRTSP: CFString = "rtsp"
/// An RTSP proxy (`"rtsx"`).
public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
/// DAAP (`"daap"`).
public let kSecAttrProtocolDAAP: CFString = "daap"
/// Remote Apple Events (`"eppc"`).
public let kSecAttrProtocolEPPC: CFString = "eppc"
/// IPP (`"ipp "`).
public let kSecAttrProtocolIPP: CFString = "ipp "
/// NNTP over TLS/SSL (`"ntps"`).
public let kSecAttrProtocolNNTPS: CFString = "ntps"
/// LDAP over TLS/SSL (`"ldps"`).
public let kSecAttrProtocolLDAPS: CFString = "ldps"
/// Telnet over TLS/SSL (`"tels"`).
public let kSecAttrProtocolTelnetS: CFString = "tels"
/// IMAP over TLS/SSL (`"imps"`).
public let kSecAttrProtocolIMAPS: CFString = "imps"
/// IRC over TLS/SSL (`"ircs"`).
public let kSecAttrProtocolIRCS: CFString = "ircs"
/// POP3 over TLS/SSL (`"pops"`).
public let kSecAttrProtocolPOP3S: CFString = "pops"
/// CIFS (`"cifs"`).
public let kSecAttrProtocolCIFS: CFString = "cifs"
/// Subversion (`"svn "`).
public let kSecAttrProtocolSVN: CFString = "svn "

// MARK: - kSecAttrAuthenticationType values (Apple: SecItem.h)

/// Windows NT LAN Manager (`"ntlm"`).
public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
/// Microsoft Network default (`"msna"`).
public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
/// Distributed Password authentication (`"dpaa"`).
public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
/// Remote Password authentication (`"rpaa"`).
public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
/// HTTP Basic (`"http"`).
public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// HTTP Digest (`"httd"`).
public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
/// An HTML form (`"form"`).
public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// The default scheme (`"dflt"`).
public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"

// MARK: - Use keys
// Apple: https://developer.apple.com/documentation/security/keychain_services/keychain_items/item_return_result_keys
// Fob never shows authentication UI and stores no item that would need it
// (see SecAccessControlCreateWithFlags), so these keys never change a result.

/// Selects the data-protection keychain on macOS (`"nleg"`); a `Bool`, accepted and ignored.
public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// Whether authentication UI may be shown (`"u_AuthUI"`): ``kSecUseAuthenticationUIAllow``,
/// ``kSecUseAuthenticationUIFail`` or ``kSecUseAuthenticationUISkip``. Accepted; no Fob item needs UI.
public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// Allow authentication UI (`"u_AuthUIA"`).
public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Fail with `errSecInteractionNotAllowed` rather than show authentication UI (`"u_AuthUIF"`).
public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Skip items that need authentication UI (`"u_AuthUIS"`).
public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// The deprecated predecessor of ``kSecUseAuthenticationUI`` (`"u_NoAuthUI"`), a `Bool`; accepted.
public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
/// A prompt for authentication UI (`"u_OpPrompt"`), a `String`; accepted and never shown.
public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// A `LAContext` to authenticate with (`"u_AuthCtx"`): any object is accepted and not used.
public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"

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
/// An item reference (`"v_Ref"`): a ``SecKeychainItem`` from `kSecReturnRef`,
/// taken by queries to name that item.
public let kSecValueRef: CFString = "v_Ref"
/// A persistent item reference (`"v_PersistentRef"`), a `Data` that
/// ``kSecReturnPersistentRef`` returned: finds exactly that item, for its whole life.
public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// Return the secret as `Data` (`"r_Data"`), a `Bool`.
public let kSecReturnData: CFString = "r_Data"
/// Return the attributes as `[String: Any]` (`"r_Attributes"`), a `Bool`.
public let kSecReturnAttributes: CFString = "r_Attributes"
/// Return an item reference (`"r_Ref"`): a ``SecKeychainItem`` that
/// `kSecValueRef` takes in later queries.
public let kSecReturnRef: CFString = "r_Ref"
/// Return a persistent reference (`"r_PersistentRef"`), a `Bool`: a `Data` of 20 bytes
/// (the class's four characters and the item's 16-byte identifier), stable
/// while the item exists, updates included.
public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// How many matches to return (`"m_Limit"`): ``kSecMatchLimitOne`` (the default),
/// ``kSecMatchLimitAll``, or a positive `Int`.
public let kSecMatchLimit: CFString = "m_Limit"
/// Return the first match only (`"m_LimitOne"`); the result is a single value.
public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Return every match (`"m_LimitAll"`); the result is an array.
public let kSecMatchLimitAll: CFString = "m_LimitAll"
