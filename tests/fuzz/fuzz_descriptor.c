/* libFuzzer target: descriptor text (ck_descriptor_parse, ck desc's form), printed back and
 * parsed again when it parses; symbols allowed. */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/tile.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    ck_expr_arena *ctx = NULL;
    if (!text || ck_expr_arena_create(&ctx) != CK_SUCCESS) {
        free(text);
        return 0;
    }
    ck_descriptor *d = NULL;
    if (ck_descriptor_parse(text, ctx, &d) == CK_SUCCESS) {
        char *s = NULL;
        if (ck_descriptor_to_string(d, &s) == CK_SUCCESS) {
            ck_descriptor *again = NULL;
            if (ck_descriptor_parse(s, ctx, &again) == CK_SUCCESS)
                ck_descriptor_destroy(again);
            free(s);
        }
        ck_descriptor_destroy(d);
    }
    ck_expr_arena_destroy(ctx);
    free(text);
    return 0;
}
