import CCurl
import CCurlShim

/// An easy handle the multi keeps between exchanges, with what outlives one exchange: its
/// error buffer, its request header list and the options it was last set up with.
///
/// A handle whose last exchange was a plain GET (no body, no other method) keeps its options,
/// and the next plain GET with the same ``Setup`` sets only what differs from one exchange to
/// the next: the URL, the timeouts, the callbacks' data and the header list (itself kept when
/// the same headers are sent again). Any other exchange starts from a reset handle, sets every
/// option, and leaves the handle to be reset once it ends: nothing of it carries over to the
/// next exchange. Owned by ``CurlMulti``; loop thread only.
final class CurlHandle {
    /// The options a plain GET sets that are not the same for every exchange.
    struct Setup: Equatable {
        /// Whether encodings are offered and decoded (``FetchSpec/decodesContent``).
        var decodesContent: Bool
        /// Whether the exchange waits for a connection being set up rather than opening
        /// another (HTTPS, which may multiplex).
        var pipeWait: Bool
    }

    /// What the handle's options hold.
    enum Options: Equatable {
        /// libcurl's defaults: a new handle, or one just reset.
        case defaults
        /// A plain GET's, set up as `Setup` says (and the socket callbacks).
        case plainGet(Setup)
        /// Anything else, or a set-up that failed half-way: reset before the next exchange.
        case other
    }

    /// The handle.
    let easy: CurlEasy
    /// Where libcurl describes a failure (`CURLOPT_ERRORBUFFER`); emptied before each exchange.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// What the options hold now.
    var options = Options.defaults

    /// The headers ``headerList`` was made from, and whether it ends with an empty `Expect:`.
    private var listedHeaders: [(name: String, value: String)] = []
    private var listedNoExpect = false
    /// The list set as `CURLOPT_HTTPHEADER`, nil when none is.
    private var headerList: UnsafeMutablePointer<curl_slist>?

    /// A new handle, or nil when libcurl cannot make one.
    init?() {
        guard let pointer = curl_easy_init() else { return nil }
        easy = CurlEasy(pointer: pointer)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    /// Brings the handle back to libcurl's defaults; the header list is freed.
    func reset() {
        curl_easy_reset(easy.pointer)
        options = .defaults
        freeHeaderList()
    }

    /// Frees the handle and what it holds. Call once, with the handle out of any multi.
    func cleanup() {
        curl_easy_cleanup(easy.pointer)
        freeHeaderList()
        errorBuffer.deallocate()
    }

    /// The description libcurl gave of the last exchange's failure, nil when it gave none.
    var errorText: String? {
        errorBuffer.pointee == 0 ? nil : String(cString: errorBuffer)
    }

    /// Sends `headers` (and an empty `Expect:`, which keeps libcurl from waiting for a
    /// `100 Continue`, when `noExpect`) with the next exchange: the list already set when it
    /// holds the same lines, else a new one (none for no lines).
    func sendHeaders(_ headers: [(name: String, value: String)], noExpect: Bool) throws(CurlSetupError) {
        if noExpect == listedNoExpect, headers.count == listedHeaders.count,
            zip(headers, listedHeaders).allSatisfy({ $0.name == $1.name && $0.value == $1.value })
        {
            return
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers {
            let line = header.value.isEmpty ? header.name + ";" : header.name + ": " + header.value
            guard let longer = line.withCString({ curl_slist_append(list, $0) }) else { break }
            list = longer
        }
        if noExpect, let longer = curl_slist_append(list, "Expect:") { list = longer }
        do {
            try easy.set(CURLOPT_HTTPHEADER, pointer: list.map { UnsafeMutableRawPointer($0) })
        } catch {
            // libcurl still points at the old list: it is freed with the reset that follows.
            if let list { curl_slist_free_all(list) }
            options = .other
            throw error
        }
        // Freed only now that libcurl points at the new one.
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
        listedHeaders = headers
        listedNoExpect = noExpect
    }

    private func freeHeaderList() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        listedHeaders = []
        listedNoExpect = false
    }
}
