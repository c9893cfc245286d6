import Monarch
import MonarchConfig

/// The tags an upstream gives a response: its `Surrogate-Key` and `Cache-Tag` headers, each a
/// list separated by spaces or commas (Fastly's and Cloudflare's spellings). Bounded: at most
/// `limits.tagsPerEntry` tags of at most `limits.tagBytes` bytes each; longer tags, tags with
/// control characters and tags past the count are ignored (the entry is still kept).
enum EntryTags {
    /// The response headers tags are read from (lowercase, as Monarch keeps header names).
    static let headerNames = ["surrogate-key", "cache-tag"]

    /// The tags of `response`, in the order the headers give them, each once.
    static func tags(of response: Response, within limits: Configuration.Limits) -> [String] {
        var tags: [String] = []
        var seen: Set<String> = []
        for name in headerNames {
            guard let value = response.headers.first(where: { $0.key.lowercased() == name })?.value else { continue }
            for word in value.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }) {
                guard tags.count < limits.tagsPerEntry else { return tags }
                let tag = String(word)
                guard tag.utf8.count <= limits.tagBytes, !tag.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }),
                    seen.insert(tag).inserted
                else { continue }
                tags.append(tag)
            }
        }
        return tags
    }
}
