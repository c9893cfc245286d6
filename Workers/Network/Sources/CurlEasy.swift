import CCurl
import CCurlShim

/// One libcurl easy handle, seen through typed setters and getters instead of the variadic
/// `curl_easy_setopt` / `curl_easy_getinfo`. A value type over the pointer: it owns nothing,
/// ``CurlMulti`` creates, recycles and frees the handles.
struct CurlEasy {
    /// The `CURL *`.
    let pointer: UnsafeMutableRawPointer

    /// Sets an option taking a long (numbers, flags, enumerations).
    func set(_ option: CURLoption, _ value: Int) throws(CurlSetupError) {
        try check(monarch_curl_easy_setopt_long(pointer, option, value), option)
    }

    /// Sets an option taking a `curl_off_t` (sizes).
    func set(_ option: CURLoption, offset value: Int) throws(CurlSetupError) {
        try check(monarch_curl_easy_setopt_off_t(pointer, option, value), option)
    }

    /// Sets an option taking a string; libcurl keeps a copy. The string's own bytes are handed
    /// over where they lie (an implicit conversion would copy them into an array first).
    func set(_ option: CURLoption, _ value: String) throws(CurlSetupError) {
        let code = value.withCString { monarch_curl_easy_setopt_string(pointer, option, $0) }
        try check(code, option)
    }

    /// Sets an option taking a pointer that must stay valid while the handle uses it.
    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlSetupError) {
        try check(monarch_curl_easy_setopt_pointer(pointer, option, value), option)
    }

    /// Sets a write, header or read callback.
    func set(_ option: CURLoption, callback: monarch_curl_data_callback) throws(CurlSetupError) {
        try check(monarch_curl_easy_setopt_data_callback(pointer, option, callback), option)
    }

    /// Sets the seek callback.
    func setSeek(_ callback: monarch_curl_seek_callback) throws(CurlSetupError) {
        try check(monarch_curl_easy_setopt_seek_callback(pointer, callback), CURLOPT_SEEKFUNCTION)
    }

    /// Sets the callbacks libcurl opens and closes the sockets of the handle's connections with,
    /// instead of `socket` and `close`, and the data both are given.
    func setSocketCallbacks(
        open: curl_opensocket_callback, close: curl_closesocket_callback, data: UnsafeMutableRawPointer
    ) throws(CurlSetupError) {
        try check(monarch_curl_easy_setopt_opensocket_callback(pointer, open), CURLOPT_OPENSOCKETFUNCTION)
        try set(CURLOPT_OPENSOCKETDATA, pointer: data)
        try check(monarch_curl_easy_setopt_closesocket_callback(pointer, close), CURLOPT_CLOSESOCKETFUNCTION)
        try set(CURLOPT_CLOSESOCKETDATA, pointer: data)
    }

    /// A long-valued piece of information, or nil when libcurl has none.
    func long(_ info: CURLINFO) -> Int? {
        var value = 0
        return monarch_curl_easy_getinfo_long(pointer, info, &value) == CURLE_OK ? value : nil
    }

    /// A string-valued piece of information, copied, or nil when libcurl has none.
    func string(_ info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>?
        guard monarch_curl_easy_getinfo_string(pointer, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(CurlSetupError) {
        guard code == CURLE_OK else { throw CurlSetupError(code: code, option: option) }
    }
}

/// libcurl refused an option while a transfer was being set up (an option this libcurl was
/// built without, such as HTTP/2, or an invalid value).
struct CurlSetupError: Error, CustomStringConvertible {
    let code: CURLcode
    let option: CURLoption

    var description: String {
        "libcurl refused option \(option.rawValue): \(String(cString: curl_easy_strerror(code)))"
    }
}
