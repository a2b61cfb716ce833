import FobAccess
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// Why docker's credential input was refused.
public enum DockerCredentialError: Error, Equatable, Sendable {
    /// Not a JSON object with string `ServerURL`, `Username` and `Secret`.
    case malformed
    /// `ServerURL` is empty (the protocol's "no credentials server URL").
    case missingServerURL
    /// `Username` is empty (the protocol's "no credentials username").
    case missingUsername
    /// Longer than ``DockerCredentialRequest/maxInputBytes``.
    case tooLong
}

/// What `docker-credential-fob store` reads: `{"ServerURL", "Username",
/// "Secret"}` (github.com/docker/docker-credential-helpers, `credentials.Credentials`).
public struct DockerCredentialRequest: Sendable, Equatable {
    /// The registry, such as `https://index.docker.io/v1/` or `registry.example.com`.
    public var serverURL: String
    /// The user name (`<token>` for identity tokens).
    public var username: String
    /// The password or token.
    public var secret: SecretBytes

    /// The largest input read: 1 MiB and 64 KiB.
    public static let maxInputBytes = (1 << 20) + (64 << 10)

    /// Parses the JSON of `store`. A pure function of the bytes (a fuzz target calls it).
    /// - Throws: ``DockerCredentialError``: `.tooLong`, `.malformed`, `.missingServerURL`, `.missingUsername`.
    /// - Important: the JSON reader holds the secret in a `String` while parsing.
    public static func parse(_ input: UnsafeRawBufferPointer) throws(DockerCredentialError) -> DockerCredentialRequest {
        guard input.count <= maxInputBytes else { throw .tooLong }
        guard let object = (try? JSONText.parse(input))?.object,
            let server = object["ServerURL"]?.string, let user = object["Username"]?.string,
            let secret = object["Secret"]?.string
        else { throw .malformed }
        guard !server.isEmpty else { throw .missingServerURL }
        guard !user.isEmpty else { throw .missingUsername }
        return DockerCredentialRequest(serverURL: server, username: user, secret: SecretBytes(utf8: secret))
    }
}

/// `fob docker-credential store|get|erase|list` (also run as
/// `docker-credential-fob`): docker's credential-helper protocol. Each
/// credential is an internet-password item labelled `Docker Credentials`
/// (as the macOS helper labels them) whose URL is the server URL.
enum DockerCredentialCommand: FobCommand {
    static let name = "docker-credential"
    static let summary = "docker's credential helper (also installed as docker-credential-fob)"
    static let positionals = ["store|get|erase|list|version"]
    static let discussion = """
        store reads {"ServerURL","Username","Secret"} on standard input; get and
        erase read a server URL; get prints {"ServerURL","Username","Secret"};
        list prints {"URL":"user",...}; version prints the helper's name and
        version, as docker's own helpers do. Errors are the protocol's plain-text
        messages on standard output, exit 1. Configure in ~/.docker/config.json:
        {"credsStore": "fob"}
        """

    /// The label of every item this helper keeps.
    static let label = "Docker Credentials"
    static let notFound = "credentials not found in native keychain"

    static func run(_ invocation: Invocation) throws -> Int32 {
        let action = invocation.arguments.positionals[0]
        let out = invocation.standardOutput
        func fail(_ message: String) -> Int32 {
            out.write(message + "\n")
            return 1
        }
        switch action {
        case "store", "get", "erase", "list": break
        case "version":
            // docker-credential-helpers answer `version` with one line: name, package, version.
            out.write("docker-credential-fob (fob) \(FobCLI.version)\n")
            return 0
        default: return fail("unknown credential action `\(action)`")
        }
        let input =
            action == "list"
            ? SecretBytes([]) : try invocation.readStandardInput(maxBytes: DockerCredentialRequest.maxInputBytes)
        let vault = invocation.items()
        defer { vault.close() }
        switch action {
        case "store":
            let parsed = input.withUnsafeBytes { raw in
                Result { () throws(DockerCredentialError) in try DockerCredentialRequest.parse(raw) }
            }
            let request: DockerCredentialRequest
            switch parsed {
            case .success(let value): request = value
            case .failure(.missingServerURL): return fail("no credentials server URL")
            case .failure(.missingUsername): return fail("no credentials username")
            case .failure: return fail("invalid credentials JSON")
            }
            try vault.withExclusiveLock {
                // One transaction replaces an existing credential of this URL.
                if try replaced(vault, request) { return }
                var item = Item(
                    itemClass: .internetPassword, service: host(of: request.serverURL),
                    account: request.username, label: label, url: request.serverURL, secret: request.secret)
                item.path = request.serverURL
                try vault.add(item)
            }
            return 0
        case "list":
            let items = try all(vault)
            var map: [String: JSONValue] = [:]
            for item in items { if let url = item.url { map[url] = .string(item.account) } }
            out.write(Array(JSONText.text(map).utf8) + [0x0A])
            return 0
        default:
            guard let url = input.unsafeString?.trimmingSpacesAndNewlines(), !url.isEmpty else {
                return fail("no credentials server URL")
            }
            guard let found = try find(vault, url: url, withSecret: action == "get") else { return fail(notFound) }
            if action == "erase" {
                try vault.delete(matching: query(url: url))
                return 0
            }
            var json = Array("{\"ServerURL\":".utf8)
            ItemJSON.appendString(url.utf8, to: &json)
            json += Array(",\"Username\":".utf8)
            ItemJSON.appendString(found.account.utf8, to: &json)
            json += Array(",\"Secret\":".utf8)
            found.secret?.withUnsafeBytes { ItemJSON.appendString($0, to: &json) }
            json += Array("}\n".utf8)
            out.write(json)
            json.wipe()
            return 0
        }
    }

    /// The item of this helper for exactly this server URL, or `nil`.
    private static func find(_ vault: ItemAccess, url: String, withSecret: Bool) throws -> Item? {
        do {
            return try vault.items(matching: query(url: url), limit: .one, withSecrets: withSecret).first
        } catch KeychainError.itemNotFound {
            return nil
        }
    }

    /// Gives the credential of this URL the new user name and secret; `false` when there is none.
    private static func replaced(_ vault: ItemAccess, _ request: DockerCredentialRequest) throws -> Bool {
        do {
            try vault.update(
                matching: query(url: request.serverURL),
                with: ItemChanges(account: request.username, secret: request.secret))
            return true
        } catch KeychainError.itemNotFound {
            return false
        }
    }

    /// Every item of this helper; empty when there are none.
    private static func all(_ vault: ItemAccess) throws -> [Item] {
        do {
            return try vault.items(
                matching: ItemQuery(itemClass: .internetPassword, accessGroup: "", label: label), withSecrets: false)
        } catch KeychainError.itemNotFound {
            return []
        }
    }

    /// The items of this helper for exactly this server URL.
    private static func query(url: String) -> ItemQuery {
        ItemQuery(itemClass: .internetPassword, accessGroup: "", label: label, url: url)
    }

    /// The host of `https://host:port/path` or `host:port/path`, the item's server.
    static func host(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        return String(rest)
    }
}
