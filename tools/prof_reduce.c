/* `ck prof reduce`: run ck_reduce, check it against the CPU reference, time it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops/reduce/reduce_internal.h"
#include "prof.h"

static const char reduce_help[] =
    "usage: ck prof reduce --shape AxBx... [options]\n"
    "Reduction of a packed tensor (rank 1 to 6) over a set of axes.\n"
    "  --shape AxB...            lengths (required)\n"
    "  --dtype T                 input type: f32 f64 f16 bf16 fp8e4m3 fp8e5m2 i8 u8 i32 (default "
    "bf16)\n"
    "  --out-dtype T             output type (default: f32 for integer and fp8 inputs, else the\n"
    "                            input type; argmax/argmin always i32)\n"
    "  --op OP                   sum mean max min sumsq norm2 argmax argmin (default sum)\n"
    "  --axes A[,B...]           reduced axes (default: the last)\n"
    "  --keepdim                 y keeps the reduced axes with length 1\n"
    "  --pre abs|square          element pre-op\n"
    "  --scale S                 multiply each result by S\n"
    "  --sqrt                    square root of each (scaled) result\n"
    "  --fast                    CK_REDUCE_FAST (any combination order)\n"
    "  --tune                    first time every instance of the problem and store the fastest\n"
    "                            in the tuning table (as `ck tune reduce`)\n"
    "Bytes: x read once + y written once.\n";

typedef struct rd_job {
    ck_context *ctx;
    ck_tensor x, y;
    ck_reduce_op op;
    int axes[6], naxes;
    ck_reduce_options o;
} rd_job;

static ck_status run_reduce(void *user, ck_stream *stream, int rotation)
{
    (void)rotation;
    rd_job *j = user;
    ck_context_set_stream(j->ctx, stream);
    return ck_reduce(j->ctx, j->op, &j->x, j->axes, j->naxes, &j->y, &j->o);
}

static size_t esize(ck_dtype t) { return (size_t)ck_dtype_get(t)->storage_bits / 8; }

/* Random inputs: floats uniform in [-4, 4), integers over a small range. */
static void fill(void *buf, size_t count, ck_dtype t, unsigned seed)
{
    enum { CHUNK = 4096 };
    float tmp[CHUNK];
    unsigned state = seed;
    size_t es = esize(t);
    for (size_t b = 0; b < count; b += CHUNK) {
        size_t len = count - b < CHUNK ? count - b : CHUNK;
        prof_fill_uniform(tmp, len, -4.0f, 4.0f, &state);
        for (size_t i = 0; i < len; ++i) {
            float v = tmp[i];
            uint64_t code = 0;
            uint32_t u;
            memcpy(&u, &v, 4);
            if (t == CK_DTYPE_F32)
                code = u;
            else if (t == CK_DTYPE_BF16)
                code = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
            else if (t == CK_DTYPE_I8 || t == CK_DTYPE_I32)
                code = (uint64_t)(int64_t)(int)(v * 25.0f);
            else if (t == CK_DTYPE_U8)
                code = (uint64_t)(int)((v + 4.0f) * 30.0f);
            else
                ck_convert_from_f32(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
            memcpy((char *)buf + (b + i) * es, &code, es);
        }
    }
}

static int parse_axes(const char *s, int *axes, int *n)
{
    *n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || *n >= 6)
            return 0;
        axes[(*n)++] = (int)v;
        s = end;
        if (*s == ',')
            ++s;
        else if (*s)
            return 0;
    }
    return *n > 0;
}

