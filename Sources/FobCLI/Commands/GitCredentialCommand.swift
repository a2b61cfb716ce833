import FobAccess
import FobStore
import FoundationEssentials

/// `fob git-credential get|store|erase` (also run as `git-credential-fob`):
/// git's credential-helper protocol (gitcredentials(7)), keeping each
/// credential as an internet-password item: server = host, protocol
/// (Apple's four-character code), port, path and account = user name.
enum GitCredentialCommand: FobCommand {
    static let name = "git-credential"
    static let summary = "git's credential helper (also installed as git-credential-fob)"
    static let positionals = ["get|store|erase"]
    static let discussion = """
        git writes key=value lines on standard input (protocol, host, path,
        username, password, password_expiry_utc, oauth_refresh_token); 'get'
        prints the stored username and password, 'store' saves them as an
        internet-password item, 'erase' deletes the matching one. Without a
        master password and a terminal, 'get' prints nothing and exits 0, so
        git asks the user. Configure: git config --global credential.helper fob
        """

    /// The custom fields that keep what git stores beside the password.
    static let expiryField = "password_expiry_utc"
    static let refreshTokenField = "oauth_refresh_token"

    static func run(_ invocation: Invocation) throws -> Int32 {
        let action = invocation.arguments.positionals[0]
        guard ["get", "store", "erase"].contains(action) else {
            // gitcredentials(7): a helper ignores operations it does not know.
            return 0
        }
        let input = try invocation.readStandardInput(maxBytes: GitCredentialMessage.maxInputBytes)
        let parsed = input.withUnsafeBytes { raw in
            Result { () throws(GitCredentialError) in try GitCredentialMessage.parse(raw) }
        }
        guard case .success(let request) = parsed else {
            throw CLIFailure("git-credential: input git would not send")
        }
        guard let proto = request.protocol, let host = request.host else { return 0 }
        let vault = invocation.items()
        do {
            try vault.prepare()
        } catch let error as KeychainError {
            switch error {
            case .interactionNotAllowed, .noSuchKeychain:
                // No way to unlock without asking: answer nothing, and git asks the user.
                if action == "get" { return 0 }
                throw error
            default:
                throw error
            }
        }
        defer { vault.close() }
        var query = ItemQuery(itemClass: .internetPassword, service: host, account: request.username, accessGroup: "")
        query.internetProtocol = InternetProtocolCode.code(for: proto)
        query.port = request.port ?? 0
        query.path = request.path
        switch action {
        case "get": return try get(vault, query: query, invocation: invocation)
        case "store": return try store(vault, request: request, query: query, now: invocation.now)
        default: return try erase(vault, request: request, query: query)
        }
    }

    private static func get(_ vault: ItemAccess, query: ItemQuery, invocation: Invocation) throws -> Int32 {
        let now = Int64(invocation.now.timeIntervalSince1970)
        let found = try matching(vault, query, withSecrets: true)
        let fresh = found.filter { item in expiry(of: item).map { $0 > now } ?? true }
        guard let item = fresh.max(by: { $0.modified < $1.modified }) else { return 0 }
        var answer = GitCredentialMessage()
        answer.username = item.account
        answer.password = item.secret
        answer.passwordExpiry = expiry(of: item)
        answer.oauthRefreshToken = item.customFields.first { $0.name == refreshTokenField }?.value
        guard var bytes = answer.answer() else {
            // A line break would inject lines into git's input: answer
            // nothing, so git asks the user.
            invocation.standardError.write(
                "fob: \(item.displayName) holds a line break or NUL in its user name or secret; not answering git\n")
            return 0
        }
        invocation.standardOutput.write(bytes)
        bytes.wipe()
        return 0
    }

    private static func store(
        _ vault: ItemAccess, request: GitCredentialMessage, query: ItemQuery, now: Date
    ) throws -> Int32 {
        guard let username = request.username, let password = request.password else { return 0 }
        if let expiry = request.passwordExpiry, expiry <= Int64(now.timeIntervalSince1970) { return 0 }
        var fields: [CustomField] = []
        if let expiry = request.passwordExpiry { fields.append(CustomField(name: expiryField, text: String(expiry))) }
        if let token = request.oauthRefreshToken {
            fields.append(CustomField(name: refreshTokenField, value: token, isHidden: true))
        }
        var item = Item(
            itemClass: .internetPassword, service: query.service ?? "", account: username,
            label: label(request), customFields: fields, secret: password)
        item.internetProtocol = query.internetProtocol ?? ""
        item.port = query.port ?? 0
        item.path = request.path ?? ""
        if try !added(vault, item) {
            var exact = query
            exact.account = username
            exact.path = item.path
            exact.authenticationType = ""
            exact.securityDomain = ""
            try vault.update(
                matching: exact, with: ItemChanges(label: .some(item.label), customFields: fields, secret: password))
        }
        return 0
    }

    private static func erase(_ vault: ItemAccess, request: GitCredentialMessage, query: ItemQuery) throws -> Int32 {
        let found = try matching(vault, query, withSecrets: request.password != nil)
        for item in found {
            // git passes the password that failed: a credential changed since is kept.
            if let password = request.password, let secret = item.secret, !(secret == password) { continue }
            var exact = ItemQuery(
                itemClass: .internetPassword, service: item.service, account: item.account, accessGroup: "")
            exact.internetProtocol = item.internetProtocol
            exact.port = item.port
            exact.path = item.path
            exact.persistentID = item.persistentID
            _ = try? vault.delete(matching: exact)
        }
        return 0
    }

    /// The items matching `query`; empty when none do.
    private static func matching(_ vault: ItemAccess, _ query: ItemQuery, withSecrets: Bool) throws -> [Item] {
        do {
            return try vault.items(matching: query, withSecrets: withSecrets)
        } catch KeychainError.itemNotFound {
            return []
        }
    }

    /// Adds `item`; `false` when one with its primary key exists.
    private static func added(_ vault: ItemAccess, _ item: Item) throws -> Bool {
        do {
            try vault.add(item)
            return true
        } catch KeychainError.duplicateItem {
            return false
        }
    }

    /// The stored `password_expiry_utc`, if any.
    static func expiry(of item: Item) -> Int64? {
        item.customFields.first { $0.name == expiryField }?.unsafeText.flatMap { Int64($0) }
    }

    /// `git: https://host:port/path`, for `fob ls` and the terminal UI.
    private static func label(_ request: GitCredentialMessage) -> String {
        var text = "git: \(request.protocol ?? "")://\(request.host ?? "")"
        if let port = request.port { text += ":\(port)" }
        if let path = request.path { text += "/\(path)" }
        return text
    }
}
