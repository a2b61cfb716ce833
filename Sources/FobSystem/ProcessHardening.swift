import CLinux
@preconcurrency import Glibc

/// Process-wide protections for a program that handles secrets.
///
/// Two levels, because Linux ties two things together: a process that
/// turns off `PR_SET_DUMPABLE` also hides its `/proc/PID/exe`, `cwd`,
/// `environ` and namespaces from every unprivileged process of its user
/// (proc(5): they need a ptrace access check, which a non-dumpable process
/// fails), and the agent names each requester by exactly those files
/// (``ProcessInspector``). So a program the agent must name (every `fob`
/// command, the terminal UI, the git and docker helpers, the Secret Service
/// provider) only forbids core dumps; the agent, which nobody names and
/// which holds the keys, and the helpers `fob-http` and `fob-xml` also
/// forbid inspection.
public enum ProcessHardening {
    /// Turns core dumps off for good: `RLIMIT_CORE` soft and hard limits 0
    /// (raising a hard limit needs `CAP_SYS_RESOURCE`, so neither this
    /// process nor another of the user, through `prlimit`, turns them back
    /// on; a pipe `core_pattern` such as systemd-coredump honours it too).
    /// Call once, first thing in `main`.
    public static func forbidCoreDumps() {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
    }

    /// ``forbidCoreDumps()``, and no ptrace attachment or reading of this
    /// process's `/proc` files by other unprivileged processes
    /// (`PR_SET_DUMPABLE` = 0). Only for a process no agent needs to name.
    public static func forbidInspection() {
        forbidCoreDumps()
        _ = fob_disable_dumpable()
    }
}
