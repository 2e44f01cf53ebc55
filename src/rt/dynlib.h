/* Loading shared libraries at run time (the CUDA driver, NVRTC) without link-time dependencies. */
#ifndef CK_SRC_RT_DYNLIB_H
#define CK_SRC_RT_DYNLIB_H

#include <stddef.h>

#include "ck/status.h"

/* Try, in order: the path in environment variable `env_override` (if set), each of
 * `names` through the system loader, then each of `names` under each of `dirs`.
 * On success *handle is the dlopen handle and `found` (size `found_size`) the name
 * or path that loaded. On failure returns CK_ERROR_BACKEND_UNAVAILABLE with a
 * sentence listing what was tried (no handle to free). */
ck_status ck_dynlib_open(const char *what, const char *env_override, const char *const *names,
                         const char *const *dirs, void **handle, char *found, size_t found_size);

/* Resolve `symbol` into the function pointer at `fn_out` (a pointer to a function
 * pointer). Returns CK_ERROR_BACKEND_UNAVAILABLE naming the library and symbol if absent. */
ck_status ck_dynlib_symbol(void *handle, const char *what, const char *symbol, void *fn_out);

void ck_dynlib_close(void *handle);

#endif
