/*
 * `ck prof gemm`: one GEMM through a plan (the policy's instance or --instance), checked against
 * the CPU reference (every element, or a sample of rows for big shapes), timed; prints time,
 * TFLOP/s and the share of the device's dense tensor-core peak (a table by device name; omitted
 * for unknown devices). --list prints the ranked candidates instead.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ops/gemm/gemm_internal.h"
#include "prof.h"
#include "prof_gemm_quant.h"

static const char gemm_help[] =
    "Usage: ck prof gemm --m M --n N --k K [OPTIONS]\n"
    "\n"
    "D = epilogue(alpha * A B + beta * C) through a GEMM plan; prints time, TFLOP/s, the share\n"
    "of the device's dense peak for the input type, and the check against the CPU reference.\n"
    "  --dtype T          A (and B) type: bf16 f16 f32 tf32 e4m3 e5m2 i8 (default bf16);\n"
    "                     f32 = 3xTF32 (f32 accuracy), tf32 = f32 inputs on TF32 tensor cores\n"
    "  --b-dtype T        B's type (fp8 mixes)\n"
    "  --d-dtype T        D's type (default: bf16/f16 as the inputs, f32 for f32/tf32, i32 for\n"
    "                     i8, bf16 for fp8)\n"
    "  --layout XY        NN NT TN TT: X for A, Y for B, on row-major storage: N = as stored\n"
    "                     (A row-major: K contiguous; B row-major: N contiguous), T = the\n"
    "                     transposed storage (default NT: A row-major, B column-major, both\n"
    "                     K-major, cuBLAS's column-major \"TN\")\n"
    "  --a-order/--b-order/--d-order row|col\n"
    "  --c                add C (D's type, D's order) with --beta (default 1)\n"
    "  --alpha X --beta X\n"
    "  --bias row|col     f32 bias per row (M values) or per column (N values)\n"
    "  --act A            relu gelu gelu_tanh gelu_erf silu sigmoid\n"
    "  --epilogue EXPR    an elementwise program of x0 (ck_ew_parse syntax)\n"
    "  --batch N          N products in one launch (strided batched GEMM; default 1)\n"
    "  --stride-a/--stride-b/--stride-c/--stride-d/--stride-bias S\n"
    "                     batch strides in elements (default: packed, one matrix (bias\n"
    "                     vector) after another; 0 broadcasts one to every batch)\n"
    "  --broadcast LIST   comma-separated of a, b, c, bias: batch stride 0\n"
    "  --d1 .. --d4 OP:BCAST:T[:ORDER]\n"
    "                     multi-D extras, applied in order after the activation: OP add or\n"
    "                     mul, BCAST row (M values), col (N values) or full (M x N, ORDER row\n"
    "                     or col, default row, packed), T f32 f16 bf16; one per batch (packed)\n"
    "  --split-k N        K split N ways (2..16), partial sums added in a fixed order\n"
    "  --atomic           with --split-k: partial sums added with f32 atomics (faster, not\n"
    "                     bit-identical from run to run)\n"
    "  --stream-k         stream-K: every block an even share of all tiles' K steps\n"
    "                     (default: the policy chooses whole tiles, split-K or stream-K)\n"
    "  --groups FILE|LIST grouped GEMM: MxNxK,MxNxK,... (or a file of them, one or more per\n"
    "                     line) in one launch; the list lives in device memory\n"
    "  --ptr-array        with --m --n --k --batch COUNT: a pointer-array batch of COUNT\n"
    "                     products, their pointers in device arrays (cublasGemmBatchedEx);\n"
    "                     --broadcast a,b: the same A / B pointer for every product\n"
    "  --instance ID      an id from --list\n"
    "  --list             list the ranked candidates and exit\n";

typedef struct g_job {
    ck_context *ctx;
    ck_gemm_plan *plan;
    ck_gemm_args args;
} g_job;

static ck_status run_gemm(void *user, ck_stream *stream, int rotation)
{
    (void)rotation;
    g_job *j = user;
    ck_context_set_stream(j->ctx, stream);
    return ck_gemm_plan_execute(j->plan, &j->args);
}

/* Dense tensor-core peak in TFLOP/s by device name and input type (0: unknown). */
static double dense_peak(const char *name, ck_dtype in, int tf32)
{
    static const struct {
        const char *name;
        double f16, tf32, fp8, i8;
    } t[] = {
        {"H100 SXM", 989, 494, 1979, 1979}, {"H100 80GB HBM3", 989, 494, 1979, 1979},
        {"H200", 989, 494, 1979, 1979},     {"H100 PCIe", 756, 378, 1513, 1513},
        {"A100", 312, 156, 0, 624},         {"L40S", 362, 183, 733, 733},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i)
        if (strstr(name, t[i].name))
            return in == CK_DTYPE_I8                                      ? t[i].i8
                   : (in == CK_DTYPE_FP8_E4M3 || in == CK_DTYPE_FP8_E5M2) ? t[i].fp8
                   : in == CK_DTYPE_F32 ? (tf32 ? t[i].tf32 : t[i].tf32 / 3)
                                        : t[i].f16;
    return 0;
}

