#ifndef ONBOARDING_CCURLSHIM_H
#define ONBOARDING_CCURLSHIM_H

#include <stddef.h>

/// Non-variadic entry points to libcurl's variadic `curl_easy_setopt` and `curl_easy_getinfo`.
///
/// Swift cannot call a C variadic function through a function pointer, and calling one through a
/// non-variadic pointer type is undefined behaviour in C. These take the function as `dlsym`
/// returned it (libcurl is loaded on the first request, not linked) and call it through its real,
/// variadic type. `handle` is a `CURL *`; options and infos are curl.h's numbers; every function
/// returns curl's `CURLcode`.

typedef size_t (*onboarding_curl_write_callback)(char *data, size_t size, size_t count, void *context);

int onboarding_curl_setopt_long(void *setopt, void *handle, int option, long value);
int onboarding_curl_setopt_pointer(void *setopt, void *handle, int option, const void *value);
int onboarding_curl_setopt_write_callback(
    void *setopt, void *handle, int option, onboarding_curl_write_callback callback);
int onboarding_curl_getinfo_long(void *getinfo, void *handle, int info, long *value);
int onboarding_curl_getinfo_string(void *getinfo, void *handle, int info, const char **value);

#endif
