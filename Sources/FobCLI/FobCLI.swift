@preconcurrency import Glibc

/// The `fob` command line.
public enum FobCLI {
    /// Runs `fob` with the process's arguments and exits with its status.
    public static func main() -> Never {
        exit(0)
    }
}
