// Result codes with Apple's names, values and messages (Security framework
// SecBase.h, the `errSec…` enumeration of general and keychain result codes,
// whose comments give SecCopyErrorMessageString's text; Apple:
// https://developer.apple.com/documentation/security/security_framework_result_codes,
// which gives errSecInternalComponent's and errSecCoreFoundationUnknown's).
// The table ``statusMessages`` gives SecCopyErrorMessageString's text for
// each; every status FobSecurity returns is among them.

/// No error (0).
public let errSecSuccess: OSStatus = 0
/// No error (0), Apple's `MacTypes.h` name.
public let noErr: OSStatus = 0
/// Function or operation not implemented (-4): adding keys, certificates or identities.
public let errSecUnimplemented: OSStatus = -4
/// The disk is full (-34). Fob reports a full disk as ``errSecIO``.
public let errSecDiskFull: OSStatus = -34
/// The disk is full (-34), Apple's older name.
public let errSecDskFull: OSStatus = -34
/// I/O error (-36): the vault cannot be read or written (a full disk included).
public let errSecIO: OSStatus = -36
/// File already open with write permission (-49).
public let errSecOpWr: OSStatus = -49
/// One or more parameters passed to a function were not valid (-50).
public let errSecParam: OSStatus = -50
/// Write permissions error (-61).
public let errSecWrPerm: OSStatus = -61
/// Failed to allocate memory (-108).
public let errSecAllocate: OSStatus = -108
/// User canceled the operation (-128). Fob shows no UI, so never returns it.
public let errSecUserCanceled: OSStatus = -128
/// Bad parameter or invalid state for operation (-909).
public let errSecBadReq: OSStatus = -909
/// An internal component experienced an error (-2070).
public let errSecInternalComponent: OSStatus = -2070
/// An unknown Core Foundation error occurred (-4960).
public let errSecCoreFoundationUnknown: OSStatus = -4960
/// The password reference was invalid (-25261).
public let errSecInvalidPasswordRef: OSStatus = -25261
/// A required entitlement isn't present (-34018). Linux has no entitlements:
/// every access group is open to every program, so Fob never returns it.
public let errSecMissingEntitlement: OSStatus = -34018
/// Client is restricted and is not permitted to perform this operation (-34020).
public let errSecRestrictedAPI: OSStatus = -34020
/// No keychain is available (-25291).
public let errSecNotAvailable: OSStatus = -25291
/// This keychain cannot be modified (-25292).
public let errSecReadOnly: OSStatus = -25292
/// The user name or passphrase you entered is not correct (-25293): a wrong
/// master password, or access control that needs a passcode or biometry Fob cannot check.
public let errSecAuthFailed: OSStatus = -25293
/// The specified keychain could not be found (-25294): no vault at the path.
public let errSecNoSuchKeychain: OSStatus = -25294
/// The specified keychain is not a valid keychain file (-25295).
public let errSecInvalidKeychain: OSStatus = -25295
/// A keychain with the same name already exists (-25296).
public let errSecDuplicateKeychain: OSStatus = -25296
/// The specified callback function is already installed (-25297).
public let errSecDuplicateCallback: OSStatus = -25297
/// The specified callback function is not valid (-25298).
public let errSecInvalidCallback: OSStatus = -25298
/// The specified item already exists in the keychain (-25299).
public let errSecDuplicateItem: OSStatus = -25299
/// The specified item could not be found in the keychain (-25300).
public let errSecItemNotFound: OSStatus = -25300
/// There is not enough memory available to use the specified item (-25301).
public let errSecBufferTooSmall: OSStatus = -25301
/// This item contains information which is too large or in a format that cannot be displayed (-25302).
public let errSecDataTooLarge: OSStatus = -25302
/// The specified attribute does not exist (-25303): an attribute of the other password class.
public let errSecNoSuchAttr: OSStatus = -25303
/// The specified item is no longer valid (-25304).
public let errSecInvalidItemRef: OSStatus = -25304
/// Unable to search the current keychain (-25305).
public let errSecInvalidSearchRef: OSStatus = -25305
/// The specified item does not appear to be a valid keychain item (-25306).
public let errSecNoSuchClass: OSStatus = -25306
/// A default keychain could not be found (-25307).
public let errSecNoDefaultKeychain: OSStatus = -25307
/// User interaction is not allowed (-25308): the vault is locked or no master password is available.
public let errSecInteractionNotAllowed: OSStatus = -25308
/// The specified attribute could not be modified (-25309).
public let errSecReadOnlyAttr: OSStatus = -25309
/// This keychain was created by a different version of the system software and cannot be opened (-25310).
public let errSecWrongSecVersion: OSStatus = -25310
/// This item specifies a key size which is too large (-25311).
public let errSecKeySizeNotAllowed: OSStatus = -25311
/// A required component (data storage module) could not be loaded (-25312).
public let errSecNoStorageModule: OSStatus = -25312
/// A required component (certificate module) could not be loaded (-25313).
public let errSecNoCertificateModule: OSStatus = -25313
/// A required component (policy module) could not be loaded (-25314).
public let errSecNoPolicyModule: OSStatus = -25314
/// User interaction is required, but is currently not allowed (-25315).
public let errSecInteractionRequired: OSStatus = -25315
/// The contents of this item cannot be retrieved (-25316).
public let errSecDataNotAvailable: OSStatus = -25316
/// The contents of this item cannot be modified (-25317).
public let errSecDataNotModifiable: OSStatus = -25317
/// One or more certificates required to validate this certificate cannot be found (-25318).
public let errSecCreateChainFailed: OSStatus = -25318
/// The specified preferences domain is not valid (-25319).
public let errSecInvalidPrefsDomain: OSStatus = -25319
/// In dark wake, no UI possible (-25320).
public let errSecInDarkWake: OSStatus = -25320
/// Unable to decode the provided data (-26275): the vault is damaged or not a Fob vault.
public let errSecDecode: OSStatus = -26275

