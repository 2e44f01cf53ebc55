/* Compiling a kernel unit for the emulator with the system C compiler, and loading the result. */
#ifndef CK_SRC_RT_HOST_COMPILE_H
#define CK_SRC_RT_HOST_COMPILE_H

#include <stddef.h>

#include "ck/status.h"
#include "rt/module_cache.h"

/* Full path of the emulator's compiler: $CK_HOST_CC, else the compiler ck was built with, else
 * cc on PATH. CK_ERROR_BACKEND_UNAVAILABLE when none is found. */
ck_status ck_host_compiler(char *path, size_t size);

/* Add what identifies the compiler and its flags (path, binary size and time, sanitizer) to a
 * cache key. */
ck_status ck_host_compile_key(ck_hasher *h);

/* Compile `unit` (C source including "ck_device.h") into a shared object, returned as bytes
 * (*so malloc'd). The embedded prelude headers are written to a temporary include directory.
 * CK_ERROR_COMPILE: the message holds the compiler's log and names the kept source file. */
ck_status ck_host_compile(const char *unit, const char *const *options, int option_count, void **so,
                          size_t *so_size);

/* Load shared-object bytes (through a memory file), bind the emulator table (ck_emu_bind).
 * *handle is a dlopen handle (dlclose it). */
ck_status ck_host_load(const void *so, size_t so_size, void **handle);

#endif
