#ifndef MONARCH_CURL_SHIM_H
#define MONARCH_CURL_SHIM_H
#include <curl/curl.h>

/* Non-variadic wrappers for the variadic libcurl calls Swift cannot make. Each passes its
   argument through unchanged with the type the option documents, and returns libcurl's code. */

/* The signature libcurl's write, header and read callbacks share. */
typedef size_t (*monarch_curl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);
/* CURLOPT_SEEKFUNCTION's signature. */
typedef int (*monarch_curl_seek_callback)(void *userdata, curl_off_t offset, int origin);

/* curl_easy_setopt for an option taking a long. */
CURLcode monarch_curl_easy_setopt_long(CURL *easy, CURLoption option, long value);
/* curl_easy_setopt for an option taking a curl_off_t. */
CURLcode monarch_curl_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value);
/* curl_easy_setopt for an option taking a string (libcurl copies it) or NULL. */
CURLcode monarch_curl_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
/* curl_easy_setopt for an option taking an opaque pointer (callback data, a curl_slist). */
CURLcode monarch_curl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
/* curl_easy_setopt for CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION or CURLOPT_READFUNCTION. */
CURLcode monarch_curl_easy_setopt_data_callback(CURL *easy, CURLoption option, monarch_curl_data_callback callback);
/* curl_easy_setopt for CURLOPT_SEEKFUNCTION. */
CURLcode monarch_curl_easy_setopt_seek_callback(CURL *easy, monarch_curl_seek_callback callback);

/* curl_easy_setopt for CURLOPT_OPENSOCKETFUNCTION. */
CURLcode monarch_curl_easy_setopt_opensocket_callback(CURL *easy, curl_opensocket_callback callback);
/* curl_easy_setopt for CURLOPT_CLOSESOCKETFUNCTION. */
CURLcode monarch_curl_easy_setopt_closesocket_callback(CURL *easy, curl_closesocket_callback callback);

/* curl_easy_getinfo for an item answered with a long. */
CURLcode monarch_curl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
/* curl_easy_getinfo for an item answered with a curl_off_t. */
CURLcode monarch_curl_easy_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value);
/* curl_easy_getinfo for an item answered with a string owned by the handle (may be NULL). */
CURLcode monarch_curl_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value);

/* curl_multi_setopt for an option taking a long. */
CURLMcode monarch_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
/* curl_multi_setopt for an option taking an opaque pointer (CURLMOPT_SOCKETDATA, CURLMOPT_TIMERDATA). */
CURLMcode monarch_curl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
/* curl_multi_setopt for CURLMOPT_SOCKETFUNCTION. */
CURLMcode monarch_curl_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback callback);
/* curl_multi_setopt for CURLMOPT_TIMERFUNCTION. */
CURLMcode monarch_curl_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback callback);

#endif