/// Apple's message (SecBase.h) for each status declared here.
let statusMessages: [OSStatus: String] = [
    errSecSuccess: "No error.",
    errSecUnimplemented: "Function or operation not implemented.",
    errSecDiskFull: "The disk is full.",
    errSecIO: "I/O error.",
    errSecOpWr: "File already open with write permission.",
    errSecParam: "One or more parameters passed to a function were not valid.",
    errSecWrPerm: "Write permissions error.",
    errSecAllocate: "Failed to allocate memory.",
    errSecUserCanceled: "User canceled the operation.",
    errSecBadReq: "Bad parameter or invalid state for operation.",
    errSecInternalComponent: "An internal component experienced an error.",
    errSecCoreFoundationUnknown: "An unknown Core Foundation error occurred.",
    errSecInvalidPasswordRef: "The password reference was invalid.",
    errSecMissingEntitlement: "A required entitlement isn't present.",
    errSecRestrictedAPI: "Client is restricted and is not permitted to perform this operation.",
    errSecNotAvailable: "No keychain is available. You may need to restart your computer.",
    errSecReadOnly: "This keychain cannot be modified.",
    errSecAuthFailed: "The user name or passphrase you entered is not correct.",
    errSecNoSuchKeychain: "The specified keychain could not be found.",
    errSecInvalidKeychain: "The specified keychain is not a valid keychain file.",
    errSecDuplicateKeychain: "A keychain with the same name already exists.",
    errSecDuplicateCallback: "The specified callback function is already installed.",
    errSecInvalidCallback: "The specified callback function is not valid.",
    errSecDuplicateItem: "The specified item already exists in the keychain.",
    errSecItemNotFound: "The specified item could not be found in the keychain.",
    errSecBufferTooSmall: "There is not enough memory available to use the specified item.",
    errSecDataTooLarge: "This item contains information which is too large or in a format that cannot be displayed.",
    errSecNoSuchAttr: "The specified attribute does not exist.",
    errSecInvalidItemRef: "The specified item is no longer valid. It may have been deleted from the keychain.",
    errSecInvalidSearchRef: "Unable to search the current keychain.",
    errSecNoSuchClass: "The specified item does not appear to be a valid keychain item.",
    errSecNoDefaultKeychain: "A default keychain could not be found.",
    errSecInteractionNotAllowed: "User interaction is not allowed.",
    errSecReadOnlyAttr: "The specified attribute could not be modified.",
    errSecWrongSecVersion:
        "This keychain was created by a different version of the system software and cannot be opened.",
    errSecKeySizeNotAllowed: "This item specifies a key size which is too large.",
    errSecNoStorageModule:
        "A required component (data storage module) could not be loaded. You may need to restart your computer.",
    errSecNoCertificateModule:
        "A required component (certificate module) could not be loaded. You may need to restart your computer.",
    errSecNoPolicyModule:
        "A required component (policy module) could not be loaded. You may need to restart your computer.",
    errSecInteractionRequired: "User interaction is required, but is currently not allowed.",
    errSecDataNotAvailable: "The contents of this item cannot be retrieved.",
    errSecDataNotModifiable: "The contents of this item cannot be modified.",
    errSecCreateChainFailed: "One or more certificates required to validate this certificate cannot be found.",
    errSecInvalidPrefsDomain: "The specified preferences domain is not valid.",
    errSecInDarkWake: "In dark wake, no UI possible",
    errSecDecode: "Unable to decode the provided data.",
]