/* Bytes of a matrix over all the problem's batches. */
static size_t mbytes(const ck_gemm_problem *p, const ck_gemm_matrix *m, int64_t rows, int64_t cols)
{
    return (size_t)((p->batch - 1) * m->batch_stride +
                    (m->order == CK_GEMM_ROW_MAJOR ? rows : cols) * m->ld) *
           (size_t)ck_gemm_dtype_bytes(m->dtype);
}

/* Uniform random values in [-1, 1) (i8: integers in [-9, 8]) converted exactly to the element
 * type. Past FILL_POOL elements the first FILL_POOL codes repeat (a prime period, so no two
 * rows of a matrix repeat each other): an exact conversion per element took most of a large
 * problem's time (seconds for 8192^3) while the kernel runs for milliseconds. */
#define FILL_POOL 1000003u
static void fill(void *p, ck_dtype t, size_t n, unsigned *state)
{
    size_t es = (size_t)ck_gemm_dtype_bytes(t), first = n < FILL_POOL ? n : FILL_POOL;
    for (size_t i = 0; i < first; ++i) {
        float u;
        prof_fill_uniform(&u, 1, -1, 1, state);
        double v = t == CK_DTYPE_I8   ? floor(u * 8.5)
                   : t == CK_DTYPE_U8 ? floor((u + 1) * 127.99)
                                      : u;
        uint64_t code = 0;
        ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        memcpy((char *)p + i * es, &code, es);
    }
    for (size_t i = first; i < n; i += first) /* the pool again, in whole runs */
        memcpy((char *)p + i * es, p, (n - i < first ? n - i : first) * es);
}

static int parse_order(const char *v, ck_gemm_order *o)
{
    if (!strcmp(v, "row"))
        *o = CK_GEMM_ROW_MAJOR;
    else if (!strcmp(v, "col"))
        *o = CK_GEMM_COL_MAJOR;
    else
        return 0;
    return 1;
}

static int parse_act(const char *v, ck_gemm_activation *a)
{
    static const char *names[] = {"none", "relu", "gelu_tanh", "gelu_erf", "silu", "sigmoid"};
    if (!strcmp(v, "gelu")) {
        *a = CK_GEMM_ACT_GELU_TANH;
        return 1;
    }
    for (int i = 0; i < 6; ++i)
        if (!strcmp(v, names[i])) {
            *a = (ck_gemm_activation)i;
            return 1;
        }
    return 0;
}

static int run_prof(const char *sub, const prof_common *c, ck_gemm_problem *p, ck_gemm_args *ga,
                    const ck_gemm_plan_options *po, int list, int tune);

