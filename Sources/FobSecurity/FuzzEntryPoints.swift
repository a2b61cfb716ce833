import Foundation

/// Entry points for the fuzz targets in `Fuzz/` (see
/// docs/fuzzing.md): pure functions from bytes to a decoded value or a
/// typed error. Not part of Fob's API; imported with `@_spi(Fuzz)`.
@_spi(Fuzz) public enum SecurityFuzzEntryPoints {
    /// Every key and constant value a dictionary can hold (`Constants.swift`).
    static let constants: [String] = [
        kSecClass, kSecClassGenericPassword, kSecClassInternetPassword, kSecClassCertificate,
        kSecClassKey, kSecClassIdentity, kSecAttrAccount, kSecAttrService, kSecAttrServer,
        kSecAttrLabel, kSecAttrComment, kSecAttrAccessGroup, kSecAttrAccessible, kSecAttrCreationDate,
        kSecAttrModificationDate, kSecAttrGeneric, kSecAttrSecurityDomain, kSecAttrProtocol,
        kSecAttrAuthenticationType, kSecAttrPort, kSecAttrPath, kSecAttrDescription, kSecAttrCreator,
        kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative, kSecAttrAccessControl,
        kSecAttrSynchronizable, kSecAttrSynchronizableAny, kSecAttrProtocolFTP,
        kSecAttrProtocolFTPAccount, kSecAttrProtocolHTTP, kSecAttrProtocolIRC, kSecAttrProtocolNNTP,
        kSecAttrProtocolPOP3, kSecAttrProtocolSMTP, kSecAttrProtocolSOCKS, kSecAttrProtocolIMAP,
        kSecAttrProtocolLDAP, kSecAttrProtocolAppleTalk, kSecAttrProtocolAFP, kSecAttrProtocolTelnet,
        kSecAttrProtocolSSH, kSecAttrProtocolFTPS, kSecAttrProtocolHTTPS, kSecAttrProtocolHTTPProxy,
        kSecAttrProtocolHTTPSProxy, kSecAttrProtocolFTPProxy, kSecAttrProtocolSMB, kSecAttrProtocolRTSP,
        kSecAttrProtocolRTSPProxy, kSecAttrProtocolDAAP, kSecAttrProtocolEPPC, kSecAttrProtocolIPP,
        kSecAttrProtocolNNTPS, kSecAttrProtocolLDAPS, kSecAttrProtocolTelnetS, kSecAttrProtocolIMAPS,
        kSecAttrProtocolIRCS, kSecAttrProtocolPOP3S, kSecAttrProtocolCIFS, kSecAttrProtocolSVN,
        kSecAttrAuthenticationTypeNTLM, kSecAttrAuthenticationTypeMSN, kSecAttrAuthenticationTypeDPA,
        kSecAttrAuthenticationTypeRPA, kSecAttrAuthenticationTypeHTTPBasic,
        kSecAttrAuthenticationTypeHTTPDigest, kSecAttrAuthenticationTypeHTMLForm,
        kSecAttrAuthenticationTypeDefault, kSecUseDataProtectionKeychain, kSecUseAuthenticationUI,
        kSecUseAuthenticationUIAllow, kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip,
        kSecUseNoAuthenticationUI, kSecUseOperationPrompt, kSecUseAuthenticationContext,
        kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock,
        kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, kSecAttrAccessibleAlways,
        kSecAttrAccessibleAlwaysThisDeviceOnly, kSecValueData, kSecValueRef, kSecValuePersistentRef,
        kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecMatchLimit,
        kSecMatchLimitOne, kSecMatchLimitAll,
    ]

    /// Builds a SecItem dictionary from `bytes` and decodes it for each
    /// role (add, copy, update query, update attributes), as `SecItemAdd`,
    /// `SecItemCopyMatching` and `SecItemUpdate` do before touching a vault.
    ///
    /// Layout, repeated until the bytes run out: a key byte (an index into
    /// the constants, or with the top bit set a short string key of that
    /// many bytes), a type byte (string, data, integer, boolean, double,
    /// array, null, date, a constant), a length byte, then the value.
    /// - Returns: how many roles accepted the dictionary.
    public static func decodeQuery(_ bytes: UnsafeRawBufferPointer) -> Int {
        var reader = Reader(bytes: bytes)
        var dictionary: [String: Any] = [:]
        while let keyByte = reader.byte() {
            let key: String
            if keyByte & 0x80 != 0 {
                key = String(decoding: reader.take(Int(keyByte & 0x7F)), as: UTF8.self)
            } else {
                key = constants[Int(keyByte) % constants.count]
            }
            guard let type = reader.byte(), let length = reader.byte() else { break }
            let payload = reader.take(Int(length))
            dictionary[key] = value(type: type, payload: payload)
        }
        var accepted = 0
        for role in [DictionaryRole.add, .copy, .updateQuery, .updateAttributes] {
            if (try? ParsedDictionary(dictionary, role: role)) != nil { accepted += 1 }
        }
        return accepted
    }

    private static func value(type: UInt8, payload: [UInt8]) -> Any {
        switch type % 9 {
        case 0: return String(decoding: payload, as: UTF8.self)
        case 1: return Data(payload)
        case 2: return NSNumber(value: payload.reduce(Int64(0)) { $0 << 8 | Int64($1) })
        case 3: return NSNumber(value: payload.first.map { $0 & 1 == 1 } ?? false)
        case 4:
            var bits: UInt64 = 0
            for byte in payload.prefix(8) { bits = bits << 8 | UInt64(byte) }
            return NSNumber(value: Double(bitPattern: bits))
        case 5: return payload.map { constants[Int($0) % constants.count] }
        case 6: return NSNull()
        case 7: return Date(timeIntervalSince1970: Double(payload.reduce(Int64(0)) { $0 << 8 | Int64($1) }))
        default: return constants[Int(payload.first ?? 0) % constants.count]
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }
        mutating func take(_ count: Int) -> [UInt8] {
            let end = min(bytes.count, offset + count)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }
}
