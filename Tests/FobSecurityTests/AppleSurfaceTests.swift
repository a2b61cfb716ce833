import FobStore
import Foundation
import Testing

@testable import FobSecurity

/// Names, values and messages of the Apple surface FobSecurity provides.
@Suite struct AppleSurfaceTests {
    @Test func newStatusesHaveApplesValues() {
        let values: [(OSStatus, OSStatus)] = [
            (errSecDiskFull, -34), (errSecDskFull, -34), (errSecOpWr, -49), (errSecWrPerm, -61),
            (errSecAllocate, -108), (errSecUserCanceled, -128), (errSecBadReq, -909),
            (errSecMissingEntitlement, -34018), (errSecNotAvailable, -25291), (errSecReadOnly, -25292),
            (errSecInvalidKeychain, -25295), (errSecDataTooLarge, -25302), (errSecInvalidItemRef, -25304),
            (errSecNoSuchClass, -25306), (errSecReadOnlyAttr, -25309), (errSecInteractionRequired, -25315),
            (errSecDataNotAvailable, -25316), (errSecDataNotModifiable, -25317),
        ]
        for (constant, value) in values { #expect(constant == value) }
    }

    @Test func everyDeclaredStatusHasApplesMessage() {
        let declared: [OSStatus] = [
            errSecSuccess, errSecUnimplemented, errSecDiskFull, errSecIO, errSecOpWr, errSecParam, errSecWrPerm,
            errSecAllocate, errSecUserCanceled, errSecBadReq, errSecMissingEntitlement, errSecNotAvailable,
            errSecReadOnly, errSecAuthFailed, errSecNoSuchKeychain, errSecInvalidKeychain, errSecDuplicateItem,
            errSecItemNotFound, errSecDataTooLarge, errSecNoSuchAttr, errSecInvalidItemRef, errSecNoSuchClass,
            errSecInteractionNotAllowed, errSecReadOnlyAttr, errSecInteractionRequired, errSecDataNotAvailable,
            errSecDataNotModifiable, errSecDecode,
        ]
        for status in declared {
            let message = SecCopyErrorMessageString(status, nil)
            #expect(message != nil && message != "OSStatus \(status)", "\(status)")
        }
        #expect(SecCopyErrorMessageString(errSecMissingEntitlement, nil) == "A required entitlement isn't present.")
        #expect(SecCopyErrorMessageString(errSecUserCanceled, nil) == "User canceled the operation.")
        #expect(
            SecCopyErrorMessageString(errSecNotAvailable, nil)
                == "No keychain is available. You may need to restart your computer.")
        // Every status a store error maps to has a message.
        for error in [
            KeychainError.duplicateItem(""), .itemNotFound(""), .authFailed, .interactionNotAllowed(""),
            .decode(""), .param(""), .noSuchKeychain(""), .io(""),
        ] {
            #expect(statusMessages[error.status] != nil, "\(error)")
        }
    }

