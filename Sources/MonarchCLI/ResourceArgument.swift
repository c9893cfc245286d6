/// What the commands that take a resource path accept as one.
enum ResourceArgument {
    /// Why `text` is not taken as a resource path: it is a URL naming a host (`http://host/x`),
    /// which the coordinator would not use — its routes decide where a path is fetched from.
    /// Nil when `text` is a path (a leading `/` is fine).
    static func problem(with text: String) -> String? {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.first, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        let rest = text[separator.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let path = rest[slash...].drop(while: { $0 == "/" })
        return "\"\(text)\" is a URL, and the host \(rest[..<slash]) in it would not be used: give the resource's path, "
            + "such as \"\(path.isEmpty ? "index.html" : String(path))\" (the configuration's routes decide where a path is fetched from)"
    }
}
