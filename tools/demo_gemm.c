/* ck demo's GEMM: D = A B in bf16 (f32 accumulate) through ck_gemm, rows of D checked against
 * a CPU loop in double, TFLOP/s printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ck/ck.h"
#include "ck/gemm.h"
#include "core/numeric_conv.h"
#include "demo.h"

typedef struct gemm_job {
    ck_context *ctx;
    ck_tensor a, b, d;
} gemm_job;

static ck_status run_gemm(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    gemm_job *j = user;
    return ck_gemm(j->ctx, &j->a, &j->b, NULL, &j->d, NULL);
}

int demo_gemm(ck_context *ctx, int host)
{
    long long m = host ? 96 : 8192, n = host ? 80 : 8192, k = host ? 72 : 8192;
    ck_device *dev = ck_context_device(ctx);
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nd = (size_t)(m * n);
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hd = malloc(nd * 2);
    void *da = NULL, *db = NULL, *dd = NULL;
    ck_status st = CK_ERROR_OUT_OF_MEMORY;
    int ok = 0;
    if (!ha || !hb || !hd)
        goto done;
    unsigned s = 777u;
    for (size_t i = 0; i < na + nb; ++i) {
        s = s * 1664525u + 1013904223u;
        float v = (float)(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
        if (i < na)
            ha[i] = ck_nc_f32_to_bf16(v);
        else
            hb[i - na] = ck_nc_f32_to_bf16(v);
    }
    if ((st = ck_malloc(dev, na * 2, &da)) || (st = ck_malloc(dev, nb * 2, &db)) ||
        (st = ck_malloc(dev, nd * 2, &dd)) || (st = ck_memcpy_h2d(dev, da, ha, na * 2, NULL)) ||
        (st = ck_memcpy_h2d(dev, db, hb, nb * 2, NULL)))
        goto done;
    gemm_job j = {ctx, {0}, {0}, {0}};
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sd[2] = {m, n};
    ck_tensor_init(&j.a, da, CK_DTYPE_BF16, 2, sa, NULL);
    ck_tensor_init(&j.b, db, CK_DTYPE_BF16, 2, sb, NULL);
    ck_tensor_init(&j.d, dd, CK_DTYPE_BF16, 2, sd, NULL);
    ck_timing_options o = {host ? 1 : 3, host ? 1 : 20, 0, 1};
    ck_timing_result r;
    if ((st = ck_time_runs(dev, NULL, &o, run_gemm, &j, &r)) ||
        (st = ck_memcpy_d2h(dev, hd, dd, nd * 2, NULL)))
        goto done;
    /* rows checked: every row on the emulator, 8 spread rows on a GPU */
    double worst = 0;
    int rows = host ? (int)m : 8;
    double *brow = malloc(sizeof(double) * (size_t)n);
    if (!brow)
        goto done;
    for (int t = 0; t < rows; ++t) {
        long long i = host ? t : (long long)t * (m / rows) + t;
        for (long long c = 0; c < n; ++c)
            brow[c] = 0;
        for (long long q = 0; q < k; ++q) {
            double x = ck_nc_bf16_to_f32(ha[i * k + q]);
            for (long long c = 0; c < n; ++c)
                brow[c] += x * ck_nc_bf16_to_f32(hb[q * n + c]);
        }
        for (long long c = 0; c < n; ++c) {
            double got = ck_nc_bf16_to_f32(hd[i * n + c]);
            double e = fabs(got - brow[c]) / (fabs(brow[c]) + 0.05 * sqrt((double)k));
            if (!(e <= worst))
                worst = isnan(e) ? INFINITY : e;
        }
    }
    free(brow);
    ok = worst <= 1.0 / 128; /* bf16 output rounding is 1/256 */
    double tflops = 2.0 * (double)m * n * k / (r.median_ms * 1e9);
    printf("  gemm      %8.3f ms  %7.1f TFLOP/s  bf16 %lldx%lldx%lld, %d rows checked, max "
           "error %.2g  %s\n",
           r.median_ms, tflops, m, n, k, rows, worst, ok ? "ok" : "MISMATCH");
    st = CK_SUCCESS;
done:
    if (st != CK_SUCCESS)
        fprintf(stderr, "ck demo: gemm: %s\n", ck_last_error());
    ck_free(dev, da);
    ck_free(dev, db);
    ck_free(dev, dd);
    free(ha);
    free(hb);
    free(hd);
    return st == CK_SUCCESS && ok;
}
