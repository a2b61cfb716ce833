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
            ListCommand.self,
            UnlockCommand.self,
            LockCommand.self,
            StatusCommand.self,
            AgentCommand.self,
            PasswdCommand.self,
            VerifyCommand.self,
            CopyCommand.self,
            LogoutCommand.self,
            JWTCommand.self,
            PKCECommand.self,
            GenerateCommand.self,
            OAuthCommand.self,
        ]
    }

    /// Commands for fob's own use, not listed by `fob --help` (the clipboard
    /// clearer `fob copy` leaves behind).
    public static var internalCommands: [any FobCommand.Type] {
        [
            ClipboardClearerCommand.self,
        ]
    }

    /// What `fob` runs when no command is given: the terminal UI.
    public static var interactiveCommand: any FobCommand.Type { TerminalUICommand.self }
}
