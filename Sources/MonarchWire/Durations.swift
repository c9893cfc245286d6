/// Parses a duration written with a unit: `250ms`, `5s`, `2m`, `1h`.
///
/// Promises:
/// - the number is a non-negative decimal, with an optional fraction (`1.5s`, `0.25h`); the
///   units are `ms`, `s`, `m` and `h`; spaces may stand between number and unit (`5 s`) and
///   around the whole;
/// - a bare number (`5`) is rejected, because a reader cannot tell seconds from milliseconds;
/// - signs, other units, exponents and values too large for `Duration` give `nil`;
/// - fractions finer than a nanosecond are dropped.
public func parseDuration(_ text: String) -> Duration? {
    guard let (number, unit) = splitQuantity(text), !unit.isEmpty else { return nil }
    let nanosecondsPerUnit: Int64
    switch unit {
    case "ms": nanosecondsPerUnit = 1_000_000
    case "s": nanosecondsPerUnit = 1_000_000_000
    case "m": nanosecondsPerUnit = 60_000_000_000
    case "h": nanosecondsPerUnit = 3_600_000_000_000
    default: return nil
    }
    let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let wholeText = parts[0]
    let fractionText = parts.count > 1 ? parts[1] : ""
    // "5." and ".5" are not numbers here; neither is "".
    guard !wholeText.isEmpty, parts.count == 1 || !fractionText.isEmpty else { return nil }
    guard let whole = Int64(wholeText) else { return nil }
    let (wholeNanoseconds, overflow) = whole.multipliedReportingOverflow(by: nanosecondsPerUnit)
    guard !overflow else { return nil }
    // The fraction: at most 12 digits matter (hours have 3.6e12 ns); the rest is below 1 ns.
    var fractionNanoseconds: Int64 = 0
    var scale = nanosecondsPerUnit
    for digit in fractionText.prefix(12) {
        guard let value = digit.wholeNumberValue else { return nil }
        scale /= 10
        fractionNanoseconds += Int64(value) * scale
    }
    guard fractionText.dropFirst(12).allSatisfy(\.isASCIIDigit) else { return nil }
    let (total, overflowTotal) = wholeNanoseconds.addingReportingOverflow(fractionNanoseconds)
    guard !overflowTotal else { return nil }
    return .nanoseconds(total)
}

/// Splits `"12.5 ms"` into `("12.5", "ms")`: trims spaces, takes the leading digits and dots as
/// the number and the rest (after optional spaces) as the unit. `nil` when there is no number.
func splitQuantity(_ text: String) -> (number: Substring, unit: Substring)? {
    let trimmed = text.trimmingSpaces()
    let number = trimmed.prefix { $0.isASCIIDigit || $0 == "." }
    guard !number.isEmpty else { return nil }
    let unit = trimmed[number.endIndex...].drop { $0 == " " }
    return (number, unit)
}

extension Character {
    /// Whether this is one of the ASCII digits 0–9 (not any Unicode digit).
    package var isASCIIDigit: Bool { ("0"..."9").contains(self) && isASCII }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let start = drop(while: isBlank)
        return Substring(start.reversed().drop(while: isBlank).reversed())
    }
}
