import FobAccess
import FobAgent
import FobSSH
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// `fob ssh keygen|import|ls|pub|allow`: SSH keys kept in the vault as
/// `ssh-key` items, which the agent's SSH socket signs with.
enum SSHCommand: FobCommand {
    static let name = "ssh"
    static let summary = "SSH keys in the vault: make, import, list, show, restrict to hosts"
    static let positionals = ["keygen|import|ls|pub|allow", "NAME", "HOST-PATTERN"]
    static let optionalPositionals = 2
    static let options: [OptionSpec] = [
        .value("--type", "TYPE", choices: ["ed25519", "ecdsa", "rsa"], help: "keygen: the key type (default ed25519)"),
        .value("--comment", "C", help: "keygen: the key's comment (default NAME)"),
    ]
    static let usageLines = [
        "fob ssh keygen [--type ed25519|ecdsa|rsa] [--comment C] NAME",
        "fob ssh import FILE",
        "fob ssh ls",
        "fob ssh pub NAME",
        "fob ssh allow NAME HOST-PATTERN",
    ]
    static let discussion = """
        Keys are items of kind ssh-key (service ssh-key, account NAME); the
        private key is sealed in the vault and never printed. 'keygen' makes an
        Ed25519, ECDSA P-256 or RSA (3072-bit) key. 'import' reads an
        unencrypted OpenSSH or PKCS #8 (or PKCS #1, SEC 1) private key file;
        for a file protected by a passphrase it runs ssh-add with
        SSH_AUTH_SOCK set to this vault's SSH socket, so ssh-add asks the
        passphrase and adds the key through the agent (no temporary file).
        'ls' shows each key's name, comment, type and fingerprint (with no
        key, it says so on standard error and how to add one); 'pub' prints
        the public key line. 'allow' adds a host pattern (OpenSSH's * and ?
        wildcards, a leading ! excludes, [host]:port) or a host key fingerprint
        (SHA256:...): a key that names hosts is offered and used only for a
        session bound to one of them, which the agent checks against
        known_hosts. Keys that name no host are offered everywhere.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let positionals = invocation.arguments.positionals
        switch (positionals.first, positionals.count) {
        case ("keygen", 2): return try keygen(invocation, name: positionals[1])
        case ("import", 2): return try importFile(invocation, path: positionals[1])
        case ("ls", 1): return try list(invocation)
        case ("pub", 2):
            let (item, stored) = try key(invocation, named: positionals[1])
            return invocation.succeed(printing: stored.key.line(comment: item.label ?? "") + "\n")
        case ("allow", 3): return try allow(invocation, name: positionals[1], pattern: positionals[2])
        default:
            throw UsageError(
                "ssh wants keygen NAME, import FILE, ls, pub NAME or allow NAME HOST-PATTERN", command: name)
        }
    }

    private static func keygen(_ invocation: Invocation, name: String) throws -> Int32 {
        let type = SSHKeyType(shortName: invocation.arguments.value("--type") ?? "ed25519") ?? .ed25519
        let key = try SSHPrivateKey.generate(type)
        let comment = invocation.arguments.value("--comment") ?? name
        try store(invocation, SSHKeyItem.item(name: name, key: key, comment: comment))
        return invocation.succeed(printing: key.publicKey.line(comment: comment) + "\n")
    }

    private static func store(_ invocation: Invocation, _ item: Item) throws {
        let items = invocation.items()
        defer { items.close() }
        try items.prepare()
        try items.add(item)
    }

    private static func importFile(_ invocation: Invocation, path: String) throws -> Int32 {
        guard var bytes = FileDescriptorIO.readFile(atPath: path, limit: 1 << 20) else {
            throw KeychainError.io("cannot read \(path)")
        }
        defer { bytes.wipe() }
        let entries: [SSHKeyFileEntry]
        do {
            entries = try SSHKeyFile.read(bytes)
        } catch SSHKeyError.encryptedKeyFile {
            return try addThroughSSHAdd(invocation, path: path)
        } catch {
            throw KeychainError.param("\(path): \(error)")
        }
        let base = String(path.split(separator: "/").last ?? "key")
        for (index, entry) in entries.enumerated() {
            let name = entries.count == 1 ? base : "\(base)-\(index + 1)"
            try store(invocation, SSHKeyItem.item(name: name, key: entry.key, comment: entry.comment))
            invocation.standardError.write("fob: imported \(name) \(entry.key.publicKey.fingerprint)\n")
        }
        return 0
    }

    /// An encrypted key file: ssh-add decrypts it (asking its passphrase)
    /// and adds it through this vault's SSH socket, which stores it.
    private static func addThroughSSHAdd(_ invocation: Invocation, path: String) throws -> Int32 {
        let client = AgentClient(endpoint: invocation.agentEndpoint)
        try invocation.startAgentIfNeeded(client)
        var environment = invocation.context.environment
        environment["SSH_AUTH_SOCK"] = SSHAgentListener.socketPath(for: client.endpoint)
        guard let executable = RunCommand.executablePath("ssh-add", environment: environment) else {
            throw KeychainError.io("the file is encrypted and ssh-add, which would decrypt it, is not installed")
        }
        // ssh-add asks the passphrase on the terminal, with the user's own streams.
        let pid = try ChildProcessSpawner.spawn(
            executable: executable, arguments: [path], environment: environment,
            standardInput: .descriptor(0), standardOutput: .descriptor(1), standardError: .descriptor(2))
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        return exited ? (status >> 8) & 0xff : 1
    }

    /// The vault's SSH keys. A listing carries a key item's public fields and
    /// no secret, so the access rules do not ask for it; `.attributes` reads
    /// every custom field's value (a change that writes them back needs it).
    private static func storedKeys(_ invocation: Invocation, detail: ItemDetail = .listing) throws -> [(
        Item, SSHStoredKey
    )] {
        let items = invocation.items()
        defer { items.close() }
        try items.prepare()
        let found: [Item]
        do {
            found = try items.items(matching: ItemQuery(service: SSHKeyItem.service, kind: .sshKey), detail: detail)
        } catch .itemNotFound {
            found = []
        }
        var keys: [(Item, SSHStoredKey)] = []
        for item in found {
            if let stored = SSHKeyItem.stored(item) { keys.append((item, stored)) }
        }
        return keys
    }

    /// One line a key, in name order; with none, a line on standard error
    /// that says so and how to add one (as `ssh-add -l` says "The agent has
    /// no identities."), and status 0, as `fob ls` of an empty vault.
    private static func list(_ invocation: Invocation) throws -> Int32 {
        let keys = try storedKeys(invocation)
        guard !keys.isEmpty else {
            invocation.standardError.write(noKeysNotice)
            return 0
        }
        for (item, stored) in keys.sorted(by: { $0.0.account < $1.0.account }) {
            let type = stored.key.keyType?.shortName ?? stored.key.typeName
            var line = "\(item.account)\t\(item.label ?? "")\t\(type) \(stored.key.bits)\t\(stored.key.fingerprint)"
            if stored.hosts.isRestricted { line += "\thosts: " + stored.hosts.patterns.joined(separator: ",") }
            invocation.standardOutput.write(line + "\n")
        }
        return 0
    }

    /// What `fob ssh ls` says, on standard error, when the vault holds no SSH key.
    static let noKeysNotice =
        "fob: the vault has no SSH keys; add one with 'fob ssh keygen NAME' or 'fob ssh import FILE'\n"

    private static func key(_ invocation: Invocation, named name: String, detail: ItemDetail = .listing) throws -> (
        Item, SSHStoredKey
    ) {
        guard let found = try storedKeys(invocation, detail: detail).first(where: { $0.0.account == name }) else {
            throw KeychainError.itemNotFound("no SSH key named \(name)")
        }
        return found
    }

    private static func allow(_ invocation: Invocation, name: String, pattern: String) throws -> Int32 {
        guard !pattern.isEmpty, !pattern.contains(where: { $0 == " " || $0 == "," || $0 == "\n" }) else {
            throw UsageError("a host pattern has no spaces or commas: '\(pattern)'", command: self.name)
        }
        // Every custom field is written back: the key's own come with its
        // listing; only a field of the user's (a note) needs its value read.
        var (item, stored) = try key(invocation, named: name)
        if item.customFields.contains(where: { !SSHKeyItem.isKeyField($0.name) }) {
            (item, stored) = try key(invocation, named: name, detail: .attributes)
        }
        let hosts = stored.hosts.patterns.contains(pattern) ? stored.hosts.patterns : stored.hosts.patterns + [pattern]
        var changes = ItemChanges()
        changes.customFields = SSHKeyItem.withHosts(item, hosts: hosts)
        let items = invocation.items()
        defer { items.close() }
        try items.prepare()
        _ = try items.update(matching: ItemQuery(service: SSHKeyItem.service, account: name), with: changes)
        invocation.standardError.write("fob: \(name) is for \(hosts.joined(separator: ", "))\n")
        return 0
    }
}

/// `fob ssh-agent [install]`: the vault's SSH agent socket for SSH_AUTH_SOCK.
enum SSHAgentCommand: FobCommand {
    static let name = "ssh-agent"
    static let summary = "print SSH_AUTH_SOCK=...; export SSH_AUTH_SOCK; for this vault's agent (started if needed)"
    static let positionals = ["install"]
    static let optionalPositionals = 1
    static let usageLines = ["fob ssh-agent", "fob ssh-agent install"]
    static let discussion = """
        eval "$(fob ssh-agent)" points ssh, ssh-add, git and ssh-keygen at the
        vault's SSH agent socket: $XDG_RUNTIME_DIR/fob/agent-ssh.sock for the
        default vault. 'install' writes ~/.config/environment.d/fob-ssh-agent.conf
        (SSH_AUTH_SOCK=${XDG_RUNTIME_DIR}/fob/agent-ssh.sock) so that systemd
        sets SSH_AUTH_SOCK for every later login session, and prints the line
        for this shell. With the systemd units (systemctl --user enable --now
        fob-agent.socket fob-ssh-agent.socket) systemd listens on that socket
        and starts the agent at the first connection.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let client = AgentClient(endpoint: invocation.agentEndpoint)
        try invocation.startAgentIfNeeded(client)
        let socket = SSHAgentListener.socketPath(for: client.endpoint)
        if invocation.arguments.positionals.first == "install" {
            try install(invocation, socket: socket)
        } else if !invocation.arguments.positionals.isEmpty {
            throw UsageError("ssh-agent takes only 'install'", command: name)
        }
        return invocation.succeed(printing: "SSH_AUTH_SOCK=\(socket); export SSH_AUTH_SOCK;\n")
    }

    private static func install(_ invocation: Invocation, socket: String) throws {
        let environment = invocation.context.environment
        guard let home = environment["HOME"] else { throw KeychainError.param("HOME is not set") }
        let directory = (environment["XDG_CONFIG_HOME"] ?? home + "/.config") + "/environment.d"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/fob-ssh-agent.conf"
        let text =
            "# Written by 'fob ssh-agent install': Fob's SSH agent for every session.\n"
            + environmentLine(socket: socket, runtimeDirectory: environment["XDG_RUNTIME_DIR"]) + "\n"
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw KeychainError.io("cannot write \(path)")
        }
        invocation.standardError.write("fob: wrote \(path); SSH_AUTH_SOCK is set from the next login\n")
    }

    /// The environment.d line (systemd's environment.d(5)) for the SSH
    /// socket: a socket under the runtime directory is named through
    /// `${XDG_RUNTIME_DIR}`, which the user manager expands in each session
    /// (so the line stays right for another uid or runtime path); another
    /// socket by its absolute path.
    static func environmentLine(socket: String, runtimeDirectory: String?) -> String {
        if let runtime = runtimeDirectory, runtime.hasPrefix("/"), socket.hasPrefix(runtime + "/") {
            return "SSH_AUTH_SOCK=${XDG_RUNTIME_DIR}" + socket.dropFirst(runtime.count)
        }
        return "SSH_AUTH_SOCK=" + socket
    }
}
