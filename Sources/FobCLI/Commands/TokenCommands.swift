import FobAccess
import FobAgent
import FobSessions
import FobStore
import FobSystem
import FobTokens
import FobViewModels
import FoundationEssentials
@preconcurrency import Glibc

/// `fob jwt [SERVICE ACCOUNT]`: decodes a JWT without verifying it.
enum JWTCommand: FobCommand {
    static let name = "jwt"
    static let summary = "decode a stored JWT, or one on standard input: header, claims, expiry (not verified)"
    static let positionals = ["SERVICE", "ACCOUNT"]
    static let optionalPositionals = 2
    static let options: [OptionSpec] = [
        .flag("--json", help: "print one JSON object: header, claims, issuedAt, expiresAt, notBefore, expired"),
        .flag("--id-token", help: "for an oauth item, decode its ID token instead of its access token"),
    ]
    /// Both positionals or neither: one alone is a usage error.
    static let usageLines = ["fob jwt [SERVICE ACCOUNT] [--json] [--id-token]"]
    static let discussion = """
        The signature is not verified: the output says what the token claims,
        not that anyone vouches for it. For an oauth item the access token is
        decoded (its ID token when the access token is opaque, or with --id-token).
        iat, exp and nbf may be integers, fractions or numeric strings; any other
        value is reported and the exit status is 1.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let args = invocation.arguments
        let token = try tokenText(invocation)
        let jwt: JWT
        do { jwt = try JWT(decoding: token) } catch { throw CLIFailure(error.description) }
        let now = invocation.now
        if args.flag("--json") {
            invocation.standardOutput.write(JSONText.text(jsonReport(jwt, now: now)) + "\n")
        } else {
            invocation.standardOutput.write(humanReport(jwt, now: now))
        }
        do { try jwt.checkTimeClaims() } catch { throw CLIFailure(error.description) }
        return 0
    }

    /// The token: from the item when SERVICE ACCOUNT are given, else standard input.
    private static func tokenText(_ invocation: Invocation) throws -> String {
        let positionals = invocation.arguments.positionals
        if positionals.count == 1 {
            throw UsageError(
                "'jwt' needs both SERVICE and ACCOUNT, or neither (token on standard input)", command: name)
        }
        if positionals.count == 2 {
            // Through the agent when it holds the vault unlocked.
            let (store, vault) = try invocation.keychainStore()
            defer { vault?.lock() }
            let item = try store.item(ItemKey(service: positionals[0], account: positionals[1]))
            if item.kind == .oauth {
                let set: OAuthTokenSet
                do { set = try OAuthSession.tokenSet(of: item) } catch { throw CLIFailure(error.description) }
                if invocation.arguments.flag("--id-token") || !JWT.looksLikeJWT(set.accessToken) {
                    guard let id = set.idToken else {
                        throw CLIFailure(
                            "the access token of \(item.displayName) is not a JWT and there is no ID token")
                    }
                    if !invocation.arguments.flag("--id-token") {
                        invocation.standardError.write("fob: the access token is opaque; decoding the ID token\n")
                    }
                    return id
                }
                return set.accessToken
            }
            guard let text = item.secret?.unsafeString else {
                throw CLIFailure("the secret of \(item.displayName) is not text")
            }
            return text
        }
        guard !invocation.context.standardInputIsTerminal else {
            throw UsageError("give SERVICE ACCOUNT, or pipe a token to standard input", command: name)
        }
        let secret = try invocation.readItemSecret(raw: false, what: "the token")
        guard let text = secret.unsafeString else { throw CLIFailure("standard input is not UTF-8 text") }
        return text
    }

    /// The `--json` object: `header`, `claims`, `issuedAt`, `expiresAt`,
    /// `notBefore` (ISO 8601 UTC or null), `expired`, `signatureVerified`.
    /// Written with sorted keys, since the decoded header and claims keep no member order.
    static func jsonReport(_ jwt: JWT, now: Date) -> [String: JSONValue] {
        func date(_ claim: JWT.TimeClaim) -> JSONValue { claim.date.map { .string($0.iso8601) } ?? .null }
        return [
            "header": .object(jwt.header),
            "claims": .object(jwt.claims),
            "issuedAt": date(jwt.issuedAt),
            "expiresAt": date(jwt.expiresAt),
            "notBefore": date(jwt.notBefore),
            "expired": .bool(jwt.isExpired(at: now)),
            "signatureVerified": false,
        ]
    }

    /// Header and claims one member a line, `"name": value` in sorted key
    /// order (the token's own order is not kept), then the times and a
    /// reminder that the signature is not verified.
    static func humanReport(_ jwt: JWT, now: Date) -> String {
        func line(_ label: String, _ claim: JWT.TimeClaim, relative: (Date) -> String) -> String? {
            let padded = label + String(repeating: " ", count: max(0, 11 - label.count))
            switch claim {
            case .absent: return nil
            case .date(let d): return "\(padded) \(TimeText.local(d.date)) (\(relative(d.date)))"
            case .invalid(let text): return "\(padded) invalid: \(text) is not a NumericDate"
            }
        }
        var lines = ["Header:"] + members(jwt.header) + ["Claims:"] + members(jwt.claims)
        lines += [
            line("Issued:", jwt.issuedAt) { TimeText.relative($0, now: now) },
            line("Not before:", jwt.notBefore) { TimeText.relative($0, now: now) },
            line("Expires:", jwt.expiresAt) { TimeText.expiry($0, now: now) },
        ].compactMap { $0 }
        if case .absent = jwt.expiresAt { lines.append("Expires:    never (no exp claim)") }
        lines.append("Signature:  not verified (alg \(jwt.algorithm ?? "unknown"))")
        // JSON escapes C0 controls but not DEL or C1 (U+009B is CSI to some terminals).
        return lines.map(displaySafe).joined(separator: "\n") + "\n"
    }

    /// `  "name": value` lines in sorted key order, values as compact JSON; `  {}` for no members.
    private static func members(_ object: [String: JSONValue]) -> [String] {
        guard !object.isEmpty else { return ["  {}"] }
        return object.keys.sorted().map { "  \(JSONText.text(.string($0))): \(JSONText.text(object[$0] ?? .null))" }
    }
}

/// `fob pkce [--verifier V] [--json]`: a PKCE verifier and its S256 challenge.
enum PKCECommand: FobCommand {
    static let name = "pkce"
    static let summary = "print a new (or the given) PKCE code verifier and its S256 challenge"
    static let options: [OptionSpec] = [
        .value("--verifier", "V", help: "use this verifier (43 to 128 of A-Z a-z 0-9 - . _ ~) instead of a new one"),
        .flag("--json", help: "print one JSON object: verifier, challenge, method"),
    ]
    static let discussion =
        "RFC 7636: challenge = BASE64URL(SHA-256(verifier)) without padding; new verifiers are 64 random characters."

    static func run(_ invocation: Invocation) throws -> Int32 {
        let pkce: PKCE
        do {
            if let given = invocation.arguments.value("--verifier") {
                pkce = try PKCE(verifier: given)
            } else {
                pkce = try PKCE.generate()
            }
        } catch {
            throw UsageError(error.description, command: name)
        }
        if invocation.arguments.flag("--json") {
            let object: [String: JSONValue] = [
                "verifier": .string(pkce.verifier), "challenge": .string(pkce.challenge),
                "method": .string(pkce.method),
            ]
            invocation.standardOutput.write(JSONText.text(object) + "\n")
        } else {
            invocation.standardOutput.write(
                "verifier:  \(pkce.verifier)\nchallenge: \(pkce.challenge)\nmethod:    \(pkce.method)\n")
        }
        return 0
    }
}

/// `fob oauth login|token|refresh SERVICE ACCOUNT`.
enum OAuthCommand: FobCommand {
    static let name = "oauth"
    static let summary = "OAuth 2.0: 'login' (authorization code + PKCE), 'token' (a valid access token), 'refresh'"
    static let positionals = ["login|token|refresh", "SERVICE", "ACCOUNT"]
    static let loginOptions: [OptionSpec] = [
        .value("--issuer", "URL", help: "login: discover the endpoints from URL/.well-known/openid-configuration"),
        .value(
            "--authorization-endpoint", "URL",
            help: "login: the authorization endpoint (with --token-endpoint, instead of --issuer)"),
        .value("--token-endpoint", "URL", help: "login: the token endpoint"),
        .value("--client-id", "ID", help: "login: the client id (required)"),
        .value(
            "--client-secret-file", "F",
            help: "login: a confidential client's secret, first line of F (client_secret_basic)"),
        .value("--scope", "S", help: "login: the scope to ask for, space-separated"),
        .value("--timeout", "SECONDS", help: "login: how long to wait for the browser (default 300)"),
        .flag("--no-browser", help: "login: only print the URL, do not run xdg-open"),
    ]
    static let options = loginOptions
    /// Each action's own form: the options are login's only.
    static let usageLines = [
        "fob oauth login SERVICE ACCOUNT (--issuer URL | --authorization-endpoint URL --token-endpoint URL)"
            + " --client-id ID [--client-secret-file F] [--scope S] [--timeout SECONDS] [--no-browser]",
        "fob oauth token SERVICE ACCOUNT",
        "fob oauth refresh SERVICE ACCOUNT",
    ]
    static let discussion = """
        login prints the authorization URL on standard error, opens it with
        xdg-open when DISPLAY or WAYLAND_DISPLAY is set, waits for the redirect
        to http://127.0.0.1:PORT/callback, and stores the tokens as an oauth item.
        token prints a valid access token, refreshing it first when it expires
        within 30 seconds; refresh forces a refresh. One process refreshes at a
        time; the others use its result. A provider error leaves the item as it was.
        """

    /// Seconds `login` waits for the browser unless `--timeout` says otherwise.
    static let defaultTimeout: TimeInterval = 300

    static func run(_ invocation: Invocation) throws -> Int32 {
        let positionals = invocation.arguments.positionals
        let (action, service, account) = (positionals[0], positionals[1], positionals[2])
        switch action {
        case "login":
            return try login(invocation, service: service, account: account)
        case "token", "refresh":
            for option in loginOptions
            where invocation.arguments.value(option.name) != nil || invocation.arguments.flag(option.name) {
                throw UsageError("\(option.name) is an option of 'oauth login', not 'oauth \(action)'", command: name)
            }
            // Through the agent when it holds the vault unlocked: no password, no KDF.
            let (store, vault) = try invocation.keychainStore()
            defer { vault?.lock() }
            let session = OAuthSession(store: store, service: service, account: account)
            do {
                if action == "token" {
                    invocation.standardOutput.write(try session.validAccessToken() + "\n")
                } else {
                    let set = try session.refresh(force: true)
                    invocation.standardOutput.write(
                        "refreshed \(describe(service, account)): \(TimeText.expiry(set.expiresAt, now: invocation.now))\n"
                    )
                }
            } catch {
                throw cliError(error)
            }
            return 0
        default:
            throw UsageError("'oauth' wants login, token or refresh, not '\(action)'", command: name)
        }
    }

    private static func login(_ invocation: Invocation, service: String, account: String) throws -> Int32 {
        let args = invocation.arguments
        guard let clientID = args.value("--client-id"), !clientID.isEmpty else {
            throw UsageError("'oauth login' needs --client-id ID", command: name)
        }
        let issuer = args.value("--issuer")
        let authorization = args.value("--authorization-endpoint")
        let token = args.value("--token-endpoint")
        guard (issuer != nil) != (authorization != nil || token != nil) else {
            throw UsageError(
                "'oauth login' needs --issuer URL, or --authorization-endpoint URL and --token-endpoint URL",
                command: name)
        }
        if issuer == nil && (authorization == nil || token == nil) {
            throw UsageError("--authorization-endpoint and --token-endpoint go together", command: name)
        }
        var timeout = defaultTimeout
        if let text = args.value("--timeout") {
            guard let value = Double(text), value > 0, value <= 86_400 else {
                throw UsageError("--timeout wants seconds from 1 to 86400, not '\(text)'", command: name)
            }
            timeout = value
        }
        let secretPath = args.value("--client-secret-file").map { path in
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }

        // Unlock first, so the password is asked before the browser step,
        // and refuse to replace an item that is not an oauth item.
        let (store, vault) = try invocation.keychainStore()
        defer { vault?.lock() }
        if let existing = try? store.items(matching: .key(service: service, account: account), withSecrets: false)
            .first,
            existing.kind != .oauth
        {
            throw KeychainError.duplicateItem(
                "\(existing.displayName) is a \(existing.kind.rawValue) item; not replacing it with an oauth item")
        }
        do {
            let authentication: ClientAuthentication =
                try secretPath.map { .secretBasic(secret: try ClientAuthentication.readSecret(path: $0)) } ?? .none
            let transport = HelperHTTPTransport()
            let endpoints: OAuthEndpoints
            if let issuer {
                endpoints = try OAuthEndpoints.discover(issuer: issuer, transport: transport)
            } else {
                guard let a = URL(string: authorization!), let t = URL(string: token!) else {
                    throw OAuthError.configuration("the endpoints must be absolute URLs")
                }
                endpoints = try OAuthEndpoints(authorization: a, token: t)
            }
            let client = OAuthClient(
                endpoints: endpoints, clientID: clientID, authentication: authentication, transport: transport)
            let openBrowser = !args.flag("--no-browser") && hasDisplay(invocation.context.environment)
            let set = try OAuthLogin.run(
                client: client, scope: args.value("--scope"), timeout: timeout
            ) { url in
                invocation.standardError.write("Open this URL in a browser to sign in:\n\n  \(url.absoluteString)\n\n")
                invocation.standardError.write("Waiting up to \(TimeText.duration(timeout)) for the browser…\n")
                if openBrowser { launchBrowser(url, environment: invocation.context.environment) }
            }
            try OAuthSession.store(set, in: store, service: service, account: account)
            invocation.standardError.write(
                "fob: signed in; stored \(describe(service, account)), access token \(TimeText.expiry(set.expiresAt, now: invocation.now))\n"
            )
        } catch {
            throw cliError(error)
        }
        return 0
    }

    private static func describe(_ service: String, _ account: String) -> String {
        Item(service: service, account: account, secret: nil).displayName
    }

    /// Store errors keep their exit status; OAuth errors exit 1 with their one line.
    private static func cliError(_ error: Error) -> Error {
        switch error {
        case let e as OAuthSessionError:
            if case .keychain(let k) = e { return k }
            return CLIFailure(e.description)
        case let e as OAuthError:
            return CLIFailure(e.description)
        default:
            return error
        }
    }

    private static func hasDisplay(_ environment: [String: String]) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Starts `xdg-open URL` in its own session, streams on /dev/null, and
    /// does not wait for it; does nothing when it is not installed. The URL
    /// holds the `state` and the PKCE challenge, never a secret.
    private static func launchBrowser(_ url: URL, environment: [String: String]) {
        guard let path = ExecutableLookup.find("xdg-open", environment: environment) else { return }
        _ = try? ChildProcessSpawner.spawn(
            executable: path, arguments: [url.absoluteString], environment: environment,
            standardInput: .null, standardOutput: .null, standardError: .null,
            newSession: true)
    }
}
