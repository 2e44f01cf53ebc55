/* Shared by the libFuzzer targets: the input as a NUL-terminated string. */
#ifndef CK_FUZZ_UTIL_H
#define CK_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* malloc'd copy of data with a terminating NUL (embedded NULs end the text early). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return NULL;
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
