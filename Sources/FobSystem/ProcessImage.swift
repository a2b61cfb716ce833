@preconcurrency import Glibc

/// Replaces this process with another program (`execve`), for `fob run`:
/// the program keeps this process's id, so no process is left behind
/// holding secrets, and its exit status and signals reach the parent
/// directly.
public enum ProcessImage {
    /// Replaces the running program with `executable`.
    ///
    /// Before the exec every signal goes back to its default disposition
    /// and the signal mask is emptied (a blocked or ignored signal would
    /// otherwise stay so in the new program).
    /// - Parameters:
    ///   - executable: an absolute path (`PATH` is not searched).
    ///   - arguments: the arguments after the program name (never a secret).
    ///   - programName: `argv[0]`, the name the program sees itself run as
    ///     (what the user typed, as a shell passes it); `executable` when `nil`.
    ///   - environment: `NAME=value` C strings, the program's whole
    ///     environment; the caller allocated them and frees (and wipes) them
    ///     only when this returns.
    /// - Returns: only on failure: the `errno` of `execve` (ENOENT, EACCES, ENOEXEC, E2BIG).
    public static func replace(
        executable: String, arguments: [String], programName: String? = nil,
        environment: [UnsafeMutablePointer<CChar>]
    ) -> Int32 {
        let argv: [UnsafeMutablePointer<CChar>?] = ([programName ?? executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment + [nil]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&action.sa_mask)
        for number: Int32 in 1..<32 where number != SIGKILL && number != SIGSTOP {
            _ = sigaction(number, &action, nil)
        }
        var none = sigset_t()
        sigemptyset(&none)
        _ = pthread_sigmask(SIG_SETMASK, &none, nil)
        _ = execve(executable, argv, envp)
        return errno
    }
}