int prof_gemm(int argc, char **argv)
{
    const char *sub = "prof gemm";
    for (int i = 1; i < argc; ++i) {
        if (cli_is_help(argv[i])) {
            printf("%s%s%s", gemm_help, prof_gemm_quant_help, prof_common_help);
            return CK_EXIT_OK;
        }
        if (!strcmp(argv[i], "--tune"))
            sub = "tune gemm"; /* named in every message, the common options' included */
    }
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--groups") || !strcmp(argv[i], "--ptr-array"))
            return prof_gemm_grouped(sub, argc, argv); /* tools/prof_gemm_grouped.c */
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.b.order = CK_GEMM_COL_MAJOR;
    ck_gemm_args ga;
    ck_gemm_args_init(&ga);
    int instance = -1, list = 0, tune = 0, have_d = 0, has_c = 0, have_beta = 0, tf32 = 0,
        have_b = 0, split_k = 0, atomic = 0, stream_k = 0;
    long long stride[5] = {-1, -1, -1, -1, -1}; /* a, b, c, d, bias; -1: packed */
    static ck_ew_program prog;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--list")) {
            list = 1;
            continue;
        }
        if (!strcmp(a, "--c")) {
            has_c = 1;
            continue;
        }
        if (!strcmp(a, "--tune")) {
            tune = 1;
            sub = "tune gemm";
            continue;
        }
        if (!strcmp(a, "--atomic") || !strcmp(a, "--stream-k")) {
            *(a[2] == 'a' ? &atomic : &stream_k) = 1;
            continue;
        }
        static const char *const valued[] = {
            "--m",        "--n",        "--k",        "--dtype",       "--b-dtype",  "--d-dtype",
            "--layout",   "--a-order",  "--b-order",  "--d-order",     "--alpha",    "--beta",
            "--bias",     "--act",      "--epilogue", "--instance",    "--batch",    "--stride-a",
            "--stride-b", "--stride-c", "--stride-d", "--stride-bias", "--broadcast",
            "--d1",       "--d2",       "--d3",       "--d4",          "--split-k"};
        int known = prof_gemm_quant_takes(a);
        for (size_t o = 0; o < sizeof valued / sizeof valued[0]; ++o)
            known |= !strcmp(a, valued[o]);
        if (!known)
            return prof_unknown_argument(sub, a);
        if (i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        const char *v = argv[++i];
        int qr = prof_gemm_quant_option(sub, a, v, &p); /* scale modes, packed B */
        if (qr < 0)
            return -qr;
        if (qr > 0)
            continue;
        if (!strcmp(a, "--m") || !strcmp(a, "--n") || !strcmp(a, "--k")) {
            long long x;
            if (prof_parse_list(v, &x, 1, 1, PROF_MAX_ELEMENTS) != 1)
                return cli_usage_error(sub, "%s %s: expected a whole number from 1 to 2^40.", a, v);
            *(a[2] == 'm' ? &p.m : a[2] == 'n' ? &p.n : &p.k) = x;
        } else if (!strcmp(a, "--dtype") || !strcmp(a, "--b-dtype") || !strcmp(a, "--d-dtype")) {
            ck_dtype t;
            int is_tf32 = !strcmp(v, "tf32");
            if (!is_tf32 && ck_dtype_from_name(v, &t) != CK_SUCCESS)
                return cli_usage_error(sub, "%s %s: unknown type.", a, v);
            if (is_tf32)
                t = CK_DTYPE_F32;
            if (a[2] == 'd' && a[3] == 't') {
                p.a.dtype = t;
                if (!have_b)
                    p.b.dtype = t;
                tf32 = is_tf32;
            } else if (a[2] == 'b') {
                p.b.dtype = t;
                have_b = 1;
            } else {
                p.d.dtype = t;
                have_d = 1;
            }
        } else if (!strcmp(a, "--layout")) {
            if (strlen(v) != 2 || !strchr("NT", v[0]) || !strchr("NT", v[1]))
                return cli_usage_error(sub, "--layout %s: expected NN, NT, TN or TT.", v);
            /* BLAS convention on row-major storage: N = as stored, T = transposed storage */
            p.a.order = v[0] == 'N' ? CK_GEMM_ROW_MAJOR : CK_GEMM_COL_MAJOR;
            p.b.order = v[1] == 'N' ? CK_GEMM_ROW_MAJOR : CK_GEMM_COL_MAJOR;
        } else if (!strcmp(a, "--a-order") || !strcmp(a, "--b-order") || !strcmp(a, "--d-order")) {
            ck_gemm_matrix *m = a[2] == 'a' ? &p.a : a[2] == 'b' ? &p.b : &p.d;
            if (!parse_order(v, &m->order))
                return cli_usage_error(sub, "%s %s: expected row or col.", a, v);
        } else if (!strcmp(a, "--alpha") || !strcmp(a, "--beta")) {
            double x;
            int r = prof_parse_double(sub, a, v, &x);
            if (r != CK_EXIT_OK)
                return r;
            if (!isfinite((float)x))
                return cli_usage_error(sub, "%s %s: beyond the f32 range (at most %g).", a, v,
                                       (double)FLT_MAX);
            if (a[2] == 'a') {
                ga.alpha = (float)x;
            } else {
                ga.beta = (float)x;
                have_beta = 1;
            }
        } else if (!strcmp(a, "--bias")) {
            if (strcmp(v, "row") && strcmp(v, "col"))
                return cli_usage_error(sub, "--bias %s: expected row or col.", v);
            p.bias = v[0] == 'r' ? CK_GEMM_BIAS_ROW : CK_GEMM_BIAS_COL;
        } else if (!strcmp(a, "--act")) {
            if (!parse_act(v, &p.activation))
                return cli_usage_error(sub,
                                       "--act %s: expected relu, gelu, gelu_tanh, gelu_erf, "
                                       "silu or sigmoid.",
                                       v);
        } else if (!strcmp(a, "--batch")) {
            long long x;
            if (prof_parse_list(v, &x, 1, 1, INT32_MAX) != 1)
                return cli_usage_error(sub, "--batch %s: expected a whole number from 1 to 2^31-1.",
                                       v);
            p.batch = x;
        } else if (!strncmp(a, "--stride-", 9)) {
            static const char *const names[] = {"a", "b", "c", "d", "bias"};
            long long x;
            if (prof_parse_list(v, &x, 1, 0, INT64_C(1) << 48) != 1)
                return cli_usage_error(sub,
                                       "%s %s: expected a whole number of elements from 0 "
                                       "to 2^48.",
                                       a, v);
            for (int w = 0; w < 5; ++w)
                if (!strcmp(a + 9, names[w]))
                    stride[w] = x;
        } else if (!strcmp(a, "--broadcast")) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int w = !strcmp(t, "a")      ? 0
                        : !strcmp(t, "b")    ? 1
                        : !strcmp(t, "c")    ? 2
                        : !strcmp(t, "bias") ? 4
                                             : -1;
                if (w < 0)
                    return cli_usage_error(sub,
                                           "--broadcast %s: expected a comma-separated list "
                                           "of a, b, c, bias.",
                                           v);
                stride[w] = 0;
            }
        } else if (!strncmp(a, "--d", 3) && a[3] >= '1' && a[3] <= '4' && !a[4]) {
            int x = a[3] - '1';
            char buf[64], *f[5] = {0};
            int nf = 0;
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ":"); t && nf < 5; t = strtok(NULL, ":"))
                f[nf++] = t;
            ck_gemm_extra *e = &p.extras[x];
            memset(e, 0, sizeof *e);
            ck_dtype t = CK_DTYPE_COUNT;
            e->op = nf < 3            ? CK_GEMM_EXTRA_NONE
                    : !strcmp(f[0], "add") ? CK_GEMM_EXTRA_ADD
                    : !strcmp(f[0], "mul") ? CK_GEMM_EXTRA_MUL
                                           : CK_GEMM_EXTRA_NONE;
            e->broadcast = nf < 3                  ? (ck_gemm_extra_broadcast)0
                           : !strcmp(f[1], "row")  ? CK_GEMM_EXTRA_ROW
                           : !strcmp(f[1], "col")  ? CK_GEMM_EXTRA_COL
                           : !strcmp(f[1], "full") ? CK_GEMM_EXTRA_FULL
                                                   : (ck_gemm_extra_broadcast)0;
            int order_ok = nf < 4 || (e->broadcast == CK_GEMM_EXTRA_FULL &&
                                      parse_order(f[3], &e->order));
            if (nf < 3 || nf > 4 || !e->op || !e->broadcast || !order_ok ||
                ck_dtype_from_name(f[2], &t) != CK_SUCCESS)
                return cli_usage_error(sub,
                                       "%s %s: expected OP:BCAST:TYPE[:ORDER] with OP add or mul, "
                                       "BCAST row, col or full, TYPE f32, f16 or bf16, ORDER row "
                                       "or col (full only).",
                                       a, v);
            e->dtype = t;
            if (x + 1 > p.extra_count)
                p.extra_count = x + 1;
        } else if (!strcmp(a, "--split-k")) {
            long long x;
            if (prof_parse_list(v, &x, 1, 2, 16) != 1)
                return cli_usage_error(sub, "--split-k %s: expected a whole number from 2 to 16.",
                                       v);
            split_k = (int)x;
        } else if (!strcmp(a, "--epilogue")) {
            if (ck_ew_parse(v, &prog) != CK_SUCCESS)
                return cli_usage_error(sub, "--epilogue: %s", ck_last_error());
            p.epilogue = &prog;
        } else {
            long long id;
            if (prof_parse_list(v, &id, 1, 0, INT32_MAX) != 1)
                return cli_usage_error(sub, "--instance %s: expected an id from --list.", v);
            instance = (int)id;
        }
    }
    if (p.m < 1 || p.n < 1 || p.k < 1)
        return cli_usage_error(sub, "--m, --n and --k are required.");
    for (int x = 0; x < p.extra_count; ++x) {
        ck_gemm_extra *e = &p.extras[x];
        if (!e->op)
            return cli_usage_error(sub, "--d%d is missing: the extras --d1 .. --d%d apply in "
                                        "order, none may be left out.",
                                   x + 1, p.extra_count);
        e->batch_stride = e->broadcast == CK_GEMM_EXTRA_ROW   ? p.m
                          : e->broadcast == CK_GEMM_EXTRA_COL ? p.n
                                                              : p.m * p.n;
    }
    if (p.a.dtype == CK_DTYPE_F32)
        p.compute = tf32 ? CK_GEMM_COMPUTE_TF32 : CK_GEMM_COMPUTE_F32;
    if (!have_d)
        p.d.dtype = p.a.dtype == CK_DTYPE_I8                                    ? CK_DTYPE_I32
                    : p.a.dtype == CK_DTYPE_F32                                 ? CK_DTYPE_F32
                    : (p.a.dtype == CK_DTYPE_F16 || p.a.dtype == CK_DTYPE_BF16) ? p.a.dtype
                                                                                : CK_DTYPE_BF16;
    if ((rc = prof_gemm_quant_finish(sub, &p, have_d)) != CK_EXIT_OK)
        return rc;
    if (has_c) {
        p.c.dtype = p.d.dtype;
        p.c.order = p.d.order;
        if (!have_beta)
            ga.beta = 1;
    }
    /* batch strides: packed unless given (the matrices are packed: ld 0) */
    p.a.batch_stride = stride[0] >= 0 ? stride[0] : p.m * p.k;
    p.b.batch_stride = stride[1] >= 0 ? stride[1] : p.k * p.n;
    p.c.batch_stride = stride[2] >= 0 ? stride[2] : p.m * p.n;
    p.d.batch_stride = stride[3] >= 0 ? stride[3] : p.m * p.n;
    p.bias_batch_stride = stride[4] >= 0 ? stride[4] : p.bias == CK_GEMM_BIAS_ROW ? p.m : p.n;
    if ((atomic && !split_k) || (stream_k && split_k))
        return cli_usage_error(sub, "--atomic goes with --split-k N; --stream-k without it.");
    ck_gemm_plan_options po;
    ck_gemm_plan_options_init(&po);
    po.instance = instance;
    po.split_k = split_k;
    po.decomp = stream_k  ? CK_GEMM_DECOMP_STREAM_K
                : atomic  ? CK_GEMM_DECOMP_SPLIT_K_ATOMIC
                : split_k ? CK_GEMM_DECOMP_SPLIT_K
                          : CK_GEMM_DECOMP_AUTO;
    return run_prof(sub, &c, &p, &ga, &po, list, tune);
}

