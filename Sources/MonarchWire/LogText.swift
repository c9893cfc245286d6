/// Text that came from a peer (a path, a worker's name, an error message), made safe to put in
/// a log line: it cannot start a line of its own or hide what it is.
public enum LogText {
    /// The longest text kept, in characters; longer text is cut and says how long it was.
    public static let defaultLimit = 200

    /// `text` with control characters (newlines, escape sequences, DEL, the C1 controls and
    /// the Unicode line and paragraph separators) written as `\n`, `\u{1b}` and so on, and cut
    /// after `limit` characters with a note of the full length in bytes.
    public static func sanitized(_ text: some StringProtocol, limit: Int = defaultLimit) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                result += "…(\(text.utf8.count) bytes)"
                break
            }
            count += 1
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || scalar.value == 0x2028 || scalar.value == 0x2029:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// ``sanitized(_:limit:)`` in double quotes, quotes inside written `\"`.
    public static func quoted(_ text: some StringProtocol, limit: Int = defaultLimit) -> String {
        "\"" + sanitized(text, limit: limit).replacingQuotes() + "\""
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var result = ""
        for character in self { result += character == "\"" ? "\\\"" : String(character) }
        return result
    }
}
