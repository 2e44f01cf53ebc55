/* Parts of `ck demo` kept in their own files. */
#ifndef CK_TOOLS_DEMO_H
#define CK_TOOLS_DEMO_H

#include "ck/ck.h"

/* Run, check and time the demo's GEMM; 1 when it passed. */
int demo_gemm(ck_context *ctx, int host);

#endif
