import Foundation

// A program written for Apple's SecItem API, as Keychain code is written,
// built on Linux against FobSecurity: it reads one generic password and
// prints it, or prints the status and its message. The end-to-end consent
// tests run it as a requester of its own.
//
// Usage: keychain-read SERVICE ACCOUNT
#if canImport(Security)
    import Security
#else
    import FobSecurity
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: keychain-read SERVICE ACCOUNT\n".utf8))
    exit(2)
}
let query: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: arguments[1],
    kSecAttrAccount as String: arguments[2],
    kSecReturnData as String: true,
    kSecMatchLimit as String: kSecMatchLimitOne,
]
var result: AnyObject?
let status = SecItemCopyMatching(query as CFDictionary, &result)
if status == errSecSuccess, let data = result as? Data {
    print("secret: \(String(decoding: data, as: UTF8.self))")
    exit(0)
}
let message = SecCopyErrorMessageString(status, nil) ?? "OSStatus \(status)"
print("status: \(status) \(message)")
exit(1)
