/// What a word completes to.
enum CompletionSource: Equatable {
    /// Nothing to offer (free text such as a label).
    case none
    /// One of these words.
    case words([String])
    /// Service names (`fob __complete services`).
    case services
    /// Account names of the service typed before (`fob __complete accounts SERVICE`).
    case accounts
    /// File names.
    case files
    /// Command names on `PATH`.
    case commands
}

/// The command table as completion sees it: built from ``FobCLI/commands``
/// and ``GlobalOptions/specs``, so the scripts cannot drift from `--help`.
struct CompletionModel {
    struct Option {
        var name: String
        var takesValue: Bool
        var value: CompletionSource
        var help: String
    }
    struct Command {
        var name: String
        var summary: String
        var options: [Option]
        var positionals: [CompletionSource]
        var variadic: Bool
    }
    var globals: [Option]
    var commands: [Command]

    static var current: CompletionModel {
        let globals =
            GlobalOptions.specs.map { option($0.option) }
            + [
                Option(name: "--help", takesValue: false, value: .none, help: "show help"),
                Option(name: "--version", takesValue: false, value: .none, help: "show the version"),
            ]
        let commands = FobCLI.commands.map { command in
            Command(
                name: command.name, summary: command.summary, options: command.options.map(option),
                positionals: command.positionals.map(positional), variadic: command.variadic)
        }
        return CompletionModel(globals: globals, commands: commands)
    }

    static func option(_ spec: OptionSpec) -> Option {
        var value = CompletionSource.none
        if !spec.choices.isEmpty {
            value = .words(spec.choices)
        } else if let name = spec.valueName, ["PATH", "FILE", "F"].contains(name) {
            value = .files
        } else if spec.valueName == "SERVICE" {
            value = .services
        }
        return Option(name: spec.name, takesValue: spec.valueName != nil, value: value, help: spec.help)
    }

    /// A positional's source from its name in the table: `a|b` words,
    /// `SERVICE` (and `NEW-SERVICE`), `ACCOUNT`, `PATH`/`FILE`, `COMMAND`.
    static func positional(_ name: String) -> CompletionSource {
        if name.contains("|") { return .words(name.split(separator: "|").map(String.init)) }
        switch name {
        case "SERVICE", "NEW-SERVICE": return .services
        case "ACCOUNT": return .accounts
        case "PATH", "FILE": return .files
        case "COMMAND": return .commands
        default: return .none
        }
    }

    /// Options that take a value, global and per command (`cmd --opt`).
    var valueOptions: (globals: [String], commands: [String]) {
        (
            globals.filter(\.takesValue).map(\.name),
            commands.flatMap { c in c.options.filter(\.takesValue).map { "\(c.name) \($0.name)" } }
        )
    }
}

/// The three scripts. Each finds the command word (skipping global options
/// and their values), then completes an option's value, an option, or the
/// positional at its index.
enum CompletionScripts {
    /// `'text'` for bash and zsh.
    static func shQuote(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }

    /// `'text'` for fish.
    static func fishQuote(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    /// A bash or zsh statement completing `source` (`$cur` the word, `${args[1]}` the service).
    private static func shReply(_ source: CompletionSource, zsh: Bool, serviceWord: String) -> String {
        switch source {
        case .none: return zsh ? "return 1" : "return"
        case .words(let words):
            return zsh
                ? "compadd -- \(words.map(shQuote).joined(separator: " "))"
                : "COMPREPLY=($(compgen -W \(shQuote(words.joined(separator: "\n"))) -- \"$cur\"))"
        // Item names are data: never a word list that the shell expands.
        case .services:
            return zsh ? "compadd -- ${(0)\"$(_fob_names services)\"}" : "_fob_reply services"
        case .accounts:
            return zsh
                ? "compadd -- ${(0)\"$(_fob_names accounts \"\(serviceWord)\")\"}"
                : "_fob_reply accounts \"\(serviceWord)\""
        case .files: return zsh ? "_files" : "COMPREPLY=($(compgen -f -- \"$cur\"))"
        case .commands: return zsh ? "_command_names -e" : "COMPREPLY=($(compgen -c -- \"$cur\"))"
        }
    }

    /// The body shared by bash and zsh: everything but how words are read and replies made.
    private static func shBody(_ model: CompletionModel, zsh: Bool) -> String {
        let (globalValues, commandValues) = model.valueOptions
        let first = zsh ? 2 : 1
        let serviceWord = zsh ? "${args[1]}" : "${args[0]}"
        var s = """
                local cmd="" w i ended=0
                local -a args=() _fob_globals=()
                for (( i=\(first); i<\(zsh ? "CURRENT" : "COMP_CWORD"); i++ )); do
                    w=\(zsh ? "${words[i]}" : "${COMP_WORDS[i]}")
                    if (( ended )); then args+=("$w"); continue; fi
                    case "$w" in
                        --) ended=1; continue ;;
                        --vault) _fob_globals+=("$w" "\(zsh ? "${words[i+1]}" : "${COMP_WORDS[i+1]}")"); (( i++ )); continue ;;
                        \(globalValues.joined(separator: "|"))) (( i++ )); continue ;;
                    esac
                    if [[ -n $cmd ]]; then
                        case "$cmd $w" in
                            \(commandValues.map(shQuote).joined(separator: "|"))) (( i++ )); continue ;;
                        esac
                    fi
                    case "$w" in -*) continue ;; esac
                    if [[ -z $cmd ]]; then cmd=$w; else args+=("$w"); fi
                done
                case "$prev" in

            """
        for option in model.globals where option.takesValue {
            s += "            \(option.name)) \(shReply(option.value, zsh: zsh, serviceWord: serviceWord)); return ;;\n"
        }
        s += "        esac\n        if (( ! ended )); then\n            case \"$cmd $prev\" in\n"
        for command in model.commands {
            for option in command.options where option.takesValue {
                s +=
                    "                \(shQuote("\(command.name) \(option.name)"))) \(shReply(option.value, zsh: zsh, serviceWord: serviceWord)); return ;;\n"
            }
        }
        s += "            esac\n        fi\n"
        let commandWords = model.commands.map(\.name)
        let globalNames = model.globals.map(\.name)
        s += "        if [[ -z $cmd ]]; then\n"
        s +=
            "            if [[ $cur == -* ]]; then \(shReply(.words(globalNames), zsh: zsh, serviceWord: serviceWord))\n"
        if zsh {
            let described = model.commands.map {
                shQuote($0.name.replacing(":", with: "\\:") + ":" + $0.summary)
            }
            s += "            else local -a cmds=(\(described.joined(separator: " "))); _describe command cmds; fi\n"
        } else {
            s += "            else \(shReply(.words(commandWords), zsh: zsh, serviceWord: serviceWord)); fi\n"
        }
        s += "            return\n        fi\n"
        s += "        if [[ $cur == -* ]] && (( ! ended )); then\n            case \"$cmd\" in\n"
        for command in model.commands {
            let names = command.options.map(\.name) + globalNames
            s +=
                "                \(shQuote(command.name))) \(shReply(.words(names), zsh: zsh, serviceWord: serviceWord)) ;;\n"
        }
        s += "            esac\n            return\n        fi\n"
        s += "        case \"$cmd ${#args[@]}\" in\n"
        for command in model.commands {
            for (index, source) in command.positionals.enumerated() where source != .none {
                let pattern =
                    command.variadic && index == command.positionals.count - 1
                    ? "\(shQuote(command.name + " "))*" : shQuote("\(command.name) \(index)")
                s += "            \(pattern)) \(shReply(source, zsh: zsh, serviceWord: serviceWord)) ;;\n"
            }
            if command.variadic {
                s +=
                    "            \(shQuote(command.name + " "))*) \(shReply(.files, zsh: zsh, serviceWord: serviceWord)) ;;\n"
            }
        }
        s += "        esac\n"
        return s
    }

    /// The bash script: `complete -F _fob fob`.
    static func bash(_ model: CompletionModel) -> String {
        """
        # bash completion for fob, generated by `fob completion bash` from its command table.
        _fob_names() { command fob "${_fob_globals[@]}" __complete "$@" 2>/dev/null; }
        # Item names arrive NUL-terminated and become replies as data: each is
        # quoted with printf %q for the command line, never run through compgen -W.
        _fob_reply() {
            local n q
            while IFS= read -r -d '' n; do
                printf -v q '%q' "$n"
                if [[ $n == "$cur"* || $q == "$cur"* ]]; then COMPREPLY+=("$q"); fi
            done < <(_fob_names "$@")
        }
        _fob() {
            local IFS=$'\\n'
            local cur=${COMP_WORDS[COMP_CWORD]} prev=""
            (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
            COMPREPLY=()
        \(shBody(model, zsh: false))}
        complete -F _fob fob

        """
    }

    /// The zsh script: `#compdef fob`, autoloadable from `$fpath` as `_fob` or sourced.
    static func zsh(_ model: CompletionModel) -> String {
        """
        #compdef fob
        # zsh completion for fob, generated by `fob completion zsh` from its command table.
        _fob_names() { command fob "${_fob_globals[@]}" __complete "$@" 2>/dev/null }
        _fob() {
            local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
        \(shBody(model, zsh: true))}
        if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
            _fob "$@"
        else
            compdef _fob fob
        fi

        """
    }

    /// The fish script: `complete -c fob` lines with conditions.
    static func fish(_ model: CompletionModel) -> String {
        let (globalValues, commandValues) = model.valueOptions
        var s = """
            # fish completion for fob, generated by `fob completion fish` from its command table.
            function __fob_words
                set -l tokens (commandline -opc)
                set -e tokens[1]
                set -l cmd ''
                set -l args
                set -l skip 0
                set -l ended 0
                for w in $tokens
                    if test $skip = 1; set skip 0; continue; end
                    if test $ended = 1; set -a args $w; continue; end
                    if test "$w" = '--'; set ended 1; continue; end
                    if contains -- $w \(globalValues.joined(separator: " ")); set skip 1; continue; end
                    if test -n "$cmd"; and contains -- "$cmd $w" \(commandValues.map(fishQuote).joined(separator: " ")); set skip 1; continue; end
                    if string match -q -- '-*' $w; continue; end
                    if test -z "$cmd"; set cmd $w; else; set -a args $w; end
                end
                printf '%s\\n' $cmd $args
            end
            function __fob_no_command
                set -l w (__fob_words)
                test -z "$w[1]"
            end
            function __fob_command -a name
                set -l w (__fob_words)
                test "$w[1]" = "$name"
            end
            function __fob_position -a name index
                set -l w (__fob_words)
                test "$w[1]" = "$name"; and test (math (count $w) - 1) -eq $index
            end
            function __fob_service
                set -l w (__fob_words)
                printf '%s\\n' $w[2]
            end
            function __fob_names
                command fob __complete $argv 2>/dev/null
            end
            complete -c fob -f

            """
        func flags(_ source: CompletionSource) -> String {
            switch source {
            case .none: return "-x"
            case .words(let words): return "-x -a \(fishQuote(words.joined(separator: " ")))"
            case .services: return "-x -a '(__fob_names services | string split0)'"
            case .accounts: return "-x -a '(__fob_names accounts (__fob_service) | string split0)'"
            case .files: return "-r -F"
            case .commands: return "-x -a '(__fish_complete_command)'"
            }
        }
        for option in model.globals {
            s +=
                "complete -c fob -l \(option.name.dropFirst(2)) \(option.takesValue ? flags(option.value) + " " : "")-d \(fishQuote(option.help))\n"
        }
        for command in model.commands {
            s += "complete -c fob -n __fob_no_command -a \(fishQuote(command.name)) -d \(fishQuote(command.summary))\n"
            let condition = fishQuote("__fob_command \(command.name)")
            for option in command.options {
                s += "complete -c fob -n \(condition) -l \(option.name.dropFirst(2)) "
                s += "\(option.takesValue ? flags(option.value) + " " : "")-d \(fishQuote(option.help))\n"
            }
            for (index, source) in command.positionals.enumerated() where source != .none {
                s += "complete -c fob -n \(fishQuote("__fob_position \(command.name) \(index)")) \(flags(source))\n"
            }
        }
        return s
    }
}
