import FobStore
import Foundation
import Testing

@testable import FobSecurity

extension SecItemTests {
    @Test func statusesHaveApplesValues() {
        #expect(errSecSuccess == 0)
        #expect(noErr == 0)
        #expect(errSecUnimplemented == -4)
        #expect(errSecIO == -36)
        #expect(errSecParam == -50)
        #expect(errSecAuthFailed == -25293)
        #expect(errSecNoSuchKeychain == -25294)
        #expect(errSecDuplicateItem == -25299)
        #expect(errSecItemNotFound == -25300)
        #expect(errSecNoSuchAttr == -25303)
        #expect(errSecInteractionNotAllowed == -25308)
        #expect(errSecDecode == -26275)
    }

    @Test(arguments: [
        (KeychainError.duplicateItem("x"), errSecDuplicateItem),
        (.itemNotFound("x"), errSecItemNotFound),
        (.authFailed, errSecAuthFailed),
        (.interactionNotAllowed("locked"), errSecInteractionNotAllowed),
        (.decode("bad"), errSecDecode),
        (.param("bad"), errSecParam),
        (.noSuchKeychain("/x"), errSecNoSuchKeychain),
        (.io("disk full"), errSecIO),
    ])
    func storeErrorsMapToStatuses(error: KeychainError, status: OSStatus) {
        #expect(SecItemFailure(error).status == status)
    }

    @Test func errorMessages() {
        let expected: [OSStatus: String] = [
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
        for (status, message) in expected {
            #expect(SecCopyErrorMessageString(status, nil) as String? == message)
        }
        #expect(SecCopyErrorMessageString(-12345, nil) == "OSStatus -12345")
    }

    @Test func constantsHaveApplesValues() {
        let values: [(String, String)] = [
            (kSecClass, "class"), (kSecClassGenericPassword, "genp"), (kSecClassInternetPassword, "inet"),
            (kSecAttrAccount, "acct"), (kSecAttrService, "svce"), (kSecAttrServer, "srvr"), (kSecAttrLabel, "labl"),
            (kSecAttrComment, "icmt"), (kSecAttrAccessGroup, "agrp"), (kSecAttrAccessible, "pdmn"),
            (kSecAttrCreationDate, "cdat"), (kSecAttrModificationDate, "mdat"), (kSecAttrGeneric, "gena"),
            (kSecAttrAccessibleWhenUnlocked, "ak"), (kSecAttrAccessibleAfterFirstUnlock, "ck"),
            (kSecAttrAccessibleWhenUnlockedThisDeviceOnly, "aku"),
            (kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, "cku"),
            (kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, "akpu"), (kSecAttrAccessibleAlways, "dk"),
            (kSecValueData, "v_Data"), (kSecReturnData, "r_Data"), (kSecReturnAttributes, "r_Attributes"),
            (kSecReturnRef, "r_Ref"), (kSecMatchLimit, "m_Limit"), (kSecMatchLimitOne, "m_LimitOne"),
            (kSecMatchLimitAll, "m_LimitAll"),
        ]
        for (constant, value) in values { #expect(constant == value) }
    }
}
