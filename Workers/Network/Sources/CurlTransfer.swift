import CCurl
import CCurlShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One exchange on an easy handle: sets the handle up from a ``FetchSpec``, collects the
/// headers and the body libcurl hands its callbacks (enforcing the size limit), and turns the
/// end of the exchange into a ``FetchResult``. Owned by ``CurlMulti``; loop thread only.
final class CurlTransfer: @unchecked Sendable {
    enum State {
        /// Created; the multi has not taken it yet (a cancel now ends it before it starts).
        case pending
        /// Added to the multi.
        case running(CurlHandle)
        /// Answered; nothing more happens.
        case finished
    }

    let spec: FetchSpec
    var state = State.pending
    /// Set by a cancel that arrived before the multi took the transfer.
    var cancelledEarly = false
    /// Called exactly once, by ``resume(_:)``.
    private var completion: ((FetchResult) -> Void)?
    /// When the transfer was handed to libcurl.
    private(set) var startedAt = ContinuousClock.now

    private var collector = HeaderCollector()
    private var body = Data()
    /// Why a callback stopped the transfer, when one did.
    private var abortReason: FetchFailure?
    private var uploadOffset = 0
    private let sendsNoBody: Bool

    init(spec: FetchSpec) {
        self.spec = spec
        self.sendsNoBody = spec.method == "HEAD"
    }

    /// Remembers where the answer goes. Call once, before the transfer starts or ends.
    func onEnd(_ completion: @escaping (FetchResult) -> Void) {
        self.completion = completion
    }

    /// Hands `result` to the caller, once; later calls do nothing.
    func resume(_ result: FetchResult) {
        state = .finished
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }

    // MARK: - Set-up

    /// The set-up of a plain GET (no body), which a handle keeps for the next one; nil for any
    /// other exchange.
    private var plainGet: CurlHandle.Setup? {
        guard spec.method == "GET", spec.body == nil else { return nil }
        // Wait for a connection being set up rather than open another: over TLS it may multiplex.
        return CurlHandle.Setup(decodesContent: spec.decodesContent, pipeWait: spec.url.utf8.starts(with: "https:".utf8))
    }

