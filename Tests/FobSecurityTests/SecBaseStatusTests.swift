import Foundation
import Testing

@testable import FobSecurity

/// Every general and keychain result code of Apple's SecBase.h (the
/// `errSec…` enumeration), with Apple's value and SecCopyErrorMessageString's
/// text, so Keychain code that names them (errSecInternalComponent, say)
/// builds and reports as on Apple's platforms.
@Suite struct SecBaseStatusTests {
    static let table: [(OSStatus, OSStatus, String)] = [
        (errSecSuccess, 0, "No error."),
        (errSecUnimplemented, -4, "Function or operation not implemented."),
        (errSecDiskFull, -34, "The disk is full."),
        (errSecIO, -36, "I/O error."),
        (errSecOpWr, -49, "File already open with write permission."),
        (errSecParam, -50, "One or more parameters passed to a function were not valid."),
        (errSecWrPerm, -61, "Write permissions error."),
        (errSecAllocate, -108, "Failed to allocate memory."),
        (errSecUserCanceled, -128, "User canceled the operation."),
        (errSecBadReq, -909, "Bad parameter or invalid state for operation."),
        (errSecInternalComponent, -2070, "An internal component experienced an error."),
        (errSecCoreFoundationUnknown, -4960, "An unknown Core Foundation error occurred."),
        (errSecMissingEntitlement, -34018, "A required entitlement isn't present."),
        (errSecRestrictedAPI, -34020, "Client is restricted and is not permitted to perform this operation."),
        (errSecInvalidPasswordRef, -25261, "The password reference was invalid."),
        (errSecNotAvailable, -25291, "No keychain is available. You may need to restart your computer."),
        (errSecReadOnly, -25292, "This keychain cannot be modified."),
        (errSecAuthFailed, -25293, "The user name or passphrase you entered is not correct."),
        (errSecNoSuchKeychain, -25294, "The specified keychain could not be found."),
        (errSecInvalidKeychain, -25295, "The specified keychain is not a valid keychain file."),
        (errSecDuplicateKeychain, -25296, "A keychain with the same name already exists."),
        (errSecDuplicateCallback, -25297, "The specified callback function is already installed."),
        (errSecInvalidCallback, -25298, "The specified callback function is not valid."),
        (errSecDuplicateItem, -25299, "The specified item already exists in the keychain."),
        (errSecItemNotFound, -25300, "The specified item could not be found in the keychain."),
        (errSecBufferTooSmall, -25301, "There is not enough memory available to use the specified item."),
        (
            errSecDataTooLarge, -25302,
            "This item contains information which is too large or in a format that cannot be displayed."
        ),
        (errSecNoSuchAttr, -25303, "The specified attribute does not exist."),
        (
            errSecInvalidItemRef, -25304,
            "The specified item is no longer valid. It may have been deleted from the keychain."
        ),
        (errSecInvalidSearchRef, -25305, "Unable to search the current keychain."),
        (errSecNoSuchClass, -25306, "The specified item does not appear to be a valid keychain item."),
        (errSecNoDefaultKeychain, -25307, "A default keychain could not be found."),
        (errSecInteractionNotAllowed, -25308, "User interaction is not allowed."),
        (errSecReadOnlyAttr, -25309, "The specified attribute could not be modified."),
        (
            errSecWrongSecVersion, -25310,
            "This keychain was created by a different version of the system software and cannot be opened."
        ),
        (errSecKeySizeNotAllowed, -25311, "This item specifies a key size which is too large."),
        (
            errSecNoStorageModule, -25312,
            "A required component (data storage module) could not be loaded. You may need to restart your computer."
        ),
        (
            errSecNoCertificateModule, -25313,
            "A required component (certificate module) could not be loaded. You may need to restart your computer."
        ),
        (
            errSecNoPolicyModule, -25314,
            "A required component (policy module) could not be loaded. You may need to restart your computer."
        ),
        (errSecInteractionRequired, -25315, "User interaction is required, but is currently not allowed."),
        (errSecDataNotAvailable, -25316, "The contents of this item cannot be retrieved."),
        (errSecDataNotModifiable, -25317, "The contents of this item cannot be modified."),
        (
            errSecCreateChainFailed, -25318,
            "One or more certificates required to validate this certificate cannot be found."
        ),
        (errSecInvalidPrefsDomain, -25319, "The specified preferences domain is not valid."),
        (errSecInDarkWake, -25320, "In dark wake, no UI possible"),
        (errSecDecode, -26275, "Unable to decode the provided data."),
    ]

    @Test func everySecBaseStatusHasApplesValueAndMessage() {
        for (status, value, message) in Self.table {
            #expect(status == value, "\(message)")
            #expect(SecCopyErrorMessageString(status, nil) as String? == message, "\(value)")
        }
        #expect(Set(Self.table.map(\.1)).count == Self.table.count)
    }
}
