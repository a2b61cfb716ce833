import FoundationEssentials
@preconcurrency import Glibc

/// Dates as text through the C library's `strftime(3)`, in the process's
/// time zone (`TZ`, else `/etc/localtime`) or in UTC; the Gregorian
/// calendar and the POSIX locale's words. Seconds are whole: a fraction
/// is dropped (rounded toward the past).
public enum DateText {
    /// Serializes the process-wide state `localtime_r` reads (`TZ` and
    /// `tzset`), so that a caller naming a zone does not race another.
    private static let zoneLock = Lock()

    /// `date` in the local time zone, by `format` (`strftime(3)`
    /// conversions: `%Y-%m-%d %H:%M` for `2016-04-05 18:01`).
    /// - Parameters:
    ///   - zone: a `TZ` value (`Europe/Berlin`, `UTC`) to use instead of the
    ///     process's zone; the process's own is restored afterwards.
    public static func local(_ date: Date, _ format: String, zone: String? = nil) -> String {
        var seconds = time_t(clamping: Int64(date.timeIntervalSince1970.rounded(.down).clampedToInt64))
        var parts = tm()
        zoneLock.lock()
        defer { zoneLock.unlock() }
        guard let zone else {
            localtime_r(&seconds, &parts)
            return render(&parts, format)
        }
        let saved = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        localtime_r(&seconds, &parts)
        let text = render(&parts, format)
        if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
        tzset()
        return text
    }

    /// `date` in UTC, by `format` (`strftime(3)` conversions:
    /// `%Y-%m-%dT%H:%M:%SZ` for `2016-04-05T16:01:14Z`, RFC 3339).
    public static func utc(_ date: Date, _ format: String) -> String {
        var seconds = time_t(clamping: Int64(date.timeIntervalSince1970.rounded(.down).clampedToInt64))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return render(&parts, format)
    }

    private static func render(_ parts: inout tm, _ format: String) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let count = strftime(&buffer, buffer.count, format, &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Double {
    /// The value as an `Int64`'s range allows (NaN as 0).
    fileprivate var clampedToInt64: Double {
        guard !isNaN else { return 0 }
        return Swift.min(Swift.max(self, -9.2e18), 9.2e18)
    }
}
