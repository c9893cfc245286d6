#ifndef MONARCH_CURL_SHIM_H
#define MONARCH_CURL_SHIM_H
#include <curl/curl.h>
/* Non-variadic wrappers for the variadic libcurl calls Swift cannot make. */
#endif
