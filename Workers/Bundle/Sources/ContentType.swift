/// The media type of a file, from its name's extension.
public enum ContentType {
    private static let byExtension: [String: String] = [
        "html": "text/html", "htm": "text/html", "css": "text/css", "js": "text/javascript",
        "mjs": "text/javascript", "json": "application/json", "txt": "text/plain", "md": "text/markdown",
        "csv": "text/csv", "xml": "application/xml", "yaml": "application/yaml", "yml": "application/yaml",
        "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "gif": "image/gif", "webp": "image/webp", "ico": "image/x-icon", "avif": "image/avif",
        "pdf": "application/pdf", "wasm": "application/wasm", "woff": "font/woff", "woff2": "font/woff2",
        "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg", "zip": "application/zip",
        "gz": "application/gzip",
    ]

    /// The media type for `name` (case-insensitive extension); text types carry
    /// `; charset=utf-8`; an unknown extension gives `application/octet-stream`.
    public static func forFileName(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        let type = byExtension[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
        let isText = type.hasPrefix("text/") || type == "application/json" || type == "image/svg+xml"
            || type == "application/xml" || type == "application/yaml" || type == "text/javascript"
        return isText ? type + "; charset=utf-8" : type
    }
}
