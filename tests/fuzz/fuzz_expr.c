/* libFuzzer target: elementwise expressions (ck_ew_parse, ck prof elementwise --expr); a
 * parsed program formats to text that parses to the same program. */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    ck_ew_program p, q;
    if (ck_ew_parse(text, &p) == CK_SUCCESS) {
        char buf[16384];
        if (ck_ew_format(&p, buf, sizeof buf) == CK_SUCCESS &&
            (ck_ew_parse(buf, &q) != CK_SUCCESS || q.count != p.count))
            __builtin_trap();
    }
    free(text);
    return 0;
}