    @Test func newKeysHaveApplesValues() {
        let values: [(String, String)] = [
            (kSecAttrSecurityDomain, "sdmn"), (kSecAttrProtocol, "ptcl"), (kSecAttrAuthenticationType, "atyp"),
            (kSecAttrPort, "port"), (kSecAttrPath, "path"), (kSecAttrDescription, "desc"), (kSecAttrCreator, "crtr"),
            (kSecAttrType, "type"), (kSecAttrIsInvisible, "invi"), (kSecAttrIsNegative, "nega"),
            (kSecAttrAccessControl, "accc"), (kSecAttrSynchronizable, "sync"), (kSecAttrSynchronizableAny, "syna"),
            (kSecValuePersistentRef, "v_PersistentRef"), (kSecReturnPersistentRef, "r_PersistentRef"),
            (kSecValueRef, "v_Ref"), (kSecUseDataProtectionKeychain, "nleg"), (kSecUseAuthenticationUI, "u_AuthUI"),
            (kSecUseAuthenticationUIAllow, "u_AuthUIA"), (kSecUseAuthenticationUIFail, "u_AuthUIF"),
            (kSecUseAuthenticationUISkip, "u_AuthUIS"), (kSecUseOperationPrompt, "u_OpPrompt"),
            (kSecUseAuthenticationContext, "u_AuthCtx"), (kSecUseNoAuthenticationUI, "u_NoAuthUI"),
            (kSecAttrAccessibleAlwaysThisDeviceOnly, "dku"),
        ]
        for (constant, value) in values { #expect(constant == value) }
    }

    @Test func protocolAndAuthenticationTypeConstantsHaveApplesValues() {
        let protocols: [(String, String)] = [
            (kSecAttrProtocolFTP, "ftp "), (kSecAttrProtocolFTPAccount, "ftpa"), (kSecAttrProtocolHTTP, "http"),
            (kSecAttrProtocolIRC, "irc "), (kSecAttrProtocolNNTP, "nntp"), (kSecAttrProtocolPOP3, "pop3"),
            (kSecAttrProtocolSMTP, "smtp"), (kSecAttrProtocolSOCKS, "sox "), (kSecAttrProtocolIMAP, "imap"),
            (kSecAttrProtocolLDAP, "ldap"), (kSecAttrProtocolAppleTalk, "atlk"), (kSecAttrProtocolAFP, "afp "),
            (kSecAttrProtocolTelnet, "teln"), (kSecAttrProtocolSSH, "ssh "), (kSecAttrProtocolFTPS, "ftps"),
            (kSecAttrProtocolHTTPS, "htps"), (kSecAttrProtocolHTTPProxy, "htpx"), (kSecAttrProtocolHTTPSProxy, "htsx"),
            (kSecAttrProtocolFTPProxy, "ftpx"), (kSecAttrProtocolSMB, "smb "), (kSecAttrProtocolRTSP, "rtsp"),
            (kSecAttrProtocolRTSPProxy, "rtsx"), (kSecAttrProtocolDAAP, "daap"), (kSecAttrProtocolEPPC, "eppc"),
            (kSecAttrProtocolIPP, "ipp "), (kSecAttrProtocolNNTPS, "ntps"), (kSecAttrProtocolLDAPS, "ldps"),
            (kSecAttrProtocolTelnetS, "tels"), (kSecAttrProtocolIMAPS, "imps"), (kSecAttrProtocolIRCS, "ircs"),
            (kSecAttrProtocolPOP3S, "pops"), (kSecAttrProtocolCIFS, "cifs"), (kSecAttrProtocolSVN, "svn "),
        ]
        for (constant, value) in protocols { #expect(constant == value) }
        #expect(Set(protocols.map(\.1)).count == protocols.count)
        let types: [(String, String)] = [
            (kSecAttrAuthenticationTypeNTLM, "ntlm"), (kSecAttrAuthenticationTypeMSN, "msna"),
            (kSecAttrAuthenticationTypeDPA, "dpaa"), (kSecAttrAuthenticationTypeRPA, "rpaa"),
            (kSecAttrAuthenticationTypeHTTPBasic, "http"), (kSecAttrAuthenticationTypeHTTPDigest, "httd"),
            (kSecAttrAuthenticationTypeHTMLForm, "form"), (kSecAttrAuthenticationTypeDefault, "dflt"),
        ]
        for (constant, value) in types { #expect(constant == value) }
    }

    @Test func accessControlFlagsHaveApplesValues() {
        let flags: [(SecAccessControlCreateFlags, UInt)] = [
            (.userPresence, 1), (.biometryAny, 2), (.touchIDAny, 2), (.biometryCurrentSet, 8), (.touchIDCurrentSet, 8),
            (.devicePasscode, 16), (.watch, 32), (.companion, 32), (.or, 1 << 14), (.and, 1 << 15),
            (.privateKeyUsage, 1 << 30), (.applicationPassword, 1 << 31),
        ]
        for (flag, value) in flags { #expect(flag.rawValue == value) }
    }

    @Test func accessControlCreation() throws {
        var error: Unmanaged<CFError>?
        let made = try #require(
            SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, [], &error))
        #expect(error == nil)
        #expect(made.protection == kSecAttrAccessibleWhenUnlocked && made.flags.isEmpty)
        #expect(
            SecAccessControlCreateWithFlags(
                nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [.biometryAny, .or, .devicePasscode], nil) != nil
        )
        let optionalProtection: CFString? = kSecAttrAccessibleWhenUnlocked
        #expect(SecAccessControlCreateWithFlags(nil, optionalProtection as Any, [], nil) != nil)
        let bad: [(Any, SecAccessControlCreateFlags)] = [
            ("zz", []), (kSecAttrAccessibleAlways, []), (42, []), (kSecAttrAccessibleWhenUnlocked, [.or, .and]),
            (kSecAttrAccessibleWhenUnlocked, SecAccessControlCreateFlags(rawValue: 1 << 20)),
        ]
        for (protection, flags) in bad {
            var failure: Unmanaged<CFError>?
            #expect(SecAccessControlCreateWithFlags(nil, protection, flags, &failure) == nil)
            let cfError = try #require(failure?.takeRetainedValue())
            #expect(CFErrorGetCode(cfError) == Int(errSecParam))
            #expect(CFErrorGetDomain(cfError) == kCFErrorDomainOSStatus)
        }
        #expect(SecAccessControlCreateWithFlags(nil, "zz", [], nil) == nil)
    }

    @Test func cfErrorFunctions() {
        let error: CFError = CFErrorCreate(
            kCFAllocatorDefault, kCFErrorDomainOSStatus, CFIndex(errSecItemNotFound),
            [kCFErrorLocalizedDescriptionKey: "not here"])
        #expect(CFErrorGetCode(error) == -25300)
        #expect(CFErrorGetDomain(error) == "NSOSStatusErrorDomain")
        #expect(CFErrorCopyDescription(error) == "not here")
        #expect(CFErrorCopyUserInfo(error)[kCFErrorLocalizedDescriptionKey] as? String == "not here")
        let unmanaged = Unmanaged.passRetained(error)
        let thrown: Error = unmanaged.takeRetainedValue()
        #expect((thrown as NSError).domain == kCFErrorDomainOSStatus)
    }
}
