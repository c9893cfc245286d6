#include "CurlShim.h"

CURLcode monarch_curl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode monarch_curl_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode monarch_curl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode monarch_curl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode monarch_curl_easy_setopt_data_callback(CURL *easy, CURLoption option, monarch_curl_data_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}

CURLcode monarch_curl_easy_setopt_seek_callback(CURL *easy, monarch_curl_seek_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, callback);
}

CURLcode monarch_curl_easy_setopt_opensocket_callback(CURL *easy, curl_opensocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, callback);
}

CURLcode monarch_curl_easy_setopt_closesocket_callback(CURL *easy, curl_closesocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

CURLcode monarch_curl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode monarch_curl_easy_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode monarch_curl_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLMcode monarch_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode monarch_curl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

CURLMcode monarch_curl_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

CURLMcode monarch_curl_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}
