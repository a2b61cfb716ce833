/// Recognises a shell that only starts one program: `sh -c 'PROGRAM ARGS'`,
/// as git runs a credential helper configured with arguments or an
/// absolute path (`sh -c '/usr/bin/git-credential-fob get'`), or as
/// `tmux new-window CMD` and many launchers run a command line.
///
/// bash runs the last command of such a line in its own process (it execs
/// it), so its parent is the program that asked for the line; dash keeps
/// itself as the parent and waits. A shell recognised here is skipped when
/// Fob names the program behind its own command (``ProcessInspector``), so
/// the requester is the same whichever shell `/bin/sh` is. A shell that
/// runs more than one command (`sh -c 'fob get a b; echo done'`), a script
/// (`sh deploy.sh`) or an interactive shell is not recognised: it is the
/// program that decided to read the secret, and is itself the requester.
public enum ShellLauncher {
    /// The shells recognised, by the last component of `argv[0]` (a login
    /// shell's leading `-` removed).
    static let shells: Set<String> = ["sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "posh", "yash"]

    /// Characters that make a command line more than one simple command
    /// (lists, pipes, redirections, substitutions, groups, globs).
    static let compound: Set<Character> = [";", "&", "|", "<", ">", "(", ")", "`", "$", "\n", "{", "}", "*", "?", "["]

    /// Whether the process with arguments `shell` is a shell whose whole
    /// command line (`-c STRING`) runs the program whose `argv` is `child`,
    /// with those very arguments, and nothing else.
    /// - Parameters:
    ///   - shell: the shell's `argv` (from `/proc/PID/cmdline`).
    ///   - child: the `argv` of the process it started, as
    ///     ``ProcessInspector`` reads it (empty arguments left out).
    /// - Returns: `false` for anything not certainly such a launcher.
    public static func onlyStarts(_ child: [String], shell: [String]) -> Bool {
        guard let first = shell.first, !child.isEmpty else { return false }
        var name = Substring(first.split(separator: "/").last ?? "")
        if name.hasPrefix("-") { name = name.dropFirst() }
        guard shells.contains(String(name)), let (line, positional) = commandLine(shell),
            let words = command(line, positional: positional)
        else { return false }
        let started = words.filter { !$0.isEmpty }.map {
            String(decoding: Array($0.utf8.prefix(Requester.maxArgumentBytes)), as: UTF8.self)
        }
        return started == child
    }

    /// The `STRING` of `-c STRING`, when the options before it include `c`,
    /// and the arguments after it (`$0`, `$1` …).
    static func commandLine(_ shell: [String]) -> (String, [String])? {
        var index = 1
        var readsCommand = false
        while index < shell.count {
            let option = shell[index]
            if option == "--" || option == "-" {
                index += 1
                break
            }
            guard option.hasPrefix("-") || option.hasPrefix("+") else { break }
            if option.hasPrefix("--") {
                index += 1
                continue
            }
            let letters = option.dropFirst()
            if letters.contains("c") && option.hasPrefix("-") { readsCommand = true }
            // `-o NAME` and `-O NAME` take the next argument.
            index += letters.contains("o") || letters.contains("O") ? 2 : 1
        }
        guard readsCommand, index < shell.count else { return nil }
        return (shell[index], Array(shell[(index + 1)...]))
    }

    /// The `argv` a one-command line runs: its words after variable
    /// assignments and an `exec`, unquoted, with `"$@"` at its end replaced
    /// by the positional parameters (`positional` without `$0`); `nil` for
    /// a compound line.
    static func command(_ line: String, positional: [String]) -> [String]? {
        var text = Substring(line)
        var tail: [String] = []
        // git runs a helper with arguments of its own as `HELPER "$@"`.
        if text.hasSuffix(" \"$@\"") {
            text = text.dropLast(5)
            tail = Array(positional.dropFirst())
        }
        guard !text.contains(where: { compound.contains($0) }) else { return nil }
        guard let words = words(text) else { return nil }
        var rest = words[...]
        while let word = rest.first, word.contains("=") && !word.hasPrefix("=") && !word.contains("/") {
            rest = rest.dropFirst()
        }
        if rest.first == "exec" { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        return Array(rest) + tail
    }

    /// Splits on blanks, honouring single and double quotes; `nil` when a quote is left open.
    static func words(_ text: Substring) -> [String]? {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else if character == "\\" {
                return nil
            } else {
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil else { return nil }
        if inWord { words.append(current) }
        return words
    }
}
