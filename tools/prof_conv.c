/*
 * `ck prof conv`: one convolution (ck/conv.h) on the GPU, else the emulator: random inputs, the
 * direction's output checked element by element against the direct f64 reference (every
 * element, or 4096 sampled ones for large problems), timed; prints time, TFLOP/s
 * (2 * N * out * K * C * filter / G flops, the same for the three directions) and GB/s (each
 * tensor read or written once: X, W, Y, and the bias and residual where given) -- the measure of
 * the memory-bound depthwise route.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck/ck.h"
#include "ck/tune.h"
#include "ck/tuning.h"
#include "cli.h"
#include "conv_cli.h"
#include "prof.h"

static const char help[] =
    "Usage: ck prof conv [options]\n\n"
    "A grouped convolution (layouts NHWGC / GKYXC / NHWGK): implicit GEMM, or the direct\n"
    "depthwise kernel for G = C = K (CK_CONV_ROUTE=gemm keeps the implicit GEMM); prints time,\n"
    "TFLOP/s and GB/s (every tensor moved once) and checks against the direct CPU reference.\n\n"
    "  --tune                          first time every candidate instance (the direct depthwise\n"
    "                                  kernel's strips and grids, the implicit GEMM routes'\n"
    "                                  instances) and store the fastest in the tuning table (as\n"
    "                                  `ck tune conv`); the run then uses it\n";

typedef struct job {
    ck_conv_plan *plan;
    ck_conv_args args;
} job;

static ck_status run_conv(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    job *j = user;
    return ck_conv_plan_execute(j->plan, &j->args);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int es_of(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

static void fill(void *p, ck_dtype t, int64_t n, unsigned *state)
{
    float tmp[256];
    for (int64_t i = 0; i < n; i += 256) {
        int64_t m = n - i < 256 ? n - i : 256;
        prof_fill_uniform(tmp, (size_t)m, -1, 1, state);
        for (int64_t j = 0; j < m; ++j) {
            uint64_t code = 0;
            ck_convert_from_f64(t, tmp[j], CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
            memcpy((char *)p + (i + j) * es_of(t), &code, (size_t)es_of(t));
        }
    }
}

int prof_conv(int argc, char **argv)
{
    const char *sub = "prof conv";
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    int tune = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--tune")) {
            tune = 1;
            sub = "tune conv";
            continue;
        }
        if (cli_is_help(argv[i])) {
            printf("%s%s%s", help, conv_cli_help, prof_common_help);
            return CK_EXIT_OK;
        }
        int r = conv_cli_option(sub, argc, argv, &i, &p);
        if (r < 0)
            return CK_EXIT_USAGE;
        if (r == 0)
            return prof_unknown_argument(sub, argv[i]);
    }
    int64_t nx, nw, ny;
    if (ck_conv_tensor_elements(&p, &nx, &nw, &ny) != CK_SUCCESS)
        return cli_library_error(sub);
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    int result = CK_EXIT_FAILURE;
    job jb;
    memset(&jb, 0, sizeof jb);
    ck_conv_args_init(&jb.args);
    size_t sz[5] = {(size_t)nx * es_of(p.in_dtype), (size_t)nw * es_of(p.wei_dtype),
                    (size_t)ny * es_of(p.out_dtype), (size_t)p.k * 4, (size_t)ny * 4};
    ck_dtype ty[5] = {p.in_dtype, p.wei_dtype, p.out_dtype, CK_DTYPE_F32, CK_DTYPE_F32};
    int64_t cnt[5] = {nx, nw, ny, p.k, ny};
    void *h[5] = {0}, *d[5] = {0}, *got = NULL;
    unsigned state = c.seed;
    for (int i = 0; i < 5; ++i) {
        if ((i == 3 && !p.bias) || (i == 4 && !p.residual))
            continue;
        if (!(h[i] = malloc(sz[i]))) {
            fprintf(stderr, "ck %s: out of host memory for %zu bytes.\n", sub, sz[i]);
            goto done;
        }
        fill(h[i], ty[i], cnt[i], &state);
        if (ck_malloc(dev, sz[i], &d[i]) != CK_SUCCESS ||
            ck_memcpy_h2d(dev, d[i], h[i], sz[i], NULL) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
    }
    jb.args.x = d[0], jb.args.w = d[1], jb.args.y = d[2], jb.args.bias = d[3],
    jb.args.residual = d[4];
    if (tune) {
        char best[CK_TUNING_INSTANCE_MAX];
        double best_ms = 0;
        if (ck_conv_tune(ctx, &p, &jb.args, prof_tune_reps(ctx, &c), prof_tune_progress, &c, best,
                         sizeof best, &best_ms) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        if (!c.json)
            printf("tuned: %s (%.4f ms) stored in the tuning table\n", best, best_ms);
    }
    double t0 = now_ms();
    if (ck_conv_plan_create(ctx, &p, &jb.plan) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    double plan_ms = now_ms() - t0;
    int oi = p.direction == CK_CONV_FWD ? 2 : p.direction == CK_CONV_BWD_DATA ? 0 : 1;
    if (!(got = malloc(sz[oi]))) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        goto done;
    }
    if (run_conv(&jb, NULL, 0) != CK_SUCCESS || ck_context_synchronize(ctx) != CK_SUCCESS ||
        ck_memcpy_d2h(dev, got, d[oi], sz[oi], NULL) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    ck_conv_args ha = jb.args;
    ha.x = h[0], ha.w = h[1], ha.y = h[2], ha.bias = h[3], ha.residual = h[4];
    int ok = 1;
    double max_err = 0;
    int64_t no = cnt[oi], checked = 0;
    int sampled = no > 4096;
    ck_dtype ot = ty[oi];
    double unit = ot == CK_DTYPE_BF16 ? 0x1p-8 : ot == CK_DTYPE_F16 ? 0x1p-11 : 0x1p-24;
    for (int64_t s = 0; c.check && s < (sampled ? 4096 : no); ++s, ++checked) {
        int64_t e = sampled ? (int64_t)((s * 2654435761ull) % (uint64_t)no) : s;
        double mag = 0, ref = ck_conv_reference_value(&p, &ha, e, &mag);
        if (p.activation == CK_GEMM_ACT_RELU)
            ref = ref > 0 ? ref : 0;
        else if (p.activation != CK_GEMM_ACT_NONE)
            continue; /* other activations: checked by the tests */
        uint64_t code = 0;
        memcpy(&code, (char *)got + e * es_of(ot), (size_t)es_of(ot));
        double v = 0;
        ck_convert_to_f64(ot, code, &v);
        double err = fabs(v - ref);
        /* f32 inputs: tf32 factors (rounded on sm80, truncated by the sm90 route) */
        double tol = 2 * unit * fabs(ref) + 1e-6 + mag * 0x1p-18 +
                     (p.in_dtype == CK_DTYPE_F32 ? mag * 0x1p-9 : 0);
        if (!(err <= tol))
            ok = 0;
        if (err > max_err)
            max_err = err;
    }
    double ms = 0;
    if (prof_time(ctx, &c, run_conv, &jb, &ms) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    /* 2 * (N * out * K) * (C / G * filter) = 2 * |Y| * |W| / K */
    double flops = 2.0 * (double)ny * (double)nw / (double)p.k;
    double tflops = flops / (ms * 1e-3) / 1e12;
    double bytes = 0;
    for (int i = 0; i < 5; ++i)
        bytes += h[i] ? (double)sz[i] : 0;
    double gbs = bytes / (ms * 1e-3) / 1e9;
    char what[256], inst[256];
    conv_cli_describe(&p, what, sizeof what);
    ck_conv_plan_describe(jb.plan, inst, sizeof inst);
    if (c.json)
        printf("{\"op\": \"conv\", \"problem\": \"%s\", \"kernel\": \"%s\", \"device\": \"%s\", "
               "\"ms\": %.6f, \"tflops\": %.4f, \"gbs\": %.2f, \"check\": \"%s\", "
               "\"max_error\": %.4g}\n",
               what, inst, props.name, ms, tflops, gbs,
               !c.check ? "skipped"
               : ok     ? "ok"
                        : "failed",
               max_err);
    else
        printf("conv %s on %s\n  %s\n  time %.4f ms, %.3f TFLOP/s, %.1f GB/s\n  plan %.1f ms\n"
               "  check %s (max error %.3g, %s%lld elements)\n",
               what, props.name, inst, ms, tflops, gbs, plan_ms,
               !c.check ? "not run"
               : ok     ? "ok"
                        : "FAILED",
               max_err, sampled ? "sampled " : "", (long long)checked);
    result = ok ? CK_EXIT_OK : CK_EXIT_FAILURE;
done:
    for (int i = 0; i < 5; ++i) {
        free(h[i]);
        if (d[i])
            ck_free(dev, d[i]);
    }
    free(got);
    ck_conv_plan_destroy(jb.plan);
    ck_context_destroy(ctx);
    return result;
}
