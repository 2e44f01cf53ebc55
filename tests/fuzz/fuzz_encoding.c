/* libFuzzer target: tile distribution encodings (ck_dist_encoding_parse, ck dist's text),
 * made into distributions and formatted back; a formatted encoding must parse to the same. */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/distribution.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    ck_dist_encoding e, again;
    if (ck_dist_encoding_parse(text, &e) == CK_SUCCESS) {
        ck_distribution d;
        (void)ck_dist_make(&e, &d);
        char buf[8192];
        if (ck_dist_encoding_format(&e, buf, sizeof buf) == CK_SUCCESS &&
            ck_dist_encoding_parse(buf, &again) != CK_SUCCESS)
            __builtin_trap(); /* what ck prints, ck must read */
    }
    free(text);
    return 0;
}
