/* Internal pieces of the window generator shared between src/gen files. */
#ifndef CK_SRC_GEN_WINDOW_GEN_H
#define CK_SRC_GEN_WINDOW_GEN_H

#include "ck/tile_kernel.h"

/* C storage type of dtype ("float", "unsigned short", ...) or NULL when unsupported. */
const char *ck_gen_ctype(ck_dtype dtype, int *bytes);

#endif
