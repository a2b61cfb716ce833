import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The process state a `fob` run sees: arguments, environment, the three
/// standard streams, the controlling terminal and the KDF presets.
///
/// ``FobCLI/main()`` builds the live one; tests build their own and call
/// ``FobCLI/run(_:)`` in process.
public struct CLIContext {
    /// The arguments after the program name.
    public var arguments: [String]
    /// The environment variables (`FOB_VAULT`, `HOME`, …).
    public var environment: [String: String]
    /// Standard input: secrets and `--password-file -` are read from here.
    public var standardInput: any ByteSource
    /// Standard output: command results.
    public var standardOutput: any ByteSink
    /// Standard error: one-line error messages and notices.
    public var standardError: any ByteSink
    /// Whether standard input is a terminal; then secrets are asked with a
    /// masked prompt instead of read from standard input.
    public var standardInputIsTerminal: Bool
    /// The width in columns of the terminal standard output writes to
    /// (``terminalColumns(environment:windowColumns:)``); `nil` when standard
    /// output is not a terminal (a pipe or a file), where tables print every
    /// cell whole for scripts.
    public var standardOutputColumns: Int?
    /// The controlling terminal, for masked prompts (master password, secrets).
    public var terminal: any SecretPrompter
    /// Maps a `--kdf` preset name to Argon2id costs (tests map every preset
    /// to a fast one).
    public var kdfParameters: @Sendable (KDFParameters.Preset) -> KDFParameters
    /// The `fob` binary to start the agent with (`fob agent`); `nil` (the
    /// default, in process) never starts one, but a running agent is used.
    public var agentExecutable: String?
    /// Where commands read the time (expiries, one-time codes, import
    /// dates, the agent's lock time); tests give a fixed one.
    public var clock: any WallClock

    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - environment: the environment variables.
    ///   - standardInput: where secrets and `--password-file -` come from.
    ///   - standardOutput: where results go.
    ///   - standardError: where errors go.
    ///   - standardInputIsTerminal: whether to prompt instead of reading standard input.
    ///   - standardOutputColumns: the width of standard output's terminal, `nil` when it is none.
    ///   - terminal: the masked prompt on the controlling terminal.
    ///   - kdfParameters: the costs of each `--kdf` preset.
    ///   - clock: where commands read the time.
    public init(
        arguments: [String],
        environment: [String: String] = [:],
        standardInput: any ByteSource = BufferSource([]),
        standardOutput: any ByteSink = BufferSink(),
        standardError: any ByteSink = BufferSink(),
        standardInputIsTerminal: Bool = false,
        standardOutputColumns: Int? = nil,
        terminal: any SecretPrompter = NoTerminal(),
        kdfParameters: @escaping @Sendable (KDFParameters.Preset) -> KDFParameters = { KDFParameters($0) },
        clock: any WallClock = LiveClock()
    ) {
        self.arguments = arguments
        self.environment = environment
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.standardInputIsTerminal = standardInputIsTerminal
        self.standardOutputColumns = standardOutputColumns
        self.terminal = terminal
        self.kdfParameters = kdfParameters
        self.clock = clock
    }

    /// The real process: its arguments (checked by ``utf8Arguments(_:)``),
    /// the process environment, file descriptors 0, 1 and 2, and `/dev/tty`.
    /// - Throws: ``UsageError`` when an argument is not UTF-8.
    public static func live() throws(UsageError) -> CLIContext {
        let argv = (0..<Int(CommandLine.argc)).map { index -> [UInt8] in
            guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
        }
        let all = try utf8Arguments(argv)
        let environment = ProcessEnvironment.current()
        var context = CLIContext(
            arguments: FobCLI.arguments(program: all.first ?? "fob", arguments: Array(all.dropFirst())),
            environment: environment,
            standardInput: FileDescriptorSource(fd: STDIN_FILENO),
            standardOutput: FileDescriptorSink(fd: STDOUT_FILENO),
            standardError: FileDescriptorSink(fd: STDERR_FILENO),
            standardInputIsTerminal: isatty(STDIN_FILENO) == 1,
            standardOutputColumns: isatty(STDOUT_FILENO) == 1
                ? terminalColumns(environment: environment, windowColumns: windowColumns(of: STDOUT_FILENO)) : nil,
            terminal: ControllingTerminal())
        context.agentExecutable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return context
    }
}

extension CLIContext {
    /// The width of a terminal as `ps` and `journalctl` take it: `COLUMNS`
    /// when it is a whole number above 0, else the terminal's own width,
    /// else 80.
    /// - Parameters:
    ///   - environment: the environment variables (`COLUMNS`).
    ///   - windowColumns: the terminal's width (``windowColumns(of:)``), `nil` or 0 when unknown.
    /// - Returns: the width in columns, 1 or more.
    public static func terminalColumns(environment: [String: String], windowColumns: Int?) -> Int {
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        if let windowColumns, windowColumns > 0 { return windowColumns }
        return 80
    }

