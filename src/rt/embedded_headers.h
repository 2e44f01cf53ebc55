/* The headers of src/device, embedded into libck at build time (cmake/embed_headers.cmake). */
#ifndef CK_SRC_RT_EMBEDDED_HEADERS_H
#define CK_SRC_RT_EMBEDDED_HEADERS_H

#include <stddef.h>

typedef struct ck_embedded_header {
    const char *name; /* path relative to src/device, e.g. "host/ck_host_core.h" */
    const char *data; /* contents, NUL-terminated */
    size_t size;      /* bytes, without the terminating NUL */
} ck_embedded_header;

/* Every header, sorted by name, terminated by an entry with a null name. */
extern const ck_embedded_header ck_embedded_headers[];
extern const int ck_embedded_header_count;

#endif
