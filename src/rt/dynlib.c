/* dlopen-based loading of optional run-time dependencies. */
#include "rt/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static void append(char *buf, size_t size, const char *text)
{
    size_t used = strlen(buf);
    if (used + 1 < size)
        snprintf(buf + used, size - used, "%s", text);
}

ck_status ck_dynlib_open(const char *what, const char *env_override, const char *const *names,
                         const char *const *dirs, void **handle, char *found, size_t found_size)
{
    char tried[1024] = "";
    char path[4096];
    *handle = NULL;
    const char *over = env_override ? getenv(env_override) : NULL;
    if (over && *over) {
        void *h = dlopen(over, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            *handle = h;
            snprintf(found, found_size, "%s", over);
            return CK_SUCCESS;
        }
        return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE, "%s could not be loaded from %s=%s: %s.", what,
                       env_override, over, dlerror());
    }
    for (int i = 0; names[i]; ++i) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            *handle = h;
            snprintf(found, found_size, "%s", names[i]);
            return CK_SUCCESS;
        }
        append(tried, sizeof tried, i ? ", " : "");
        append(tried, sizeof tried, names[i]);
    }
    for (int d = 0; dirs && dirs[d]; ++d) {
        for (int i = 0; names[i]; ++i) {
            snprintf(path, sizeof path, "%s/%s", dirs[d], names[i]);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h) {
                *handle = h;
                snprintf(found, found_size, "%s", path);
                return CK_SUCCESS;
            }
        }
        append(tried, sizeof tried, ", ");
        append(tried, sizeof tried, dirs[d]);
        append(tried, sizeof tried, "/...");
    }
    return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE,
                   "%s is not installed or not on the library path (tried %s); set %s to its "
                   "full path to override.",
                   what, tried, env_override ? env_override : "the library path");
}

ck_status ck_dynlib_symbol(void *handle, const char *what, const char *symbol, void *fn_out)
{
    void *sym = dlsym(handle, symbol);
    if (!sym)
        return ck_fail(CK_ERROR_BACKEND_UNAVAILABLE,
                       "%s does not export the symbol '%s'; it is too old or not the expected "
                       "library.",
                       what, symbol);
    /* ISO C has no conversion between object and function pointers; copy the bits. */
    memcpy(fn_out, &sym, sizeof sym);
    return CK_SUCCESS;
}

void ck_dynlib_close(void *handle)
{
    if (handle)
        dlclose(handle);
}
