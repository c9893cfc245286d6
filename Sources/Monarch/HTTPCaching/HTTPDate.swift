#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates (RFC 9110 §5.6.7): read in the three forms a recipient must accept, strictly
/// (a value in any other shape is invalid), and written as IMF-fixdate.
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since the Unix epoch of `text`: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
    /// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) or asctime (`Sun Nov  6 08:49:37 1994`);
    /// nil for anything else (another zone, missing comma, extra spaces, one-digit hours).
    public static func seconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        if bytes.count == 29 { return imfFixdate(bytes) }
        if bytes.count == 24 { return asctime(bytes) }
        return rfc850(bytes)
    }

    /// Now, written as IMF-fixdate.
    public static func now() -> String {
        string(fromSeconds: Int64(time(nil)))
    }

    /// `seconds` since the epoch as IMF-fixdate.
    public static func string(fromSeconds seconds: Int64) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    private static func imfFixdate(_ b: [UInt8]) -> Int64? {
        // "Sun, 06 Nov 1994 08:49:37 GMT"
        guard days.contains(text(b, 0, 3)), b[3] == UInt8(ascii: ","), b[4] == 32, b[7] == 32, b[11] == 32, b[16] == 32,
            text(b, 25, 4) == " GMT", let day = number(b, 5, 2), let month = months.firstIndex(of: text(b, 8, 3)),
            let year = number(b, 12, 4), let clock = clock(b, 17)
        else { return nil }
        return epochSeconds(year: year, month: month, day: day, clock: clock)
    }

    private static func rfc850(_ b: [UInt8]) -> Int64? {
        // "Sunday, 06-Nov-94 08:49:37 GMT"
        guard let comma = b.firstIndex(of: UInt8(ascii: ",")), longDays.contains(text(b, 0, comma)),
            b.count == comma + 24, b[comma + 1] == 32, b[comma + 4] == UInt8(ascii: "-"), b[comma + 8] == UInt8(ascii: "-"),
            b[comma + 11] == 32, text(b, comma + 20, 4) == " GMT", let day = number(b, comma + 2, 2),
            let month = months.firstIndex(of: text(b, comma + 5, 3)), let shortYear = number(b, comma + 9, 2),
            let clock = clock(b, comma + 12)
        else { return nil }
        // A two-digit year more than 50 years ahead is in the past century (RFC 9110 §5.6.7).
        var year = 2000 + shortYear
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        if year > Int(parts.tm_year) + 1900 + 50 { year -= 100 }
        return epochSeconds(year: year, month: month, day: day, clock: clock)
    }

    private static func asctime(_ b: [UInt8]) -> Int64? {
        // "Sun Nov  6 08:49:37 1994"
        guard days.contains(text(b, 0, 3)), b[3] == 32, let month = months.firstIndex(of: text(b, 4, 3)), b[7] == 32,
            b[10] == 32, b[19] == 32, let clock = clock(b, 11), let year = number(b, 20, 4)
        else { return nil }
        let day: Int?
        if b[8] == 32 { day = number(b, 9, 1) } else { day = number(b, 8, 2) }
        guard let day else { return nil }
        return epochSeconds(year: year, month: month, day: day, clock: clock)
    }

    /// `HH:MM:SS` at `start`, as seconds into the day.
    private static func clock(_ b: [UInt8], _ start: Int) -> Int? {
        guard b.count >= start + 8, b[start + 2] == UInt8(ascii: ":"), b[start + 5] == UInt8(ascii: ":"),
            let hour = number(b, start, 2), let minute = number(b, start + 3, 2), let second = number(b, start + 6, 2),
            hour < 24, minute < 60, second < 61
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    private static func text(_ b: [UInt8], _ start: Int, _ count: Int) -> String {
        guard start >= 0, count >= 0, start + count <= b.count else { return "" }
        return String(decoding: b[start..<(start + count)], as: UTF8.self)
    }

    private static func number(_ b: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= b.count else { return nil }
        var value = 0
        for byte in b[start..<(start + count)] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Days from the civil date to 1970-01-01 (the proleptic Gregorian calendar), then seconds.
    private static func epochSeconds(year: Int, month: Int, day: Int, clock: Int) -> Int64? {
        let lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        guard day >= 1, day <= lengths[month] + (month == 1 && leap ? 1 : 0) else { return nil }
        let y = month < 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 10) % 12
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Int64(days) * 86_400 + Int64(clock)
    }
}
