/*
 * `ck prof copy|cast|elementwise`: run ck_copy / ck_cast / ck_elementwise on the GPU (else the
 * emulator), check every element against the CPU (copy: bytes; cast: ck_convert_array bit for
 * bit; elementwise: the program in double precision, relative error), time it and report
 * time, GB/s and the ratio to the measured copy bandwidth.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops/elementwise/ew_internal.h"
#include "prof.h"

enum { P_COPY, P_CAST, P_EW };

typedef struct job {
    ck_context *ctx;
    int kind;
    ck_tensor dst, in[CK_EW_MAX_INPUTS];
    int nin;
    ck_convert_options opt;
    ck_ew_program prog;
} job;

static ck_status run_job(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    job *j = user;
    if (j->kind == P_COPY)
        return ck_copy(j->ctx, &j->in[0], &j->dst);
    if (j->kind == P_CAST)
        return ck_cast(j->ctx, &j->in[0], &j->dst, &j->opt);
    return ck_elementwise(j->ctx, &j->prog, j->in, j->nin, &j->dst);
}

static double round_to(ck_dtype t, double v)
{
    uint64_t c = 0;
    double r = NAN;
    if (ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &c) == CK_SUCCESS)
        ck_convert_to_f64(t, c, &r);
    return r;
}

/* The kernel's result `got` (of type t) is right when it lies between the reference rounded to
 * t from below and from above its tolerance: |ref| (2 eps + 4e-6) + 4e-6 (1 + max|x|), the
 * tolerance of tests/test_elementwise_ops.c (a few fp32 ulp of arithmetic and of
 * expf/tanhf/erff, whose GPU and host versions differ). Rounding both ends to t accepts what
 * underflows to zero or saturates in a narrow type, and infinities where the reference is
 * infinite; a NaN reference wants a NaN (in a type without NaN, such as fp6 and fp4, what the
 * conversion makes of NaN). *err: |got - ref rounded| (0 where accepted exactly). */
static int ew_accept(ck_dtype t, double ref, double got, double eps, double mx, double *err)
{
    *err = 0;
    if (isnan(ref)) {
        /* a type without NaN (fp6, fp4) stores what the conversion gives NaN */
        double m = round_to(t, ref);
        if (isnan(got) || got == m)
            return 1;
        *err = INFINITY;
        return 0;
    }
    double tol = isinf(ref) ? 0 : fabs(ref) * (2 * eps + 4e-6) + 4e-6 * (1 + mx);
    double lo = round_to(t, ref - tol), hi = round_to(t, ref + tol), mid = round_to(t, ref);
    if (got == mid || (isnan(got) && isnan(mid)))
        return 1;
    *err = fabs(got - mid);
    if (isnan(*err))
        *err = INFINITY;
    if (isnan(lo) || isnan(hi)) /* a type without infinities: NaN at one end of the range */
        return isnan(got) || (got >= (isnan(lo) ? hi : lo) && got <= (isnan(hi) ? lo : hi));
    return got >= lo && got <= hi;
}

static const char help_copy[] =
    "usage: ck prof copy --shape RxN [--dtype bf16] [--transpose] [--tune] [common options]\n"
    "  dst = src; --transpose reads src through a transposed view (strided path)\n";
static const char help_cast[] =
    "usage: ck prof cast --shape RxN --from f32 --to bf16 [--round rne|rtz|rna|sr]\n"
    "                    [--overflow default|sat|nonsat] [--scale S] [--tune] [common options]\n";
static const char help_ew[] =
    "usage: ck prof elementwise --shape RxN --expr \"relu(x0 * x1 + x2)\" [--dtype bf16]\n"
    "                           [--out-dtype T] [--bias] [--tune] [common options]\n"
    "  inputs x0..x3 have --dtype and the full shape (--bias: the last input is a row vector\n"
    "  broadcast over the rows); the output has --out-dtype (default --dtype)\n"
    "  --tune: first time every vector instance (packs per thread, block, stores) and store\n"
    "  the fastest in the tuning table (as `ck tune elementwise`)\n";

