import CLinux
@preconcurrency import Glibc

/// Process-wide protections for a program that handles secrets.
public enum ProcessHardening {
    /// Disables core dumps (`RLIMIT_CORE` = 0) and ptrace attachment by
    /// other unprivileged processes (`PR_SET_DUMPABLE` = 0).
    /// Call once, early in `main`.
    public static func apply() {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        _ = fob_disable_dumpable()
    }
}
