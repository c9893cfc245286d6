import MonarchWire

extension WireMessage {
    /// A size for the message in bytes, near what its frame would take: its body and headers
    /// and a fixed allowance for the rest. Where a message is not encoded (in memory), or not
    /// measured before it is decoded, it counts towards back-pressure and buffer limits as a
    /// socket's frame would. Cheap: nothing is encoded.
    public var estimatedFrameBytes: Int {
        let overhead = 96
        func headers(_ headers: [String: String]?) -> Int {
            headers?.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 } ?? 0
        }
        switch self {
        case .response(let response):
            return overhead + headers(response.headers) + (response.content?.count ?? 0) * 4 / 3
        case .request(let request):
            return overhead + request.path.utf8.count + headers(request.headers) + (request.body?.count ?? 0) * 4 / 3
        default:
            return overhead
        }
    }
}
