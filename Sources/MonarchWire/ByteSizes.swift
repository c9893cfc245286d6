/// Parses a byte size: `4096`, `512KB`, `64MB`, `1GB`.
///
/// Promises:
/// - the number is a non-negative whole number; a plain number counts bytes, as does the unit `B`;
/// - `KB`, `MB` and `GB` are 1024-based (as memory sizes are), and `KiB`, `MiB` and `GiB`
///   mean the same; units are matched without regard to case (`64mb`);
/// - spaces may stand between number and unit (`64 MB`) and around the whole;
/// - fractions, signs, other units and sizes that do not fit in `Int` give `nil`.
public func parseByteSize(_ text: String) -> Int? {
    guard let (number, unit) = splitQuantity(text), number.allSatisfy(\.isASCIIDigit) else { return nil }
    let multiplier: Int
    switch unit.lowercased() {
    case "", "b": multiplier = 1
    case "kb", "kib": multiplier = 1 << 10
    case "mb", "mib": multiplier = 1 << 20
    case "gb", "gib": multiplier = 1 << 30
    default: return nil
    }
    guard let count = Int(number) else { return nil }
    let (bytes, overflow) = count.multipliedReportingOverflow(by: multiplier)
    return overflow ? nil : bytes
}
