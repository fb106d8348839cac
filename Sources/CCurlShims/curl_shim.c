// Every libcurl function Tessera calls, defined here with libcurl's own signature and forwarded to libcurl.so.4,
// opened on the first call; and typed wrappers of the varargs curl_easy_setopt and curl_easy_getinfo, which call
// libcurl's pointers with one argument of a known type.
#include "curl_shim.h"

#include "library_loader.h"

#define CURL_FUNCTIONS(F, V, P) \
    V(curl_easy_cleanup, (CURL *handle), (handle)) \
    P(curl_easy_getinfo) \
    F(curl_easy_init, CURL *, (void), ()) \
    F(curl_easy_perform, CURLcode, (CURL *handle), (handle)) \
    V(curl_easy_reset, (CURL *handle), (handle)) \
    P(curl_easy_setopt) \
    F(curl_easy_strerror, const char *, (CURLcode code), (code)) \
    F(curl_global_init, CURLcode, (long flags), (flags)) \
    F(curl_slist_append, struct curl_slist *, (struct curl_slist *list, const char *data), (list, data)) \
    V(curl_slist_free_all, (struct curl_slist *list), (list))

TESSERA_LAZY_LIBRARY("libcurl.so.4", CURL_FUNCTIONS, tessera_curl_load)

// The pointers are parenthesized: curl.h may define curl_easy_setopt and curl_easy_getinfo as type-checking macros.

CURLcode tessera_curl_set_long(CURL *handle, CURLoption option, long value) {
    tessera_library_require(&library);
    return (functions.curl_easy_setopt)(handle, option, value);
}

CURLcode tessera_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    tessera_library_require(&library);
    return (functions.curl_easy_setopt)(handle, option, value);
}

CURLcode tessera_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    tessera_library_require(&library);
    return (functions.curl_easy_setopt)(handle, option, value);
}

CURLcode tessera_curl_set_callback(CURL *handle, CURLoption option, tessera_curl_data_callback callback) {
    tessera_library_require(&library);
    return (functions.curl_easy_setopt)(handle, option, callback);
}

CURLcode tessera_curl_info_long(CURL *handle, CURLINFO info, long *value) {
    tessera_library_require(&library);
    return (functions.curl_easy_getinfo)(handle, info, value);
}

CURLcode tessera_curl_info_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    tessera_library_require(&library);
    return (functions.curl_easy_getinfo)(handle, info, value);
}
