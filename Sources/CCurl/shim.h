#ifndef FOB_CCURL_SHIM_H
#define FOB_CCURL_SHIM_H
// libcurl for fob-http. curl_easy_setopt and curl_easy_getinfo are
// variadic, which Swift cannot call: one typed wrapper per kind of value.
#include <curl/curl.h>

typedef size_t (*fob_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode fob_curl_set_text(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fob_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fob_curl_set_size(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fob_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fob_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode fob_curl_set_callback(CURL *handle, CURLoption option, fob_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline long fob_curl_response_code(CURL *handle) {
    long code = 0;
    if (curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}

#endif
