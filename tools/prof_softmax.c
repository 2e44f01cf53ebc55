/* `ck prof softmax` and `ck prof topk-softmax`: run, check against the CPU reference, time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops/softmax/softmax_internal.h"
#include "ops/softmax/softmax_plan.h"
#include "prof.h"

static const char softmax_help[] =
    "usage: ck prof softmax --shape RxN [options]\n"
    "Softmax (or log-softmax) along the last axis of an R x N tensor (also AxBxN).\n"
    "  --shape RxN               rows and row length (required)\n"
    "  --dtype T                 input type: f32, f16, bf16 (default bf16)\n"
    "  --out-dtype T             output type (default: the input type)\n"
    "  --log                     log-softmax\n"
    "  --scale S                 scale x before the softmax (default 1)\n"
    "  --mask row|full           additive f32 mask of shape [N] or [R, N]\n"
    "  --causal                  causal mask (bottom-right aligned, x viewed as [..., M, N])\n"
    "  --tune                    first time every instance of the problem and store the fastest\n"
    "                            in the tuning table (as `ck tune softmax`)\n"
    "Bytes: x read once + y written once (+ the mask once).\n";

static const char topk_help[] =
    "usage: ck prof topk-softmax --shape TxE --k K [options]\n"
    "MoE gating: softmax over E experts per token, then the top K indices (i32) and weights.\n"
    "  --shape TxE               tokens and experts (required)\n"
    "  --k K                     experts per token (default 2)\n"
    "  --dtype T                 logits type: f32, f16, bf16 (default bf16)\n"
    "  --renorm                  renormalize the K weights to sum 1\n"
    "Bytes: logits read once + indices and f32 weights written once.\n";

static size_t esize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

static void put_code(void *buf, size_t i, ck_dtype t, float v, double *back)
{
    if (t != CK_DTYPE_F16 && !back) { /* fast paths (finite inputs): f32 as is, bf16 RNE */
        uint32_t u;
        memcpy(&u, &v, 4);
        if (t == CK_DTYPE_F32) {
            memcpy((char *)buf + 4 * i, &u, 4);
        } else {
            uint16_t h = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
            memcpy((char *)buf + 2 * i, &h, 2);
        }
        return;
    }
    uint64_t code = 0;
    ck_convert_from_f32(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    if (t == CK_DTYPE_F32) {
        uint32_t c = (uint32_t)code;
        memcpy((char *)buf + 4 * i, &c, 4);
    } else {
        uint16_t c = (uint16_t)code;
        memcpy((char *)buf + 2 * i, &c, 2);
    }
    if (back)
        ck_convert_to_f64(t, code, back);
}

