/* ck demo: a short end-to-end run of the client API (on the GPU if usable, else the emulator):
 * a bf16 GEMM, then softmax, layernorm and a transpose of random f32 data, each checked against
 * a CPU loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "cli.h"
#include "demo.h"

static const char usage[] =
    "Usage: ck demo\n\n"
    "Run a bf16 GEMM (TFLOP/s), softmax, layernorm and a transpose through ck's client API on "
    "random data (on the GPU\n"
    "if one is usable, else on the CPU emulator; CK_DEVICE=cuda|host chooses), check every\n"
    "element against a CPU loop and print the time of each. Exit status 0 when every check\n"
    "passed.\n";

typedef struct demo_job {
    ck_context *ctx;
    int which; /* 0 softmax, 1 layernorm, 2 transpose */
    ck_tensor x, y, g, b, yt;
} demo_job;

static ck_status run_job(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    demo_job *j = user;
    if (j->which == 0)
        return ck_softmax(j->ctx, &j->x, &j->y, NULL);
    if (j->which == 1)
        return ck_layernorm2d_forward(j->ctx, &j->x, &j->g, &j->b, 1e-5f, &j->y);
    int perm[2] = {1, 0};
    return ck_permute(j->ctx, &j->x, perm, &j->yt);
}

/* Largest |got - want| / (1 + |want|) of the CPU reference of job `which`. */
static double check(int which, long long m, long long n, const float *x, const float *g,
                    const float *b, const float *y)
{
    double worst = 0;
    for (long long i = 0; i < m; ++i) {
        const float *r = x + i * n;
        double mx = -INFINITY, s = 0, mean = 0, var = 0;
        for (long long j = 0; j < n; ++j)
            mx = fmax(mx, r[j]), mean += r[j];
        mean /= (double)n;
        for (long long j = 0; j < n; ++j)
            s += exp(r[j] - mx), var += (r[j] - mean) * (r[j] - mean);
        double rstd = 1.0 / sqrt(var / (double)n + 1e-5);
        for (long long j = 0; j < n; ++j) {
            double want, got;
            if (which == 0)
                want = exp(r[j] - mx) / s, got = y[i * n + j];
            else if (which == 1)
                want = (r[j] - mean) * rstd * g[j] + b[j], got = y[i * n + j];
            else
                want = r[j], got = y[j * m + i];
            double e = fabs(got - want) / (1.0 + fabs(want));
            if (!(e <= worst))
                worst = isnan(e) ? INFINITY : e;
        }
    }
    return worst;
}

int ck_cmd_demo(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CK_EXIT_OK;
        }
        return cli_usage_error("demo", "unknown option '%s'", argv[i]);
    }
    printf("ck demo (ck %s)\n", ck_version());
    ck_context *ctx = NULL;
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS)
        return cli_library_error("demo");
    ck_device_props props;
    ck_device_get_props(ck_context_device(ctx), &props);
    int host = props.backend == CK_BACKEND_HOST;
    long long m = host ? 64 : 8192, n = host ? 1000 : 8192;
    printf("  device: %s (%s); f32 tensors of %lld x %lld\n", props.name, props.target, m, n);
    size_t bytes = sizeof(float) * (size_t)(m * n);
    float *hx = malloc(bytes), *hy = malloc(bytes), *hg = malloc(sizeof(float) * (size_t)n),
          *hb = malloc(sizeof(float) * (size_t)n);
    void *dx = NULL, *dy = NULL, *dg = NULL, *db = NULL;
    ck_device *dev = ck_context_device(ctx);
    int failures = 0;
    ck_status st = CK_ERROR_OUT_OF_MEMORY;
    if (!hx || !hy || !hg || !hb)
        goto done;
    unsigned s = 12345u;
    for (long long i = 0; i < m * n; ++i) {
        s = s * 1664525u + 1013904223u;
        hx[i] = (float)(s >> 8) * (8.0f / 16777216.0f) - 4.0f;
    }
    for (long long j = 0; j < n; ++j)
        hg[j] = 0.5f + (float)(j % 7) * 0.125f, hb[j] = (float)(j % 5) * 0.25f - 0.5f;
    if ((st = ck_malloc(dev, bytes, &dx)) != CK_SUCCESS ||
        (st = ck_malloc(dev, bytes, &dy)) != CK_SUCCESS ||
        (st = ck_malloc(dev, sizeof(float) * (size_t)n, &dg)) != CK_SUCCESS ||
        (st = ck_malloc(dev, sizeof(float) * (size_t)n, &db)) != CK_SUCCESS ||
        (st = ck_memcpy_h2d(dev, dx, hx, bytes, NULL)) != CK_SUCCESS ||
        (st = ck_memcpy_h2d(dev, dg, hg, sizeof(float) * (size_t)n, NULL)) != CK_SUCCESS ||
        (st = ck_memcpy_h2d(dev, db, hb, sizeof(float) * (size_t)n, NULL)) != CK_SUCCESS)
        goto done;
    failures += !demo_gemm(ctx, host);
    demo_job j;
    memset(&j, 0, sizeof j);
    j.ctx = ctx;
    int64_t shape[2] = {m, n}, tshape[2] = {n, m}, vec[1] = {n};
    ck_tensor_init(&j.x, dx, CK_DTYPE_F32, 2, shape, NULL);
    ck_tensor_init(&j.y, dy, CK_DTYPE_F32, 2, shape, NULL);
    ck_tensor_init(&j.yt, dy, CK_DTYPE_F32, 2, tshape, NULL);
    ck_tensor_init(&j.g, dg, CK_DTYPE_F32, 1, vec, NULL);
    ck_tensor_init(&j.b, db, CK_DTYPE_F32, 1, vec, NULL);
    const char *names[3] = {"softmax", "layernorm", "transpose"};
    for (int w = 0; w < 3; ++w) {
        j.which = w;
        ck_timing_options o = {1, host ? 1 : 50, 0, 1}; /* the warm-up builds the kernel */
        ck_timing_result r;
        if ((st = ck_time_runs(dev, NULL, &o, run_job, &j, &r)) != CK_SUCCESS ||
            (st = ck_memcpy_d2h(dev, hy, dy, bytes, NULL)) != CK_SUCCESS)
            goto done;
        double err = check(w, m, n, hx, hg, hb, hy);
        int ok = err <= 1e-5;
        failures += !ok;
        printf("  %-9s %8.3f ms  %7.1f GB/s  max error %.2g  %s\n", names[w], r.median_ms,
               2.0 * (double)bytes / (r.median_ms * 1e6), err, ok ? "ok" : "MISMATCH");
    }
    st = CK_SUCCESS;
done:
    if (st != CK_SUCCESS) {
        fprintf(stderr, "ck demo: %s\n", ck_last_error());
        failures++;
    }
    ck_free(dev, dx);
    ck_free(dev, dy);
    ck_free(dev, dg);
    ck_free(dev, db);
    free(hx);
    free(hy);
    free(hg);
    free(hb);
    ck_context_destroy(ctx);
    printf("%s\n", failures ? "demo FAILED" : "demo passed");
    return failures ? CK_EXIT_FAILURE : CK_EXIT_OK;
}
