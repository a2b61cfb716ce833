import FobSystem
import FoundationEssentials

/// Words for dates and durations in terminal output.
public enum TimeText {
    /// A date in the given time zone: `2016-04-05 18:01:14 CEST`.
    /// - Parameters:
    ///   - date: the instant.
    ///   - timeZone: the zone to show it in, as `TZ` names it
    ///     (`Europe/Berlin`); the process's local zone by default. The
    ///     zone's name is its abbreviation in the time zone database.
    public static func local(_ date: Date, timeZone: String? = nil) -> String {
        DateText.local(date, "%Y-%m-%d %H:%M:%S %Z", zone: timeZone)
    }

    /// A duration in the two largest units: `45s`, `4m`, `2h 5m`, `3d 4h`, `10y 239d`.
    /// - Parameter seconds: the duration in seconds (its sign is ignored);
    ///   beyond 100,000 years (or not finite) it reads `>100000y`, so no
    ///   value can trap in the conversion to an integer.
    public static func duration(_ seconds: TimeInterval) -> String {
        let limit = 100_000.0 * 365 * 86_400
        guard seconds.isFinite, abs(seconds) < limit else { return ">100000y" }
        let s = Int(abs(seconds).rounded(.down))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" }
        if s < 86_400 {
            let m = (s % 3600) / 60
            return m == 0 ? "\(s / 3600)h" : "\(s / 3600)h \(m)m"
        }
        if s < 365 * 86_400 {
            let h = (s % 86_400) / 3600
            return h == 0 ? "\(s / 86_400)d" : "\(s / 86_400)d \(h)h"
        }
        let d = (s % (365 * 86_400)) / 86_400
        return d == 0 ? "\(s / (365 * 86_400))y" : "\(s / (365 * 86_400))y \(d)d"
    }

    /// `expires in 4m` or `expired 2h 5m ago`, relative to `now`.
    /// - Parameters:
    ///   - expiry: when the token stops being valid.
    ///   - now: the current time.
    public static func expiry(_ expiry: Date, now: Date) -> String {
        let delta = expiry.timeIntervalSince(now)
        return delta > 0 ? "expires in \(duration(delta))" : "expired \(duration(delta)) ago"
    }

    /// `in 4m` or `2h 5m ago`, relative to `now`.
    public static func relative(_ date: Date, now: Date) -> String {
        let delta = date.timeIntervalSince(now)
        return delta > 0 ? "in \(duration(delta))" : "\(duration(delta)) ago"
    }
}
