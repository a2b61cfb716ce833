/// The command registry: the extension point of the command line.
///
/// Adding a command takes a new file with a type conforming to
/// ``FobCommand`` (see its documentation for an example) and one line in
/// ``FobCLI/commands`` below. `fob --help` lists the commands in this order;
/// a command's name must be unique and its options must not reuse a global
/// option's name (a test checks both). Describe the command in `Assets/fob.1`.
extension FobCLI {
    /// Every subcommand, in the order `fob --help` lists them.
    public static var commands: [any FobCommand.Type] {
        [
            InitCommand.self,
            AddCommand.self,
            SaveCommand.self,
            GetCommand.self,
            UpdateCommand.self,
            RemoveCommand.self,
            MoveCommand.self,
            ListCommand.self,
            UnlockCommand.self,
            LockCommand.self,
            StatusCommand.self,
            AgentCommand.self,
            SSHCommand.self,
            SSHAgentCommand.self,
            PasswdCommand.self,
            VerifyCommand.self,
            AccessCommand.self,
            LogCommand.self,
            ImportCommand.self,
            ExportCommand.self,
            BackupCommand.self,
            RestoreCommand.self,
            CopyCommand.self,
            LogoutCommand.self,
            JWTCommand.self,
            PKCECommand.self,
            GenerateCommand.self,
            TOTPCommand.self,
            OAuthCommand.self,
            RunCommand.self,
            CompletionCommand.self,
            GitCredentialCommand.self,
            DockerCredentialCommand.self,
            SecretServiceCommand.self,
            SyncCommand.self,
            DevicesCommand.self,
            ConflictsCommand.self,
            ResolveCommand.self,
        ]
    }

    /// Commands for fob's own use, not listed by `fob --help` (the clipboard
    /// clearer `fob copy` leaves behind).
    public static var internalCommands: [any FobCommand.Type] {
        [
            ClipboardClearerCommand.self,
            CompleteNamesCommand.self,
        ]
    }

    /// The command a link to `fob` runs by its name (`git-credential-fob`
    /// runs `fob git-credential`), as git and docker find their helpers, or
    /// `nil` for any other name. A switch, not a dictionary: building a
    /// `[String: String]` at start made the runtime search every protocol
    /// conformance in `fob` (for `String: Hashable`), 0.2 million
    /// instructions and pages all over the binary for every command.
    /// - Parameter name: the program's file name, without its directory.
    public static func programAlias(_ name: Substring) -> String? {
        switch name {
        case "git-credential-fob": return GitCredentialCommand.name
        case "docker-credential-fob": return DockerCredentialCommand.name
        default: return nil
        }
    }

    /// The arguments `fob` runs for a program name and its arguments: the
    /// alias's command first when the program is a link such as `git-credential-fob`.
    /// - Parameters:
    ///   - program: `argv[0]`, a path or a name.
    ///   - arguments: the arguments after it.
    public static func arguments(program: String, arguments: [String]) -> [String] {
        let base = program.lastIndex(of: "/").map { program[program.index(after: $0)...] } ?? program[...]
        guard let command = programAlias(base) else { return arguments }
        return [command] + arguments
    }

    /// What `fob` runs when no command is given: the terminal UI.
    public static var interactiveCommand: any FobCommand.Type { TerminalUICommand.self }
}
