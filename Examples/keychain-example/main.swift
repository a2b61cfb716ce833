import Foundation

// A program written for Apple's SecItem API, as Keychain code is written,
// built on Linux against FobSecurity. It reads one generic password and
// prints it, or saves one (the secret on standard input), optionally in an
// access group; on failure it prints the status and its message. The
// end-to-end consent tests run copies of it as programs of their own.
//
// Usage: keychain-example [--save] [--group GROUP] SERVICE ACCOUNT
#if canImport(Security)
    import Security
#else
    import FobSecurity
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
var save = false
var group: String?
while let first = arguments.first, first.hasPrefix("--") {
    arguments.removeFirst()
    if first == "--save" {
        save = true
    } else if first == "--group", !arguments.isEmpty {
        group = arguments.removeFirst()
    } else {
        arguments = []
    }
}
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: keychain-example [--save] [--group GROUP] SERVICE ACCOUNT\n".utf8))
    exit(2)
}
var query: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: arguments[0],
    kSecAttrAccount as String: arguments[1],
]
if let group { query[kSecAttrAccessGroup as String] = group }
let status: OSStatus
var result: AnyObject?
if save {
    query[kSecValueData as String] = FileHandle.standardInput.readDataToEndOfFile()
    status = SecItemAdd(query as CFDictionary, nil)
} else {
    query[kSecReturnData as String] = true
    query[kSecMatchLimit as String] = kSecMatchLimitOne
    status = SecItemCopyMatching(query as CFDictionary, &result)
}
if status == errSecSuccess {
    if let data = result as? Data { print("secret: \(String(decoding: data, as: UTF8.self))") } else { print("saved") }
    exit(0)
}
print("status: \(status) \(SecCopyErrorMessageString(status, nil) ?? "OSStatus \(status)")")
exit(1)