static double get_code(const void *buf, size_t i, ck_dtype t)
{
    uint64_t code = 0;
    if (t == CK_DTYPE_F32) {
        uint32_t c;
        memcpy(&c, (const char *)buf + 4 * i, 4);
        code = c;
    } else {
        uint16_t c;
        memcpy(&c, (const char *)buf + 2 * i, 2);
        code = c;
    }
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

typedef struct sm_job {
    ck_context *ctx;
    ck_tensor x, y, mask;
    ck_softmax_options o;
} sm_job;

static ck_status run_softmax(void *user, ck_stream *stream, int rotation)
{
    (void)rotation;
    sm_job *j = user;
    ck_context_set_stream(j->ctx, stream);
    return ck_softmax(j->ctx, &j->x, &j->y, &j->o);
}

static int parse_dtype(const char *v, ck_dtype *t)
{
    return ck_dtype_from_name(v, t) == CK_SUCCESS &&
           (*t == CK_DTYPE_F32 || *t == CK_DTYPE_F16 || *t == CK_DTYPE_BF16);
}

int prof_softmax(int argc, char **argv)
{
    const char *sub = "prof softmax";
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            printf("%s%s", softmax_help, prof_common_help);
            return CK_EXIT_OK;
        }
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    long long dims[8];
    int rank = 0, have_out = 0, logsm = 0, causal = 0, mask = 0, tune = 0;
    ck_dtype ti = CK_DTYPE_BF16, to = CK_DTYPE_BF16;
    double scale = 1.0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int needs = !strcmp(a, "--shape") || !strcmp(a, "--dtype") || !strcmp(a, "--out-dtype") ||
                    !strcmp(a, "--scale") || !strcmp(a, "--mask");
        if (needs && i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        if (!strcmp(a, "--shape")) {
            rc = prof_shape_option(sub, argv[++i], dims, 1, 8, &rank);
            if (rc != CK_EXIT_OK)
                return rc;
        } else if (!strcmp(a, "--dtype")) {
            if (!parse_dtype(argv[++i], &ti))
                return cli_usage_error(sub, "--dtype %s: expected f32, f16 or bf16.", argv[i]);
        } else if (!strcmp(a, "--out-dtype")) {
            if (!parse_dtype(argv[++i], &to))
                return cli_usage_error(sub, "--out-dtype %s: expected f32, f16 or bf16.", argv[i]);
            have_out = 1;
        } else if (!strcmp(a, "--scale")) {
            char *end;
            scale = strtod(argv[++i], &end);
            if (*end || !isfinite(scale))
                return cli_usage_error(sub, "--scale %s: expected a finite number.", argv[i]);
        } else if (!strcmp(a, "--mask")) {
            const char *v = argv[++i];
            if (!strcmp(v, "row"))
                mask = 1;
            else if (!strcmp(v, "full"))
                mask = 2;
            else
                return cli_usage_error(sub, "--mask %s: expected row or full.", v);
        } else if (!strcmp(a, "--log")) {
            logsm = 1;
        } else if (!strcmp(a, "--tune")) {
            tune = 1;
        } else if (!strcmp(a, "--causal")) {
            causal = 1;
        } else {
            return prof_unknown_argument(sub, a);
        }
    }
    if (rank == 0)
        return cli_usage_error(sub, "--shape RxN is required.");
    if (!have_out)
        to = ti;
    int64_t shape[8], n = dims[rank - 1], rows = 1;
    for (int d = 0; d < rank; ++d) {
        shape[d] = dims[d];
        if (d < rank - 1)
            rows *= dims[d];
    }
    size_t count = (size_t)(rows * n);
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    void *hx = malloc(count * esize(ti) + 1), *hy = malloc(count * esize(to) + 1);
    float *hm = malloc(sizeof(float) * (mask == 2 ? count : mask ? (size_t)n : 0) + 4);
    float *tmp = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    void *dx = NULL, *dy = NULL, *dm = NULL;
    int result = CK_EXIT_FAILURE;
    if (!hx || !hy || !hm || !tmp) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        goto done;
    }
    unsigned seed = c.seed;
    for (int64_t r = 0; r < rows; ++r) {
        prof_fill_uniform(tmp, (size_t)n, -8.0f, 8.0f, &seed);
        for (int64_t j = 0; j < n; ++j)
            put_code(hx, (size_t)(r * n + j), ti, tmp[j], NULL);
    }
    size_t mcount = mask == 2 ? count : mask ? (size_t)n : 0;
    prof_fill_uniform(hm, mcount, -4.0f, 4.0f, &seed);
    sm_job job;
    memset(&job, 0, sizeof job);
    job.ctx = ctx;
    ck_softmax_options_init(&job.o);
    job.o.log = logsm;
    job.o.scale = (float)scale;
    job.o.causal = causal;
    if (ck_malloc(dev, count * esize(ti) + 1, &dx) != CK_SUCCESS ||
        ck_malloc(dev, count * esize(to) + 1, &dy) != CK_SUCCESS ||
        ck_malloc(dev, mcount * 4 + 4, &dm) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, dx, hx, count * esize(ti), NULL) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, dm, hm, mcount * 4, NULL) != CK_SUCCESS ||
        ck_tensor_init(&job.x, dx, ti, rank, shape, NULL) != CK_SUCCESS ||
        ck_tensor_init(&job.y, dy, to, rank, shape, NULL) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    if (mask) {
        int64_t mshape[8];
        int mrank = mask == 2 ? rank : 1;
        for (int d = 0; d < mrank; ++d)
            mshape[d] = mask == 2 ? shape[d] : n;
        if (ck_tensor_init(&job.mask, dm, CK_DTYPE_F32, mrank, mshape, NULL) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        job.o.mask = &job.mask;
    }
    prof_result res;
    memset(&res, 0, sizeof res);
    res.op = logsm ? "log-softmax" : "softmax";
    snprintf(res.problem, sizeof res.problem, "%s->%s %lldx%lld%s%s%s", ck_dtype_name(ti),
             ck_dtype_name(to), (long long)rows, (long long)n, mask ? " mask" : "",
             causal ? " causal" : "", scale != 1.0 ? " scaled" : "");
    res.device = props.name;
    res.ok = 1;
    if (tune) {
        char best[64];
        double best_ms = 0;
        if (ck_smx_tune(ctx, &job.x, &job.y, &job.o, prof_tune_reps(ctx, &c), prof_tune_progress,
                        &c, best, sizeof best, &best_ms) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        if (!c.json)
            printf("tuned: %s (%.4f ms) stored in the tuning table\n", best, best_ms);
    }
    if (run_softmax(&job, NULL, 0) != CK_SUCCESS || ck_context_synchronize(ctx) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    if (c.check) {
        res.checked = 1;
        if (ck_memcpy_d2h(dev, hy, dy, count * esize(to), NULL) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        double *t = malloc(sizeof(double) * (size_t)n), *ref = malloc(sizeof(double) * (size_t)n);
        double hu = to == CK_DTYPE_BF16 ? 1.0 / 256 : to == CK_DTYPE_F16 ? 1.0 / 2048 : 0;
        int64_t m = rank >= 2 ? shape[rank - 2] : 1;
        for (int64_t r = 0; t && ref && r < rows; ++r) {
            for (int64_t j = 0; j < n; ++j) {
                double v = get_code(hx, (size_t)(r * n + j), ti) * (double)(float)scale;
                if (mask)
                    v += hm[mask == 2 ? r * n + j : j];
                if (causal && j > (r % m) + (n - m))
                    v = -INFINITY;
                t[j] = v;
            }
            ck_softmax_ref_row(t, n, logsm, ref);
            for (int64_t j = 0; j < n; ++j) {
                double got = get_code(hy, (size_t)(r * n + j), to), want = ref[j];
                if (isnan(want) || isinf(want)) {
                    if (isnan(want) ? !isnan(got) : got != want)
                        res.ok = 0;
                    continue;
                }
                double err = fabs(got - want), tol = fabs(want) * (hu + 1.0 / 32768) +
                                                     (logsm ? 1.0 / 32768 : 1e-37) +
                                                     (to == CK_DTYPE_F16 ? ldexp(1, -25) : 0);
                if (err > tol)
                    res.ok = 0;
                if (err > res.max_error)
                    res.max_error = err;
            }
        }
        free(t);
        free(ref);
    }
    if (prof_copy_bandwidth(ctx, &res.copy_gbps) != CK_SUCCESS ||
        prof_time(ctx, &c, run_softmax, &job, &res.ms) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    res.bytes = (double)count * (double)(esize(ti) + esize(to)) + (double)mcount * 4;
    result = prof_report(&c, &res);
done:
    ck_free(dev, dx);
    ck_free(dev, dy);
    ck_free(dev, dm);
    free(hx);
    free(hy);
    free(hm);
    free(tmp);
    ck_context_destroy(ctx);
    return result;
}

typedef struct tk_job {
    ck_context *ctx;
    ck_tensor x, idx, w;
    int k, renorm;
} tk_job;

static ck_status run_topk(void *user, ck_stream *stream, int rotation)
{
    (void)rotation;
    tk_job *j = user;
    ck_context_set_stream(j->ctx, stream);
    return ck_topk_softmax(j->ctx, &j->x, j->k, j->renorm, &j->idx, &j->w);
}

int prof_topk_softmax(int argc, char **argv)
{
    const char *sub = "prof topk-softmax";
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            printf("%s%s", topk_help, prof_common_help);
            return CK_EXIT_OK;
        }
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    long long dims[2];
    int have = 0, k = 2, renorm = 0;
    ck_dtype ti = CK_DTYPE_BF16;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int needs = !strcmp(a, "--shape") || !strcmp(a, "--dtype") || !strcmp(a, "--k");
        if (needs && i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        if (!strcmp(a, "--shape")) {
            int rank = 0;
            rc = prof_shape_option(sub, argv[++i], dims, 2, 2, &rank);
            if (rc != CK_EXIT_OK)
                return rc;
            have = 1;
        } else if (!strcmp(a, "--dtype")) {
            if (!parse_dtype(argv[++i], &ti))
                return cli_usage_error(sub, "--dtype %s: expected f32, f16 or bf16.", argv[i]);
        } else if (!strcmp(a, "--k")) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 4096)
                return cli_usage_error(sub, "--k %s: expected 1 to 4096.", argv[i]);
            k = (int)v;
        } else if (!strcmp(a, "--renorm")) {
            renorm = 1;
        } else {
            return prof_unknown_argument(sub, a);
        }
    }
    if (!have)
        return cli_usage_error(sub, "--shape TxE is required.");
    int64_t tokens = dims[0], experts = dims[1];
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    size_t count = (size_t)(tokens * experts), kc = (size_t)(tokens * k);
    void *hx = malloc(count * esize(ti) + 1);
    int32_t *hi = malloc(kc * 4 + 4), *ri = malloc(sizeof(int32_t) * (size_t)k);
    float *hw = malloc(kc * 4 + 4), *tmp = malloc(sizeof(float) * (count + 1));
    double *row = malloc(sizeof(double) * (size_t)(experts > 0 ? experts : 1)),
           *rw = malloc(sizeof(double) * (size_t)k);
    void *dx = NULL, *di = NULL, *dw = NULL;
    int result = CK_EXIT_FAILURE;
    tk_job job;
    memset(&job, 0, sizeof job);
    job.ctx = ctx;
    job.k = k;
    job.renorm = renorm;
    int64_t xs[2] = {tokens, experts}, os[2] = {tokens, k};
    if (!hx || !hi || !ri || !hw || !tmp || !row || !rw) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        goto done;
    }
    unsigned seed = c.seed;
    prof_fill_uniform(tmp, count, -6.0f, 6.0f, &seed);
    for (size_t i = 0; i < count; ++i)
        put_code(hx, i, ti, tmp[i], NULL);
    if (ck_malloc(dev, count * esize(ti) + 1, &dx) != CK_SUCCESS ||
        ck_malloc(dev, kc * 4 + 4, &di) != CK_SUCCESS ||
        ck_malloc(dev, kc * 4 + 4, &dw) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, dx, hx, count * esize(ti), NULL) != CK_SUCCESS ||
        ck_tensor_init(&job.x, dx, ti, 2, xs, NULL) != CK_SUCCESS ||
        ck_tensor_init(&job.idx, di, CK_DTYPE_I32, 2, os, NULL) != CK_SUCCESS ||
        ck_tensor_init(&job.w, dw, CK_DTYPE_F32, 2, os, NULL) != CK_SUCCESS ||
        run_topk(&job, NULL, 0) != CK_SUCCESS || ck_context_synchronize(ctx) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    prof_result res;
    memset(&res, 0, sizeof res);
    res.op = "topk-softmax";
    snprintf(res.problem, sizeof res.problem, "%s %lldx%lld k=%d%s", ck_dtype_name(ti),
             (long long)tokens, (long long)experts, k, renorm ? " renorm" : "");
    res.device = props.name;
    res.ok = 1;
    if (c.check) {
        res.checked = 1;
        if (ck_memcpy_d2h(dev, hi, di, kc * 4, NULL) != CK_SUCCESS ||
            ck_memcpy_d2h(dev, hw, dw, kc * 4, NULL) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        for (int64_t t = 0; t < tokens; ++t) {
            for (int64_t e = 0; e < experts; ++e)
                row[e] = get_code(hx, (size_t)(t * experts + e), ti);
            ck_topk_softmax_ref_row(row, experts, k, renorm, ri, rw);
            for (int i = 0; i < k; ++i) {
                double err = fabs(hw[t * k + i] - rw[i]);
                if (hi[t * k + i] != ri[i] || err > fabs(rw[i]) / 131072 + 1e-37)
                    res.ok = 0;
                if (err > res.max_error)
                    res.max_error = err;
            }
        }
    }
    if (prof_copy_bandwidth(ctx, &res.copy_gbps) != CK_SUCCESS ||
        prof_time(ctx, &c, run_topk, &job, &res.ms) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    res.bytes = (double)count * (double)esize(ti) + (double)kc * 8;
    result = prof_report(&c, &res);
done:
    ck_free(dev, dx);
    ck_free(dev, di);
    ck_free(dev, dw);
    free(hx);
    free(hi);
    free(ri);
    free(hw);
    free(tmp);
    free(row);
    free(rw);
    ck_context_destroy(ctx);
    return result;
}