int prof_reduce(int argc, char **argv)
{
    const char *sub = "prof reduce";
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            printf("%s%s", reduce_help, prof_common_help);
            return CK_EXIT_OK;
        }
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    long long dims[8];
    int rank = 0, have_out = 0, keep = 0, have_axes = 0, tune = 0;
    rd_job job;
    memset(&job, 0, sizeof job);
    ck_reduce_options_init(&job.o);
    job.op = CK_REDUCE_SUM;
    ck_dtype ti = CK_DTYPE_BF16, to = CK_DTYPE_BF16;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int needs = !strcmp(a, "--shape") || !strcmp(a, "--dtype") || !strcmp(a, "--out-dtype") ||
                    !strcmp(a, "--op") || !strcmp(a, "--axes") || !strcmp(a, "--pre") ||
                    !strcmp(a, "--scale");
        if (needs && i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        if (!strcmp(a, "--shape")) {
            rc = prof_shape_option(sub, argv[++i], dims, 1, 6, &rank);
            if (rc != CK_EXIT_OK)
                return rc;
        } else if (!strcmp(a, "--dtype")) {
            if (ck_dtype_from_name(argv[++i], &ti) != CK_SUCCESS)
                return cli_usage_error(sub, "--dtype %s: unknown type.", argv[i]);
        } else if (!strcmp(a, "--out-dtype")) {
            if (ck_dtype_from_name(argv[++i], &to) != CK_SUCCESS)
                return cli_usage_error(sub, "--out-dtype %s: unknown type.", argv[i]);
            have_out = 1;
        } else if (!strcmp(a, "--op")) {
            if (ck_reduce_op_from_name(argv[++i], &job.op) != CK_SUCCESS)
                return cli_usage_error(sub,
                                       "--op %s: expected sum, mean, max, min, sumsq, norm2, "
                                       "argmax or argmin.",
                                       argv[i]);
        } else if (!strcmp(a, "--axes")) {
            if (!parse_axes(argv[++i], job.axes, &job.naxes))
                return cli_usage_error(sub, "--axes %s: expected a list such as 1 or 0,2.",
                                       argv[i]);
            have_axes = 1;
        } else if (!strcmp(a, "--pre")) {
            const char *v = argv[++i];
            if (!strcmp(v, "abs"))
                job.o.pre = CK_REDUCE_PRE_ABS;
            else if (!strcmp(v, "square"))
                job.o.pre = CK_REDUCE_PRE_SQUARE;
            else
                return cli_usage_error(sub, "--pre %s: expected abs or square.", v);
        } else if (!strcmp(a, "--scale")) {
            char *end;
            job.o.scale = strtod(argv[++i], &end);
            if (*end || !isfinite(job.o.scale))
                return cli_usage_error(sub, "--scale %s: expected a finite number.", argv[i]);
        } else if (!strcmp(a, "--sqrt")) {
            job.o.post_sqrt = 1;
        } else if (!strcmp(a, "--keepdim")) {
            keep = 1;
        } else if (!strcmp(a, "--fast")) {
            job.o.flags |= CK_REDUCE_FAST;
        } else if (!strcmp(a, "--tune")) {
            tune = 1;
        } else {
            return prof_unknown_argument(sub, a);
        }
    }
    if (rank == 0)
        return cli_usage_error(sub, "--shape is required.");
    if (!have_axes) {
        job.axes[0] = rank - 1;
        job.naxes = 1;
    }
    if (job.op == CK_REDUCE_ARGMAX || job.op == CK_REDUCE_ARGMIN)
        to = CK_DTYPE_I32;
    else if (!have_out)
        to = ti == CK_DTYPE_F32 || ti == CK_DTYPE_F64 || ti == CK_DTYPE_F16 || ti == CK_DTYPE_BF16
                 ? ti
                 : CK_DTYPE_F32;
    int64_t shape[6], yshape[6];
    int mask[6] = {0}, yr = 0;
    for (int k = 0; k < job.naxes; ++k) {
        int a = job.axes[k] < 0 ? job.axes[k] + rank : job.axes[k];
        if (a >= 0 && a < rank)
            mask[a] = 1;
    }
    size_t count = 1, ycount = 1;
    for (int d = 0; d < rank; ++d) {
        shape[d] = dims[d];
        count *= (size_t)dims[d];
        if (!mask[d] || keep) {
            yshape[yr++] = mask[d] ? 1 : dims[d];
            ycount *= mask[d] ? 1 : (size_t)dims[d];
        }
    }
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    job.ctx = ctx;
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    size_t xs = esize(ti), ys = esize(to);
    void *hx = malloc(count * xs + 1), *hy = malloc(ycount * ys + 1), *dx = NULL, *dy = NULL;
    double *val = malloc(sizeof(double) * ycount + 8), *mag = malloc(sizeof(double) * ycount + 8);
    int64_t *idx = malloc(sizeof(int64_t) * ycount + 8);
    int result = CK_EXIT_FAILURE;
    if (!hx || !hy || !val || !mag || !idx) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        goto done;
    }
    fill(hx, count, ti, c.seed);
    if (ck_malloc(dev, count * xs + 1, &dx) != CK_SUCCESS ||
        ck_malloc(dev, ycount * ys + 1, &dy) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, dx, hx, count * xs, NULL) != CK_SUCCESS ||
        ck_tensor_init(&job.x, dx, ti, rank, shape, NULL) != CK_SUCCESS ||
        ck_tensor_init(&job.y, dy, to, yr, yshape, NULL) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    prof_result res;
    memset(&res, 0, sizeof res);
    res.op = "reduce";
    {
        int k = snprintf(res.problem, sizeof res.problem, "%s %s->%s ", ck_reduce_op_name(job.op),
                         ck_dtype_name(ti), ck_dtype_name(to));
        for (int d = 0; d < rank && k < 200; ++d)
            k += snprintf(res.problem + k, sizeof res.problem - (size_t)k, "%s%lld", d ? "x" : "",
                          (long long)dims[d]);
        k += snprintf(res.problem + k, sizeof res.problem - (size_t)k, " axes");
        for (int a = 0; a < job.naxes && k < 240; ++a)
            k += snprintf(res.problem + k, sizeof res.problem - (size_t)k, "%s%d", a ? "," : " ",
                          job.axes[a]);
    }
    res.device = props.name;
    res.ok = 1;
    if (tune) {
        char best[64];
        double best_ms = 0;
        if (ck_reduce_tune(ctx, job.op, &job.x, job.axes, job.naxes, &job.y, &job.o,
                           prof_tune_reps(ctx, &c), prof_tune_progress, &c, best, sizeof best,
                           &best_ms) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        if (!c.json)
            printf("tuned: %s (%.4f ms) stored in the tuning table\n", best, best_ms);
    }
    if (run_reduce(&job, NULL, 0) != CK_SUCCESS || ck_context_synchronize(ctx) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    if (c.check) {
        res.checked = 1;
        ck_tensor hxt = job.x;
        hxt.data = hx;
        if (ck_memcpy_d2h(dev, hy, dy, ycount * ys, NULL) != CK_SUCCESS ||
            ck_reduce_reference(job.op, &hxt, job.axes, job.naxes, &job.o, val, idx, mag) !=
                CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        int arg = job.op == CK_REDUCE_ARGMAX || job.op == CK_REDUCE_ARGMIN;
        int sumlike = job.op != CK_REDUCE_MAX && job.op != CK_REDUCE_MIN && !arg;
        double n = (double)count / (double)(ycount ? ycount : 1);
        double u = ti == CK_DTYPE_F64 || ti == CK_DTYPE_I32 ? 0x1p-53 : 0x1p-24;
        double ulp = ck_dtype_get(to)->epsilon, sub_min = ck_dtype_get(to)->min_subnormal;
        for (size_t i = 0; i < ycount; ++i) {
            uint64_t code = 0;
            memcpy(&code, (char *)hy + i * ys, ys);
            if (arg) {
                if ((int64_t)(int32_t)(uint32_t)code != idx[i])
                    res.ok = 0;
                continue;
            }
            double got = 0, want = val[i];
            ck_convert_to_f64(to, code, &got);
            if (isnan(want) || isinf(want)) {
                if (isnan(want) ? !isnan(got) : got != want)
                    res.ok = 0;
                continue;
            }
            /* fp32 summation bound (n + 8) u sum|terms| plus the output's rounding */
            double err = fabs(got - want);
            double tol = (sumlike ? (n + 8) * u * mag[i] : 0) + (4 * u + ulp) * fabs(want) + sub_min;
            if (err > tol)
                res.ok = 0;
            if (err > res.max_error)
                res.max_error = err;
        }
    }
    if (prof_copy_bandwidth(ctx, &res.copy_gbps) != CK_SUCCESS ||
        prof_time(ctx, &c, run_reduce, &job, &res.ms) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    res.bytes = (double)count * (double)xs + (double)ycount * (double)ys;
    result = prof_report(&c, &res);
done:
    ck_free(dev, dx);
    ck_free(dev, dy);
    free(hx);
    free(hy);
    free(val);
    free(mag);
    free(idx);
    ck_context_destroy(ctx);
    return result;
}
