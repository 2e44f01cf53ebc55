/*
 * The layout wrapper example of the reference (§13): a layout with a nested
 * mode, a tensor filled with its 1-D indices, and a slice of it printed row by
 * row. Prints:
 *   dims:2,(2,4) strides:2,(1,8)
 *   1 5 9 13 17 21 25 29
 *   2 6 10 14 18 22 26 30
 */
#include <stdio.h>

#include <ck/layout.h>

#define TRY(call)                                                                                  \
    do {                                                                                           \
        if ((call) != CK_SUCCESS) {                                                                \
            fprintf(stderr, "layout_wrapper: %s\n", ck_last_error());                              \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    /* shape (4, (2, 4)) with strides (2, (1, 8)): make_layout(shape_4x2x4, strides_s2x1x8). */
    ck_int_tuple shape, stride, spec;
    ck_layout layout, sliced;
    TRY(ck_int_tuple_parse("(4,(2,4))", &shape));
    TRY(ck_int_tuple_parse("(2,(1,8))", &stride));
    TRY(ck_layout_make(&shape, &stride, &layout));

    /* tensor(w) = w for every 1-D index w (first mode fastest). */
    int data[32];
    int64_t size, offset;
    TRY(ck_layout_size(&layout, &size));
    for (int64_t w = 0; w < size; ++w) {
        TRY(ck_layout_offset_of_index(&layout, w, &offset));
        data[offset] = (int)w;
    }

    /* tensor(slice(1, 3), make_tuple(slice(), slice())): a layout plus a base offset. */
    int64_t base, rows, cols;
    char text[128];
    TRY(ck_int_tuple_parse("(1:3,(_,_))", &spec));
    TRY(ck_layout_slice(&layout, &spec, &sliced, &base));
    TRY(ck_layout_format(&sliced, text, sizeof text));
    printf("%s\n", text);

    TRY(ck_layout_mode_size(&sliced, 0, &rows));
    TRY(ck_layout_mode_size(&sliced, 1, &cols));
    for (int64_t h = 0; h < rows; ++h) {
        for (int64_t w = 0; w < cols; ++w) {
            int64_t hw[2] = {h, w};
            TRY(ck_layout_offset_of_modes(&sliced, hw, 2, &offset));
            printf(w ? " %d" : "%d", data[base + offset]);
        }
        printf("\n");
    }
    return 0;
}