static int prof_main(int kind, int argc, char **argv)
{
    char sub[32]; /* "prof copy": the command to name in messages */
    snprintf(sub, sizeof sub, "prof %s", argv[0]);
    const char *help = kind == P_COPY ? help_copy : kind == P_CAST ? help_cast : help_ew;
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            printf("%s%s", help, prof_common_help);
            return CK_EXIT_OK;
        }
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    long long dims[CK_TENSOR_MAX_RANK];
    int rank = 0, transpose = 0, bias = 0, tune = 0;
    ck_dtype in_t = CK_DTYPE_BF16, out_t = CK_DTYPE_BF16;
    int out_given = 0;
    const char *expr = NULL;
    job j;
    memset(&j, 0, sizeof j);
    j.kind = kind;
    ck_convert_options_init(&j.opt);
    if (kind == P_CAST)
        in_t = CK_DTYPE_F32;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        static const char *const takes_value[] = {"--shape",    "--dtype",     "--from",
                                                  "--to",       "--out-dtype", "--round",
                                                  "--overflow", "--scale",     "--expr"};
        int takes = 0;
        for (size_t t = 0; t < sizeof takes_value / sizeof takes_value[0]; ++t)
            takes |= !strcmp(a, takes_value[t]);
        if (takes && !v)
            return cli_usage_error(sub, "option %s needs a value.", a);
        if (!strcmp(a, "--shape")) {
            rc = prof_shape_option(sub, v, dims, 1, CK_TENSOR_MAX_RANK, &rank);
            if (rc != CK_EXIT_OK)
                return rc;
        } else if (!strcmp(a, "--dtype") || !strcmp(a, "--from")) {
            if (ck_dtype_from_name(v, &in_t) != CK_SUCCESS)
                return cli_usage_error(sub, "%s %s: %s", a, v, ck_last_error());
        } else if (!strcmp(a, "--to") || !strcmp(a, "--out-dtype")) {
            if (ck_dtype_from_name(v, &out_t) != CK_SUCCESS)
                return cli_usage_error(sub, "%s %s: %s", a, v, ck_last_error());
            out_given = 1;
        } else if (!strcmp(a, "--round") && kind == P_CAST) {
            if (ck_round_mode_from_name(v, &j.opt.round) != CK_SUCCESS)
                return cli_usage_error(sub, "--round %s: %s", v, ck_last_error());
        } else if (!strcmp(a, "--overflow") && kind == P_CAST) {
            if (ck_overflow_mode_from_name(v, &j.opt.overflow) != CK_SUCCESS)
                return cli_usage_error(sub, "--overflow %s: %s", v, ck_last_error());
        } else if (!strcmp(a, "--scale") && kind == P_CAST) {
            double s;
            if (prof_parse_double(sub, a, v, &s) != CK_EXIT_OK)
                return CK_EXIT_USAGE;
            if (!(fabs(s) <= 3.4e38) || s == 0)
                return cli_usage_error(sub,
                                       "--scale %s: expected a finite non-zero number that "
                                       "f32 holds.",
                                       v);
            j.opt.scale = (float)s;
        } else if (!strcmp(a, "--expr") && kind == P_EW) {
            expr = v;
        } else if (!strcmp(a, "--transpose") && kind == P_COPY) {
            transpose = 1;
            continue;
        } else if (!strcmp(a, "--bias") && kind == P_EW) {
            bias = 1;
            continue;
        } else if (!strcmp(a, "--tune")) {
            tune = 1;
            continue;
        } else {
            return prof_unknown_argument(sub, a);
        }
        ++i;
    }
    if (rank == 0)
        return cli_usage_error(sub, "--shape is required (e.g. --shape 16384x8192).");
    if (kind == P_COPY)
        out_t = in_t;
    else if (kind == P_EW && !out_given)
        out_t = in_t;
    if (kind == P_CAST && !out_given)
        return cli_usage_error(sub, "--to is required.");
    if (kind == P_EW && !expr)
        return cli_usage_error(sub, "--expr is required (e.g. --expr \"relu(x0 * x1 + x2)\").");
    if (kind == P_EW) {
        if (ck_ew_parse(expr, &j.prog) != CK_SUCCESS)
            return cli_usage_error(sub, "--expr: %s", ck_last_error());
        for (int s = 0; s < j.prog.count; ++s)
            if (j.prog.steps[s].op == CK_EW_INPUT && j.prog.steps[s].input + 1 > j.nin)
                j.nin = j.prog.steps[s].input + 1;
        if (j.nin == 0)
            j.nin = 1;
    } else {
        j.nin = 1;
    }
    if (transpose && rank != 2)
        return cli_usage_error(sub, "--transpose needs a 2-D --shape.");

    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    j.ctx = ctx;
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    int64_t shape[CK_TENSOR_MAX_RANK], n = 1;
    for (int d = 0; d < rank; ++d)
        n *= shape[d] = dims[d];
    size_t in_bytes = 0, out_bytes = 0;
    void *dptr[CK_EW_MAX_INPUTS + 1] = {0};
    unsigned char *hin[CK_EW_MAX_INPUTS] = {0}, *hout = NULL;
    double *vin[CK_EW_MAX_INPUTS] = {0};
    float *f = NULL;
    prof_result r;
    memset(&r, 0, sizeof r);
    rc = CK_EXIT_FAILURE;
    int64_t bias_n = shape[rank - 1];
    if (ck_dtype_storage_size(in_t, (size_t)n, &in_bytes) != CK_SUCCESS ||
        ck_dtype_storage_size(out_t, (size_t)n, &out_bytes) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    f = malloc(sizeof(float) * (size_t)n);
    unsigned seed = c.seed;
    for (int k = 0; k < j.nin; ++k) {
        int is_bias = bias && k == j.nin - 1;
        size_t cnt = is_bias ? (size_t)bias_n : (size_t)n, bytes = 0;
        ck_dtype_storage_size(in_t, cnt, &bytes);
        hin[k] = malloc(bytes + 1);
        vin[k] = c.check && kind == P_EW ? malloc(sizeof(double) * cnt) : NULL;
        if (!f || !hin[k] || (c.check && kind == P_EW && !vin[k])) {
            fprintf(stderr, "ck %s: out of host memory.\n", sub);
            goto done;
        }
        prof_fill_uniform(f, cnt, -3.0f, 3.0f, &seed);
        if (ck_convert_array(in_t, hin[k], CK_DTYPE_F32, f, cnt, NULL) != CK_SUCCESS ||
            (vin[k] && ck_convert_array(CK_DTYPE_F64, vin[k], in_t, hin[k], cnt, NULL)) ||
            ck_malloc(dev, bytes ? bytes : 1, &dptr[k + 1]) != CK_SUCCESS ||
            ck_memcpy_h2d(dev, dptr[k + 1], hin[k], bytes, NULL) != CK_SUCCESS) {
            rc = cli_library_error(sub);
            goto done;
        }
        int64_t bshape[1] = {bias_n};
        int64_t tstr[2] = {1, shape[0]};
        ck_status st = is_bias ? ck_tensor_init(&j.in[k], dptr[k + 1], in_t, 1, bshape, NULL)
                               : ck_tensor_init(&j.in[k], dptr[k + 1], in_t, rank, shape,
                                                transpose ? tstr : NULL);
        if (st != CK_SUCCESS) {
            rc = cli_library_error(sub);
            goto done;
        }
    }
    if (ck_malloc(dev, out_bytes ? out_bytes : 1, &dptr[0]) != CK_SUCCESS ||
        ck_tensor_init(&j.dst, dptr[0], out_t, rank, shape, NULL) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    if (tune) {
        char best[64];
        double best_ms = 0;
        int call = kind == P_COPY ? EW_CALL_COPY : kind == P_CAST ? EW_CALL_CAST : EW_CALL_EXPR;
        if (ck_ew_tune(ctx, call, &j.dst, j.in, j.nin, &j.opt, &j.prog, prof_tune_reps(ctx, &c),
                       prof_tune_progress, &c, best, sizeof best, &best_ms) != CK_SUCCESS) {
            rc = cli_library_error(sub);
            goto done;
        }
        if (!c.json)
            printf("tuned: %s (%.4f ms) stored in the tuning table\n", best, best_ms);
    }
    if (run_job(&j, NULL, 0) != CK_SUCCESS || ck_context_synchronize(ctx) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    r.ok = 1;
    if (c.check) {
        r.checked = 1;
        hout = malloc(out_bytes + 1);
        if (!hout || ck_memcpy_d2h(dev, hout, dptr[0], out_bytes, NULL) != CK_SUCCESS) {
            rc = cli_library_error(sub);
            goto done;
        }
        if (kind == P_COPY || kind == P_CAST) {
            unsigned char *ref = malloc(out_bytes + 1);
            if (transpose) { /* src viewed transposed: element (i, j) at j * rows + i */
                size_t es = out_bytes / (size_t)n;
                for (int64_t i = 0; i < shape[0]; ++i)
                    for (int64_t q = 0; q < shape[1]; ++q)
                        memcpy(ref + (size_t)(i * shape[1] + q) * es,
                               hin[0] + (size_t)(q * shape[0] + i) * es, es);
            } else if (ref) {
                ck_convert_array(out_t, ref, in_t, hin[0], (size_t)n, &j.opt);
            }
            size_t badb = 0;
            for (size_t b = 0; ref && b < out_bytes; ++b)
                badb += ref[b] != hout[b];
            r.ok = ref && badb == 0;
            r.max_error = (double)badb; /* wrong bytes */
            free(ref);
        } else {
            double *g = malloc(sizeof(double) * (size_t)n), eps = ck_dtype_get(out_t)->epsilon;
            if (!g) {
                fprintf(stderr, "ck %s: out of host memory.\n", sub);
                goto done;
            }
            ck_convert_array(CK_DTYPE_F64, g, out_t, hout, (size_t)n, NULL);
            double worst = 0;
            int bad = 0;
            for (int64_t i = 0; i < n; ++i) {
                double x[CK_EW_MAX_INPUTS] = {0}, mx = 0;
                for (int k = 0; k < j.nin; ++k) {
                    x[k] = vin[k][bias && k == j.nin - 1 ? i % bias_n : i];
                    mx = fabs(x[k]) > mx ? fabs(x[k]) : mx;
                }
                double err;
                bad += !ew_accept(out_t, ck_ew_reference(&j.prog, x), g[i], eps, mx, &err);
                if (err > worst)
                    worst = err;
            }
            r.max_error = bad ? INFINITY : worst; /* absolute, against the rounded reference */
            r.ok = bad == 0;
            free(g);
        }
    }
    if (prof_copy_bandwidth(ctx, &r.copy_gbps) != CK_SUCCESS ||
        prof_time(ctx, &c, run_job, &j, &r.ms) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    r.op = argv[0];
    r.device = props.name;
    double in_total = 0;
    for (int k = 0; k < j.nin; ++k) {
        size_t bytes = 0;
        ck_dtype_storage_size(in_t, bias && k == j.nin - 1 ? (size_t)bias_n : (size_t)n, &bytes);
        in_total += (double)bytes;
    }
    r.bytes = in_total + (double)out_bytes;
    {
        char sh[128] = "";
        size_t at = 0;
        for (int d = 0; d < rank; ++d)
            at += (size_t)snprintf(sh + at, sizeof sh - at, "%s%lld", d ? "x" : "", dims[d]);
        if (kind == P_COPY)
            snprintf(r.problem, sizeof r.problem, "%s %s%s", ck_dtype_name(in_t), sh,
                     transpose ? " transposed" : "");
        else if (kind == P_CAST)
            snprintf(r.problem, sizeof r.problem, "%s->%s %s", ck_dtype_name(in_t),
                     ck_dtype_name(out_t), sh);
        else
            snprintf(r.problem, sizeof r.problem, "%s %s->%s %s%s", expr, ck_dtype_name(in_t),
                     ck_dtype_name(out_t), sh, bias ? " bias" : "");
    }
    rc = prof_report(&c, &r);
done:
    for (int k = 0; k <= CK_EW_MAX_INPUTS; ++k)
        ck_free(dev, dptr[k]);
    for (int k = 0; k < CK_EW_MAX_INPUTS; ++k) {
        free(hin[k]);
        free(vin[k]);
    }
    free(hout);
    free(f);
    ck_context_destroy(ctx);
    return rc;
}

int prof_copy(int argc, char **argv)
{
    return prof_main(P_COPY, argc, argv);
}
int prof_cast(int argc, char **argv)
{
    return prof_main(P_CAST, argc, argv);
}
int prof_elementwise(int argc, char **argv)
{
    return prof_main(P_EW, argc, argv);
}
