import Foundation

/// One client run's figures, printed as one JSON line by both the Swift and the C client.
struct BenchResult: Codable {
    var impl: String
    var transport: String
    var inflight: Int
    var payload: Int
    var roundTrips: Int
    var seconds: Double
    var perSecond: Double

    /// The JSON line a client prints.
    func line() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

/// A frame payload of about `size` bytes: a request-shaped JSON object padded to size.
func benchPayload(size: Int) -> [UInt8] {
    let head = "{\"type\":\"request\",\"id\":0,\"path\":\"bench/item\",\"pad\":\""
    let tail = "\"}"
    let padding = max(0, size - head.utf8.count - tail.utf8.count)
    return Array((head + String(repeating: "x", count: padding) + tail).utf8)
}
