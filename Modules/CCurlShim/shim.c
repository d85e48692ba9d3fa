#include "CCurlShim.h"

typedef int (*variadic_setopt)(void *handle, int option, ...);
typedef int (*variadic_getinfo)(void *handle, int info, ...);

int onboarding_curl_setopt_long(void *setopt, void *handle, int option, long value) {
    return ((variadic_setopt)setopt)(handle, option, value);
}

int onboarding_curl_setopt_pointer(void *setopt, void *handle, int option, const void *value) {
    return ((variadic_setopt)setopt)(handle, option, value);
}

int onboarding_curl_setopt_write_callback(
    void *setopt, void *handle, int option, onboarding_curl_write_callback callback) {
    return ((variadic_setopt)setopt)(handle, option, callback);
}

int onboarding_curl_getinfo_long(void *getinfo, void *handle, int info, long *value) {
    return ((variadic_getinfo)getinfo)(handle, info, value);
}

int onboarding_curl_getinfo_string(void *getinfo, void *handle, int info, const char **value) {
    return ((variadic_getinfo)getinfo)(handle, info, value);
}