    /// Sets every option of the exchange on `handle`, fresh, reset or holding the options of a
    /// plain GET (see ``CurlHandle``); returns whether it set them all from libcurl's defaults
    /// (the caller then sets the socket callbacks too).
    func configure(_ handle: CurlHandle) throws(CurlSetupError) -> Bool {
        let easy = handle.easy
        let this = Unmanaged.passUnretained(self).toOpaque()
        let setup = plainGet
        handle.errorBuffer.pointee = 0
        if let setup, handle.options == .plainGet(setup) {
            // Only what differs between two plain GETs of this set-up; a failure leaves the
            // handle to be reset.
            handle.options = .other
            try setPerExchangeOptions(easy, this)
            try handle.sendHeaders(spec.headers, noExpect: false)
            handle.options = .plainGet(setup)
            startedAt = .now
            return false
        }
        if handle.options != .defaults { handle.reset() }
        handle.options = .other
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_NOSIGNAL, 1)
        // Environment proxies would take the connection somewhere the allowlist never saw.
        try easy.set(CURLOPT_PROXY, "")
        // No host bypasses the proxy there is none of; libcurl then reads no `no_proxy` from
        // the environment for every exchange.
        try easy.set(CURLOPT_NOPROXY, "")
        try easy.set(CURLOPT_FOLLOWLOCATION, 0)
        try? easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        if spec.decodesContent {
            // Every encoding this libcurl decodes is offered, and decoded before the write callback.
            try easy.set(CURLOPT_ACCEPT_ENCODING, "")
        } else {
            // None is asked for; what comes anyway passes as it is.
            try easy.set(CURLOPT_HTTP_CONTENT_DECODING, 0)
        }
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        if spec.url.utf8.starts(with: "https:".utf8) {
            try easy.set(CURLOPT_PIPEWAIT, 1)
        }
        try easy.set(CURLOPT_USERAGENT, "monarch-network-worker")
        try easy.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(handle.errorBuffer))
        try easy.set(CURLOPT_WRITEFUNCTION, callback: { buffer, size, count, data in
            Unmanaged<CurlTransfer>.fromOpaque(data!).takeUnretainedValue().receiveBody(buffer, size * count)
        })
        try easy.set(CURLOPT_HEADERFUNCTION, callback: { buffer, size, count, data in
            Unmanaged<CurlTransfer>.fromOpaque(data!).takeUnretainedValue().receiveHeader(buffer, size * count)
        })
        try setPerExchangeOptions(easy, this)

        var noExpect = false
        switch spec.method {
        case "GET" where spec.body == nil:
            try easy.set(CURLOPT_HTTPGET, 1)
        case "HEAD":
            try easy.set(CURLOPT_NOBODY, 1)
        default:
            if spec.body != nil || spec.method == "POST" {
                try easy.set(CURLOPT_POST, 1)
                try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: spec.body?.count ?? 0)
                try easy.set(CURLOPT_READDATA, pointer: this)
                try easy.set(CURLOPT_READFUNCTION, callback: { buffer, size, count, data in
                    Unmanaged<CurlTransfer>.fromOpaque(data!).takeUnretainedValue().sendBody(buffer, size * count)
                })
                try easy.set(CURLOPT_SEEKDATA, pointer: this)
                try easy.setSeek { data, offset, origin in
                    Unmanaged<CurlTransfer>.fromOpaque(data!).takeUnretainedValue().seekBody(offset, origin)
                }
                // No wait for a `100 Continue` that many servers never send.
                noExpect = true
            }
            if spec.method != "POST" {
                try easy.set(CURLOPT_CUSTOMREQUEST, spec.method)
            }
        }
        try handle.sendHeaders(spec.headers, noExpect: noExpect)
        handle.options = setup.map { .plainGet($0) } ?? .other
        startedAt = .now
        return true
    }

    /// The options every exchange sets anew: the URL, the timeouts, and this transfer as the
    /// callbacks' data.
    private func setPerExchangeOptions(_ easy: CurlEasy, _ this: UnsafeMutableRawPointer) throws(CurlSetupError) {
        try easy.set(CURLOPT_URL, spec.url)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(clamping: spec.connectTimeout.wholeMillisecondsRoundedUp)))
        try easy.set(CURLOPT_TIMEOUT_MS, max(1, Int(clamping: spec.timeout.wholeMillisecondsRoundedUp)))
        try easy.set(CURLOPT_WRITEDATA, pointer: this)
        try easy.set(CURLOPT_HEADERDATA, pointer: this)
    }

    // MARK: - Callbacks (inside libcurl, on the loop thread)

    private func receiveBody(_ buffer: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard count > 0, let buffer else { return 0 }
        guard body.count + count <= spec.maxResponseBytes else {
            abortReason = FetchFailure(
                kind: .responseTooLarge,
                message: "the response body exceeds the limit of \(spec.maxResponseBytes) bytes")
            return 0
        }
        if body.isEmpty, let announced = collector.contentLength, announced > count {
            body.reserveCapacity(min(announced, spec.maxResponseBytes))
        }
        UnsafeRawPointer(buffer).withMemoryRebound(to: UInt8.self, capacity: count) { body.append($0, count: count) }
        return count
    }

    private func receiveHeader(_ buffer: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard let buffer else { return 0 }
        let line = UnsafeRawBufferPointer(start: buffer, count: count)
        guard collector.take(line), let announced = collector.contentLength, announced > spec.maxResponseBytes else {
            return count
        }
        // A HEAD, a 204 or a 304 announces a length it does not send.
        let status = collector.status ?? 200
        if sendsNoBody || status == 204 || status == 304 || status < 200 { return count }
        abortReason = FetchFailure(
            kind: .responseTooLarge,
            message: "the response announces \(announced) bytes, over the limit of \(spec.maxResponseBytes)")
        return 0
    }

    private func sendBody(_ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
        guard let buffer, let source = spec.body else { return 0 }
        let count = min(capacity, source.count - uploadOffset)
        guard count > 0 else { return 0 }
        source.withUnsafeBytes { bytes in
            let start = bytes.baseAddress!.advanced(by: uploadOffset)
            UnsafeMutableRawPointer(buffer).copyMemory(from: start, byteCount: count)
        }
        uploadOffset += count
        return count
    }

    private func seekBody(_ offset: Int, _ origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0, offset <= (spec.body?.count ?? 0) else {
            return Int32(CURL_SEEKFUNC_CANTSEEK)
        }
        uploadOffset = offset
        return Int32(CURL_SEEKFUNC_OK)
    }

    // MARK: - The end

    /// What the exchange came to, libcurl having ended it with `code`. Reads what it needs
    /// from `handle` before the handle is reused.
    func result(code: CURLcode, handle: CurlHandle) -> FetchResult {
        if let abortReason { return .failed(abortReason) }
        guard code == CURLE_OK else { return .failed(failure(for: code, detail: handle.errorText)) }
        let easy = handle.easy
        let status = easy.long(CURLINFO_RESPONSE_CODE) ?? collector.status ?? 0
        return .answered(FetchedResponse(
            status: status, headers: collector.headers, body: body,
            redirectURL: (300..<400).contains(status) ? easy.string(CURLINFO_REDIRECT_URL) : nil))
    }

    private func failure(for code: CURLcode, detail: String?) -> FetchFailure {
        let detail = detail ?? String(cString: curl_easy_strerror(code))
        let raw = Int32(bitPattern: code.rawValue)
        let kind: FetchFailure.Kind
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            // Ending before the total timeout, it was the connect timeout: a connection failure.
            let elapsed = ContinuousClock.now - startedAt
            kind = elapsed + .milliseconds(20) < spec.timeout ? .connectionFailed : .timeout
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_SSL_CONNECT_ERROR,
            CURLE_PEER_FAILED_VERIFICATION, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE,
            CURLE_HTTP2, CURLE_HTTP2_STREAM:
            kind = .connectionFailed
        default:
            kind = .other
        }
        return FetchFailure(kind: kind, curlCode: raw, message: detail)
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded up (a timeout never shrinks to zero), at
    /// least 0.
    var wholeMillisecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return .max }
        let fraction = attoseconds / 1_000_000_000_000_000 + (attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0)
        return milliseconds.partialValue + fraction
    }
}
