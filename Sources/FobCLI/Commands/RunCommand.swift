import FobAccess
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// `fob run [--env NAME=SERVICE/ACCOUNT]... [--env-file FILE]... -- COMMAND [ARG...]`:
/// runs COMMAND with the named secrets in its environment.
///
/// The one deliberate exception to "no secrets in a child's environment",
/// done only when asked: `fob` never puts the secrets in its own arguments
/// or environment; it builds the command's environment in memory and
/// replaces itself with the command (`execve`), so the command has fob's
/// process id, no `fob` process stays behind, and its exit status and
/// signals reach the caller as they are.
enum RunCommand: FobCommand {
    static let name = "run"
    static let summary = "run COMMAND with the named secrets in its environment (fob execs it)"
    static let positionals = ["COMMAND", "ARG..."]
    static let optionalPositionals = 1
    static let variadic = true
    static let options: [OptionSpec] = [
        .value("--env", "NAME=SERVICE/ACCOUNT", repeatable: true, help: "set NAME to that item's secret (repeatable)"),
        .value("--env-file", "FILE", repeatable: true, help: "one NAME=SERVICE/ACCOUNT a line; # comments"),
    ]
    static let discussion = """
        Put -- before COMMAND. fob replaces itself with COMMAND (same process
        id), so its exit status and signals are COMMAND's. In SERVICE, \\/ is a
        slash and \\\\ a backslash; the first other / ends it, and ACCOUNT is the
        rest. The secrets are in COMMAND's environment, which other processes
        of the same user (and root) can read in /proc: this is the one place
        fob puts secrets in an environment, and only when asked to.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let args = invocation.arguments
        guard let command = args.positionals.first else {
            throw UsageError("'run' needs COMMAND (after --)", command: name)
        }
        var bindings: [EnvBinding] = []
        do {
            for path in args.allValues("--env-file") {
                bindings += try EnvBinding.parseFile(try readEnvFile(path))
            }
            for value in args.allValues("--env") { bindings.append(try EnvBinding.parse(value)) }
            try EnvBinding.checkUnique(bindings)
        } catch let error as EnvBindingError {
            throw UsageError(message(error), command: name)
        }
        let environment = invocation.context.environment
        guard let executable = executablePath(command, environment: environment) else {
            throw CLIFailure("command not found: \(displaySafe(command))", status: 127)
        }
        var secrets: [String: SecretBytes] = [:]
        if !bindings.isEmpty {
            let vault = invocation.items()
            defer { vault.close() }
            for binding in bindings {
                let item = try vault.item(service: binding.service, account: binding.account)
                let secret = item.secret ?? SecretBytes([])
                if secret.withUnsafeBytes({ $0.contains(0) }) {
                    throw CLIFailure("the secret of \(item.displayName) holds a NUL byte, which an environment cannot")
                }
                secrets[binding.name] = secret
            }
        }
        let entries = environmentEntries(environment, secrets: secrets)
        let code = ProcessImage.replace(
            executable: executable, arguments: Array(args.positionals.dropFirst()), programName: command,
            environment: entries)
        for entry in entries {
            let length = strlen(entry)
            memset(entry, 0, length)
            free(entry)
        }
        throw CLIFailure(
            "cannot run \(displaySafe(command)): \(String(cString: strerror(code)))",
            status: code == ENOENT ? 127 : 126)
    }

    /// Where `command` is, as a shell finds it: a name with a `/` is that
    /// path (exec then says what is wrong with it: 126 for a file that is
    /// not executable, 127 for one that is missing); otherwise the first
    /// executable `DIR/command` in `PATH`, else the first such file that is
    /// not executable (so that exec fails with 126, as bash does).
    /// - Returns: the path, or `nil` when no such file is in `PATH`.
    static func executablePath(_ command: String, environment: [String: String]) -> String? {
        if command.contains("/") { return command }
        if let found = ExecutableLookup.find(command, environment: environment) { return found }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").lazy.filter { !$0.isEmpty }.map { "\($0)/\(command)" }
            .first { candidate in
                var info = stat()
                return stat(candidate, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
            }
    }

    /// `NAME=value` C strings: fob's environment with the secrets set (and
    /// winning over variables of the same name), written straight from the
    /// secrets' memory into `malloc` memory the caller wipes.
    private static func environmentEntries(_ environment: [String: String], secrets: [String: SecretBytes])
        -> [UnsafeMutablePointer<CChar>]
    {
        var entries: [UnsafeMutablePointer<CChar>] = []
        for (key, value) in environment where secrets[key] == nil { entries.append(strdup("\(key)=\(value)")) }
        for (key, secret) in secrets.sorted(by: { $0.key < $1.key }) {
            let prefix = Array("\(key)=".utf8)
            let entry = malloc(prefix.count + secret.count + 1)!.assumingMemoryBound(to: CChar.self)
            prefix.withUnsafeBytes {
                UnsafeMutableRawPointer(entry).copyMemory(from: $0.baseAddress!, byteCount: prefix.count)
            }
            secret.withUnsafeBytes { bytes in
                if bytes.count > 0 {
                    (UnsafeMutableRawPointer(entry) + prefix.count).copyMemory(
                        from: bytes.baseAddress!, byteCount: bytes.count)
                }
            }
            entry[prefix.count + secret.count] = 0
            entries.append(entry)
        }
        return entries
    }

    private static func readEnvFile(_ path: String) throws -> [UInt8] {
        guard let fd = Optional(open(path, O_RDONLY | O_CLOEXEC)), fd >= 0 else {
            throw CLIFailure("cannot read the env file \(displaySafe(path))")
        }
        close(fd)
        return FileDescriptorIO.readFile(atPath: path, limit: EnvBinding.maxFileBytes + 1) ?? []
    }

    private static func message(_ error: EnvBindingError) -> String {
        func at(_ line: Int) -> String { line == 0 ? "--env" : "--env-file line \(line)" }
        switch error {
        case .missingEquals(let line): return "\(at(line)): want NAME=SERVICE/ACCOUNT"
        case .invalidName(let line): return "\(at(line)): NAME must be letters, digits and _, not starting with a digit"
        case .missingSlash(let line): return "\(at(line)): want SERVICE/ACCOUNT, both non-empty"
        case .invalidEscape(let line): return "\(at(line)): in SERVICE, \\ goes only before / or \\"
        case .invalidText(let line): return "\(at(line)): not UTF-8 text"
        case .duplicate(let name): return "\(name) is named twice"
        case .tooLong: return "the env file is larger than \(EnvBinding.maxFileBytes) bytes"
        }
    }
}