    /// The width of the terminal open on `fd` (`TIOCGWINSZ`), `nil` when it
    /// is not a terminal or has no size (a pseudo-terminal nobody sized).
    static func windowColumns(of fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The arguments as text, refusing any that is not UTF-8.
    ///
    /// Swift's `CommandLine.arguments` replaces every invalid byte with
    /// U+FFFD, which would make `x\xFF` and `x\xFE` one name, so that a
    /// `save` of the second replaced the first's secret. An argument is
    /// therefore taken only when its bytes are UTF-8, kept exactly.
    /// - Parameter argv: each argument's bytes (without the terminating NUL),
    ///   the program name first.
    /// - Returns: the arguments, the program name first.
    /// - Throws: ``UsageError`` (exit 2) naming the first argument that is
    ///   not UTF-8, its bad bytes shown as `\xFF`.
    public static func utf8Arguments(_ argv: [[UInt8]]) throws(UsageError) -> [String] {
        var result: [String] = []
        result.reserveCapacity(argv.count)
        for (index, bytes) in argv.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw UsageError(
                    "argument \(index) is not UTF-8 text (\"\(escapedBytes(bytes))\"): "
                        + "names, paths and options are UTF-8, so that two names never become one item")
            }
            result.append(text)
        }
        return result
    }

    /// `bytes` as text, each byte of an invalid sequence and each control
    /// character written as `\xFF` (for messages).
    static func escapedBytes(_ bytes: [UInt8]) -> String {
        var out = ""
        var rest = bytes[...]
        while !rest.isEmpty {
            // The longest valid prefix (at most 4 bytes a scalar) is kept as text.
            var taken = 0
            for length in stride(from: min(4, rest.count), through: 1, by: -1) {
                let chunk = rest.prefix(length)
                if let scalar = String(validating: chunk, as: UTF8.self)?.unicodeScalars.first,
                    String(scalar).utf8.count == length
                {
                    out += displaySafe(String(scalar))
                    taken = length
                    break
                }
            }
            if taken == 0 {
                out += "\\x" + String(rest.first!, radix: 16, uppercase: true)
                taken = 1
            }
            rest = rest.dropFirst(taken)
        }
        return out
    }
}

// MARK: - Byte streams

/// A stream of input bytes: standard input, or a buffer in tests.
public protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes into `buffer`.
    /// - Returns: how many bytes were read; 0 at the end of the input.
    /// - Throws: `KeychainError.io` when reading fails.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(KeychainError) -> Int
}

/// Reads a file descriptor (retrying on `EINTR`); does not close it.
public final class FileDescriptorSource: ByteSource {
    /// The descriptor read from.
    public let fd: Int32
    /// What the descriptor is, for error messages, such as `standard input`.
    public let name: String

    /// - Parameters:
    ///   - fd: an open file descriptor.
    ///   - name: what it is, for error messages.
    public init(fd: Int32, name: String = "standard input") {
        self.fd = fd
        self.name = name
    }

    /// Reads with `read(2)`.
    /// - Throws: `KeychainError.io` naming the system error.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(KeychainError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw .io("cannot read \(name): \(String(cString: strerror(errno)))")
        }
    }
}

/// Bytes held in memory, read once from the start (for tests).
public final class BufferSource: ByteSource {
    private var bytes: [UInt8]
    private var position = 0

    /// - Parameter bytes: the whole input.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The UTF-8 bytes of `text`.
    public convenience init(text: String) { self.init(Array(text.utf8)) }

    /// Copies the next bytes; never fails.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(KeychainError) -> Int {
        let n = min(buffer.count, bytes.count - position)
        if n > 0 {
            bytes.withUnsafeBytes { src in
                buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
            }
        }
        position += n
        return n
    }

    deinit { bytes.wipe() }
}

/// Where output bytes go: a file descriptor, or a buffer in tests.
public protocol ByteSink: AnyObject {
    /// Writes all of `bytes`. Output errors (a closed pipe) are ignored: the
    /// command's own result decides the exit status.
    func write(_ bytes: UnsafeRawBufferPointer)
}

extension ByteSink {
    /// Writes the UTF-8 bytes of `text`.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `bytes`.
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes a secret's bytes without copying them into ordinary memory.
    public func write(_ secret: SecretBytes) {
        secret.withUnsafeBytes { write($0) }
    }
}

/// Writes to a file descriptor (retrying on `EINTR` and short writes); does not close it.
public final class FileDescriptorSink: ByteSink {
    /// The descriptor written to.
    public let fd: Int32

    /// - Parameter fd: an open file descriptor.
    public init(fd: Int32) { self.fd = fd }

    /// Writes with `write(2)` until everything is written or an error other than `EINTR`.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        FileDescriptorIO.writeAll(bytes, to: fd)
    }
}

/// Collects output in memory (for tests).
public final class BufferSink: ByteSink {
    /// Everything written so far.
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Appends `bytes`.
    public func write(_ bytes: UnsafeRawBufferPointer) { self.bytes.append(contentsOf: bytes) }

    /// Everything written so far as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