/* ck tune gemm's progress line: one per timed candidate. */
static void tune_progress(void *user, int index, int count, const ck_gemm_candidate *cand,
                          double ms)
{
    const ck_gemm_problem *q = user;
    if (ms < 0)
        printf("  [%d/%d] %-28s could not run: %s\n", index + 1, count, cand->name,
               ck_last_error());
    else
        printf("  [%d/%d] %-28s %9.4f ms %9.2f TFLOP/s\n", index + 1, count, cand->name, ms,
               2.0 * (double)q->batch * q->m * q->n * q->k / (ms * 1e9));
    fflush(stdout);
}

static int run_prof(const char *sub, const prof_common *c, ck_gemm_problem *p, ck_gemm_args *ga,
                    const ck_gemm_plan_options *po, int list, int tune)
{
    ck_gemm_plan_options opt = *po;
    ck_context *ctx = NULL;
    if (ck_context_create(c->backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    ck_device_props props;
    ck_device_get_props(ck_context_device(ctx), &props);
    int result = CK_EXIT_FAILURE;
    ck_gemm_prob prob;
    ck_gemm_plan *plan = NULL;
    enum { NBUF = 5 + CK_GEMM_MAX_EXTRAS }; /* a, b, c, d, bias, extras */
    void *h[NBUF] = {0}, *d[NBUF] = {0}, *out = NULL;
    prof_gemm_quant_bufs qb = {{0}, {0}}; /* scale tensors and zero points */
    if (ck_gemm_prob_make(p, &prob) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    if (list) {
        ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
        int n = 0;
        if (ck_gemm_candidates(ctx, p, cand, CK_GEMM_MAX_CANDIDATES, &n) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        printf("%-10s %-28s %8s %8s\n", "id", "instance", "waves", "score");
        for (int i = 0; i < n; ++i) {
            if (cand[i].tuned)
                printf("%-10d %-28s %8.2f %8s\n", cand[i].id, cand[i].name, cand[i].est_waves,
                       "tuned");
            else
                printf("%-10d %-28s %8.2f %8.3f\n", cand[i].id, cand[i].name, cand[i].est_waves,
                       cand[i].score);
        }
        result = CK_EXIT_OK;
        goto done;
    }
    const ck_gemm_problem *q = &prob.p;
    size_t sz[NBUF] = {mbytes(q, &q->a, q->m, q->k), mbytes(q, &q->b, q->k, q->n),
                       prob.has_c ? mbytes(q, &q->c, q->m, q->n) : 0,
                       mbytes(q, &q->d, q->m, q->n),
                       q->bias ? (size_t)((q->batch - 1) * q->bias_batch_stride +
                                          (q->bias == CK_GEMM_BIAS_ROW ? q->m : q->n)) *
                                     4
                               : 0};
    ck_dtype ty[NBUF] = {q->a.dtype, q->b.dtype, q->c.dtype, q->d.dtype, CK_DTYPE_F32};
    for (int x = 0; x < q->extra_count; ++x) { /* the extras after the bias */
        const ck_gemm_extra *e = &q->extras[x];
        ck_gemm_matrix mt = {e->dtype, e->order, e->ld, e->batch_stride};
        ty[5 + x] = e->dtype;
        sz[5 + x] = e->broadcast == CK_GEMM_EXTRA_FULL
                        ? mbytes(q, &mt, q->m, q->n)
                        : (size_t)((q->batch - 1) * e->batch_stride +
                                   (e->broadcast == CK_GEMM_EXTRA_ROW ? q->m : q->n)) *
                              (size_t)ck_gemm_dtype_bytes(e->dtype);
    }
    ck_device *dev = ck_context_device(ctx);
    unsigned state = c->seed;
    for (int i = 0; i < NBUF; ++i) {
        if (!sz[i])
            continue;
        h[i] = malloc(sz[i]);
        if (!h[i]) {
            fprintf(stderr, "ck %s: out of host memory for %zu bytes.\n", sub, sz[i]);
            goto done;
        }
        if (ck_malloc(dev, sz[i], &d[i]) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        fill(h[i], ty[i], sz[i] / (size_t)ck_gemm_dtype_bytes(ty[i]), &state);
        if (ck_memcpy_h2d(dev, d[i], h[i], sz[i], NULL) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
    }
    ck_gemm_args host_scales;
    if (prof_gemm_quant_buffers(dev, q, &state, &qb, ga, &host_scales) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    if (tune) {
        ck_gemm_args ta = *ga;
        ta.a = d[0], ta.b = d[1], ta.c = d[2], ta.d = d[3], ta.bias = d[4];
        for (int x = 0; x < q->extra_count; ++x)
            ta.extra[x] = d[5 + x];
        ck_gemm_candidate best;
        double best_ms = 0;
        printf("tuning gemm %lldx%lldx%lld%s on %s\n", (long long)q->m, (long long)q->n,
               (long long)q->k, q->batch > 1 ? " (batched)" : "", props.name);
        int treps = prof_tune_reps(ctx, c);
        if (ck_gemm_tune(ctx, p, &ta, treps, tune_progress, (void *)q, &best, &best_ms) !=
            CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        printf("  fastest: %s (id %d), %.4f ms; stored in the tuning table\n", best.name, best.id,
               best_ms);
        opt.instance = -1; /* the plan below now comes from the table */
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (ck_gemm_plan_create_opt(ctx, p, &opt, &plan) == CK_SUCCESS)
        prob.tf32_truncate = plan->prob.tf32_truncate; /* the reference reads f32 as it does */
    else {
        result = cli_library_error(sub);
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* the plan's creation: support check, policy, and the kernel's generation and compilation
     * (or its load from the module cache on disk) */
    double plan_ms =
        (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    g_job job = {ctx, plan, *ga};
    job.args.a = d[0];
    job.args.b = d[1];
    job.args.c = d[2];
    job.args.d = d[3];
    job.args.bias = d[4];
    for (int x = 0; x < q->extra_count; ++x)
        job.args.extra[x] = d[5 + x];
    if (!(out = malloc(sz[3]))) {
        fprintf(stderr, "ck %s: out of host memory for %zu bytes.\n", sub, sz[3]);
        goto done;
    }
    if (run_gemm(&job, ck_context_stream(ctx), 0) != CK_SUCCESS ||
        ck_context_synchronize(ctx) != CK_SUCCESS ||
        ck_memcpy_d2h(dev, out, d[3], sz[3], NULL) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    /* the check: every element of every batch, or 64 sampled rows of the first and last
     * batches when M N K exceeds 2^27 */
    int ok = 1;
    double max_err = 0;
    long long rows = 0;
    ck_gemm_args ha = job.args;
    ha.a = h[0];
    ha.b = h[1];
    ha.c = h[2];
    ha.d = out;
    ha.bias = h[4];
    ha.a_scales = qb.h[0], ha.b_scales = qb.h[1], ha.b_zeros = qb.h[2];
    for (int x = 0; x < q->extra_count; ++x)
        ha.extra[x] = h[5 + x];
    int sampled = (double)q->m * q->n * q->k > 134217728.0 && q->m > 64;
    for (long long bt = 0; c->check && bt < q->batch; ++bt) {
        if (sampled && bt > 0 && bt < q->batch - 1)
            continue;
        ck_gemm_args hb;
        ck_gemm_args_batch(&prob, &ha, bt, &hb);
        for (long long r = 0; r < (sampled ? 64 : q->m); ++r, ++rows) {
            long long i = sampled ? (r * 7919) % q->m : r;
            for (long long j = 0; j < q->n; ++j) {
                double mag = 0, ref = ck_gemm_reference_value(&prob, &hb, i, j, &mag), refq = 0;
                uint64_t code = 0;
                ck_convert_from_f64(q->d.dtype, ref, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0,
                                    &code);
                long long off = q->d.order == CK_GEMM_ROW_MAJOR ? i * q->d.ld + j : i + j * q->d.ld;
                uint64_t got_code = 0;
                int es = ck_gemm_dtype_bytes(q->d.dtype);
                memcpy(&got_code, (char *)hb.d + off * es, (size_t)es);
                double got = 0;
                if (q->d.dtype == CK_DTYPE_I32) {
                    got = (double)(int32_t)(uint32_t)got_code;
                    refq = (double)(int32_t)(uint32_t)code;
                } else {
                    ck_convert_to_f64(q->d.dtype, got_code, &got);
                    ck_convert_to_f64(q->d.dtype, code, &refq);
                }
                double err = fabs(got - refq), tol = ck_gemm_tolerance(&prob, mag, ref);
                if (!(err <= tol))
                    ok = 0;
                if (err > max_err)
                    max_err = err;
            }
        }
    }
    double ms = 0;
    if (prof_time(ctx, c, run_gemm, &job, &ms) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    ck_gemm_candidate ci;
    ck_gemm_plan_instance(plan, &ci);
    double tflops = 2.0 * (double)q->batch * q->m * q->n * q->k / (ms * 1e-3) / 1e12;
    /* bandwidth: every operand's bytes once; packed (mixed-input, decode-bound) problems also
     * against the measured copy bandwidth */
    double gbs = prof_gemm_bytes(q, prob.has_c && ga->beta != 0.0f) / (ms * 1e-3) / 1e9, copy = 0;
    if (q->b_packed && prof_copy_bandwidth(ctx, &copy) != CK_SUCCESS)
        copy = 0;
    double peak = props.backend == CK_BACKEND_CUDA
                      ? dense_peak(props.name, q->a.dtype, q->compute != CK_GEMM_COMPUTE_F32)
                      : 0;
    char check[128];
    if (!c->check)
        snprintf(check, sizeof check, "not checked");
    else
        snprintf(check, sizeof check, "%s (max error %.3g, %s%lld rows)", ok ? "ok" : "FAILED",
                 max_err, sampled ? "sampled " : "", rows);
    if (c->json) {
        printf("{\"op\": \"gemm\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"batch\": %lld, "
               "\"a\": \"%s\", \"b\": "
               "\"%s\", \"d\": \"%s\", \"instance\": \"%s\", \"id\": %d, \"device\": \"%s\", "
               "\"ms\": %.6f, \"tflops\": %.3f, \"peak_fraction\": %s%.4f, \"plan_ms\": %.3f, "
               "\"gbps\": %.2f, \"copy_gbps\": %.2f, \"ok\": %s}\n",
               (long long)q->m, (long long)q->n, (long long)q->k, (long long)q->batch,
               ck_dtype_name(q->a.dtype), ck_dtype_name(q->b.dtype), ck_dtype_name(q->d.dtype),
               ci.name, ci.id, props.name, ms, tflops, "", peak > 0 ? tflops / peak : 0.0, plan_ms,
               gbs, copy, ok ? "true" : "false");
    } else {
        if (q->batch > 1)
            printf("batch %lld (strides A %lld, B %lld, D %lld)\n", (long long)q->batch,
                   (long long)q->a.batch_stride, (long long)q->b.batch_stride,
                   (long long)q->d.batch_stride);
        printf("gemm %lldx%lldx%lld %s x %s -> %s (A %s, B %s) on %s\n", (long long)q->m,
               (long long)q->n, (long long)q->k, ck_dtype_name(q->a.dtype),
               ck_dtype_name(q->b.dtype), ck_dtype_name(q->d.dtype), q->a.order ? "col" : "row",
               q->b.order ? "col" : "row", props.name);
        printf("  instance %s (id %d)\n  time %.4f ms, %.2f TFLOP/s", ci.name, ci.id, ms, tflops);
        if (peak > 0)
            printf(", %.1f%% of the %.0f TFLOP/s dense peak", 100 * tflops / peak, peak);
        printf(", %.1f GB/s", gbs);
        if (copy > 0)
            printf(" (%.1f%% of copy, %.1f GB/s)", 100 * gbs / copy, copy);
        printf("\n  plan %.1f ms (kernel built or loaded from the cache)\n  check %s\n", plan_ms,
               check);
    }
    result = ok ? CK_EXIT_OK : CK_EXIT_FAILURE;
done:
    for (int i = 0; i < NBUF; ++i) {
        free(h[i]);
        ck_free(ck_context_device(ctx), d[i]);
    }
    prof_gemm_quant_free(ck_context_device(ctx), &qb);
    free(out);
    ck_gemm_plan_destroy(plan);
    ck_context_destroy(ctx);
    return result;
}
