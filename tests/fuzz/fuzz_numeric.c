/* libFuzzer target: numeric names and values: dtype, rounding and overflow names, layouts and
 * int tuples (CuTe notation), and conversions of the input's bytes as f64 to every type. */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ck/layout.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    ck_dtype t;
    ck_round_mode r;
    ck_overflow_mode o;
    (void)ck_dtype_from_name(text, &t);
    (void)ck_round_mode_from_name(text, &r);
    (void)ck_overflow_mode_from_name(text, &o);
    ck_layout l;
    char buf[4096];
    if (ck_layout_parse(text, &l) == CK_SUCCESS)
        (void)ck_layout_format(&l, buf, sizeof buf);
    ck_int_tuple it;
    if (ck_int_tuple_parse(text, &it) == CK_SUCCESS)
        (void)ck_int_tuple_format(&it, buf, sizeof buf);
    if (size >= 12) {
        double x;
        uint32_t word;
        memcpy(&x, data, 8);
        memcpy(&word, data + 8, 4);
        for (int k = 0; k < CK_DTYPE_COUNT; ++k)
            for (int m = 0; m < 4; ++m) {
                uint64_t code;
                double back;
                if (ck_convert_from_f64((ck_dtype)k, x, (ck_round_mode)m, CK_OVERFLOW_DEFAULT,
                                        word, &code) == CK_SUCCESS)
                    (void)ck_convert_to_f64((ck_dtype)k, code, &back);
            }
    }
    free(text);
    return 0;
}
