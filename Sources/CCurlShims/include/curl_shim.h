// libcurl is opened on the first call rather than linked (curl_shim.c), so only commands given a URL load it and
// the TLS, Kerberos, LDAP and SSH libraries it needs. curl_easy_setopt and curl_easy_getinfo take C varargs, which
// Swift cannot pass; these shims take one typed argument each.
#ifndef TESSERA_CURL_SHIMS_H
#define TESSERA_CURL_SHIMS_H

#include <curl/curl.h>

/// A body or header callback: `size * count` bytes at `data`; returns the bytes taken (fewer aborts the transfer).
typedef size_t (*tessera_curl_data_callback)(char *data, size_t size, size_t count, void *context);

/// Opens libcurl.so.4 unless done already: NULL when it is loaded, else why it could not be (dlerror's message).
/// Call it before the first libcurl function: those abort with the message when the library cannot be loaded.
const char *tessera_curl_load(void);

CURLcode tessera_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode tessera_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode tessera_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode tessera_curl_set_callback(CURL *handle, CURLoption option, tessera_curl_data_callback callback);
CURLcode tessera_curl_info_long(CURL *handle, CURLINFO info, long *value);
CURLcode tessera_curl_info_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

#endif
