/* The copy/cast/elementwise kernels compile with NVRTC for sm_90a (no GPU needed): the
 * run-time typed cast kernel and generated kernels of each layout and compute type.
 * Skipped when NVRTC is absent. */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/elementwise/ew_internal.h"
#include "rt/runtime_internal.h"
#include "test.h"

static void compile(const char *what, char *src)
{
    CHECK_MSG(src != NULL, "%s: no source", what);
    if (!src)
        return;
    void *cubin = NULL;
    size_t size = 0;
    ck_status st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", what, ck_last_error());
    CHECK(st != CK_SUCCESS || (size > 4 && memcmp(cubin, "\177ELF", 4) == 0));
    free(cubin);
    free(src);
}

static char *gen(ew_spec *s)
{
    char *src = NULL;
    CHECK_OK(ck_ew_generate(s, &src));
    return src;
}

static void test_kernels(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    printf("NVRTC %d.%d\n", major, minor);
    char *src = NULL;
    CHECK_OK(ck_ew_cast_any_source(&src));
    compile("cast_any", src);

    ew_spec s;
    memset(&s, 0, sizeof s);
    s.mode = EW_MODE_CAST;
    s.nin = 1;
    s.scale = 1.0f;
    s.ovf = 1;
    /* (kept to ~13 compiles of ~1 s each) */
    const ck_dtype pairs[][2] = {{CK_DTYPE_U8, CK_DTYPE_U8},        {CK_DTYPE_F32, CK_DTYPE_BF16},
                                 {CK_DTYPE_BF16, CK_DTYPE_F32},     {CK_DTYPE_F16, CK_DTYPE_F32},
                                 {CK_DTYPE_F32, CK_DTYPE_F16},      {CK_DTYPE_F64, CK_DTYPE_BF16},
                                 {CK_DTYPE_BF16, CK_DTYPE_FP8_E4M3}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i)
        for (int layout = 0; layout < 2; ++layout) {
            if (layout == 1 && i != 1)
                continue;
            if (i == 4 || i == 5)
                continue;
            s.in[0] = pairs[i][0];
            s.out = pairs[i][1];
            s.layout = layout;
            s.rank = 3;
            s.idx32 = i != 2;
            /* vector instances: the default, and other unroll/block/store choices
             * (CK_EW_INSTANCE) */
            s.unroll = i == 2 ? 8 : i == 3 ? 1 : EW_UNROLL;
            s.block = i == 2 ? 512 : i == 3 ? 64 : EW_BLOCK;
            s.cs = i == 2 ? 0 : EW_CS;
            s.round = i == 6 ? CK_ROUND_STOCHASTIC : CK_ROUND_NEAREST_EVEN;
            s.scale = i == 6 ? 0.5f : 1.0f;
            s.seed = 3;
            char what[64];
            snprintf(what, sizeof what, "cast %s->%s layout %d", ck_dtype_name(s.in[0]),
                     ck_dtype_name(s.out), layout);
            compile(what, gen(&s));
        }

    static const char *exprs[] = {"relu(x0 * x1 + x2)", "gelu(x0)", "gelu_erf(x0) - x1",
                                  "silu(x0) * sigmoid(x1) + exp(x2) / max(x3, 1)",
                                  "cast(min(x0, 2), fp8e4m3) * scale(x1, 0.5)"};
    const ck_dtype outs[] = {CK_DTYPE_BF16, CK_DTYPE_F16, CK_DTYPE_F32, CK_DTYPE_F64,
                             CK_DTYPE_FP4_E2M1};
    for (size_t e = 0; e < sizeof exprs / sizeof exprs[0]; ++e) {
        ck_ew_program p;
        CHECK_OK(ck_ew_parse(exprs[e], &p));
        memset(&s, 0, sizeof s);
        s.mode = EW_MODE_EXPR;
        s.prog = &p;
        s.nin = 4;
        s.in[0] = CK_DTYPE_BF16;
        s.in[1] = e == 3 ? CK_DTYPE_F64 : CK_DTYPE_F32;
        s.in[2] = CK_DTYPE_F16;
        s.in[3] = CK_DTYPE_FP8_E5M2;
        s.out = outs[e];
        s.f64 = e == 3;
        for (int layout = 0; layout < 2; ++layout) {
            if ((layout == 0 && e >= 3) || (layout == 1 && (e == 1 || e == 2)))
                continue; /* packed outputs take the strided layout */
            s.layout = layout;
            s.rank = 2;
            s.idx32 = layout || e == 0;
            s.unroll = e == 0 ? 2 : EW_UNROLL;
            s.block = e == 0 ? 128 : EW_BLOCK;
            s.cs = EW_CS;
            /* the first expression's vector kernel with every broadcast mode */
            for (int k = 0; k < 4; ++k)
                s.bmode[k] = layout == 0 && e == 0 ? k : 0;
            char what[128];
            snprintf(what, sizeof what, "%s -> %s layout %d", exprs[e], ck_dtype_name(s.out),
                     layout);
            compile(what, gen(&s));
        }
    }
}

int main(void)
{
    RUN_TEST(test_kernels);
    return CK_TEST_REPORT();
}
