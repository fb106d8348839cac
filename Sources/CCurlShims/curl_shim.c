#include "curl_shim.h"

CURLcode tessera_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode tessera_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode tessera_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode tessera_curl_set_callback(CURL *handle, CURLoption option, tessera_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode tessera_curl_info_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
