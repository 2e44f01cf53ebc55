/*
 * `ck prof gemm --groups FILE|LIST`: a grouped GEMM (ck_gemm_grouped_*) over groups given as
 * MxNxK (a comma-separated list, or a file of them, separated by commas, spaces or lines; any
 * size may be 0), the group list in device memory; `ck prof gemm --ptr-array --m M --n N --k K
 * --batch COUNT [--broadcast a,b]`: a pointer-array batch (ck_gemm_ptr_array_*) of COUNT
 * products, their pointers in device arrays (with --broadcast, every product's A and / or B
 * pointer the same). Checked against the CPU reference (every element of every product, or 8
 * sampled rows of each with M N K over 2^27), timed, with TFLOP/s over all products.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops/gemm/gemm_internal.h"
#include "prof.h"

enum { MAX_GROUPS = 4096 };

/* Groups from `text`: tokens MxNxK (0 allowed) separated by commas or white space. */
static int parse_groups(const char *text, long long (*dims)[3], int max)
{
    int n = 0;
    const char *s = text;
    while (*s) {
        while (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            ++s;
        if (!*s)
            break;
        if (n >= max)
            return -1;
        for (int d = 0; d < 3; ++d) {
            if (*s < '0' || *s > '9')
                return -1;
            long long v = 0;
            while (*s >= '0' && *s <= '9') {
                v = v * 10 + (*s++ - '0');
                if (v > (1LL << 31))
                    return -1;
            }
            dims[n][d] = v;
            if (d < 2 && *s++ != 'x')
                return -1;
        }
        if (*s && *s != ',' && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return -1;
        ++n;
    }
    return n;
}

/* The list itself, or the contents of the file it names. */
static char *groups_text(const char *arg)
{
    FILE *f = fopen(arg, "rb");
    if (!f)
        return strdup(arg);
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = 0;
    return buf;
}

static void fill(void *p, ck_dtype t, size_t n, unsigned *state)
{
    int es = ck_gemm_dtype_bytes(t);
    for (size_t i = 0; i < n; ++i) {
        float u;
        prof_fill_uniform(&u, 1, -1, 1, state);
        double v = t == CK_DTYPE_I8 ? floor(u * 8.5) : u;
        uint64_t code = 0;
        ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        memcpy((char *)p + i * (size_t)es, &code, (size_t)es);
    }
}

typedef struct gg_job {
    ck_context *ctx;
    ck_gemm_grouped_plan *plan;
    const ck_gemm_group_desc *groups;
    ck_gemm_ptr_array_plan *pa_plan; /* --ptr-array: the plan and its device arrays */
    ck_gemm_ptr_arrays arrays;
    int count;
    ck_gemm_args args;
} gg_job;

static ck_status run_grouped(void *user, ck_stream *stream, int rotation)
{
    (void)rotation;
    gg_job *j = user;
    ck_context_set_stream(j->ctx, stream);
    if (j->pa_plan)
        return ck_gemm_ptr_array_execute(j->pa_plan, &j->arrays, j->count, &j->args);
    return ck_gemm_grouped_execute(j->plan, j->groups, j->count, &j->args);
}

/* --ptr-array: the host and device arrays of the products' pointers (from the descriptions
 * desc[] the list path builds; C and bias only where the problem has them). */
typedef struct gg_arrays {
    const void **h[5];
    void *d[5];
} gg_arrays;

static ck_status make_arrays(ck_device *dev, const ck_gemm_group_desc *desc, int count, int has_c,
                             int has_bias, gg_arrays *arr, ck_gemm_ptr_arrays *host,
                             ck_gemm_ptr_arrays *device)
{
    for (int x = 0; x < 5; ++x) {
        if ((x == 2 && !has_c) || (x == 4 && !has_bias))
            continue;
        size_t bytes = (size_t)count * sizeof(void *);
        if (!(arr->h[x] = malloc(bytes)))
            return CK_ERROR_OUT_OF_MEMORY;
        for (int g = 0; g < count; ++g) {
            const void *ptr[5] = {desc[g].a, desc[g].b, desc[g].c, desc[g].d, desc[g].bias};
            arr->h[x][g] = ptr[x];
        }
        ck_status st = ck_malloc(dev, bytes, &arr->d[x]);
        if (st || (st = ck_memcpy_h2d(dev, arr->d[x], arr->h[x], bytes, NULL)))
            return st;
    }
    ck_gemm_ptr_arrays h = {arr->h[0], arr->h[1], arr->h[2], (void *const *)arr->h[3], arr->h[4]};
    ck_gemm_ptr_arrays d = {arr->d[0], arr->d[1], arr->d[2], arr->d[3], arr->d[4]};
    *host = h, *device = d;
    return CK_SUCCESS;
}

/* Elements of matrix (rows x cols, packed) of each kind for group g, rounded up to 64 so
 * that every group starts 16-byte aligned (256 bytes for 4-byte types). */
static size_t round64(long long x)
{
    return (size_t)((x + 63) / 64 * 64);
}

int prof_gemm_grouped(const char *sub, int argc, char **argv)
{
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.b.order = CK_GEMM_COL_MAJOR;
    ck_gemm_args ga;
    ck_gemm_args_init(&ga);
    static long long dims[MAX_GROUPS][3];
    int count = -1, has_c = 0, have_d = 0, ptr_array = 0, share = 0, instance = -1, list = 0;
    long long mnk[3] = {0, 0, 0}, batch = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--ptr-array") || !strcmp(a, "--list")) {
            *(a[2] == 'p' ? &ptr_array : &list) = 1;
            continue;
        }
        if (!strcmp(a, "--tune"))
            return cli_usage_error(sub, "--groups is not tuned yet: the grouped kernel's tile is "
                                        "the policy's for the largest group (docs/ops-gemm.md).");
        if (!strcmp(a, "--c")) {
            has_c = 1;
            ga.beta = ga.beta != 0 ? ga.beta : 1;
            continue;
        }
        static const char *const valued[] = {
            "--groups", "--dtype", "--d-dtype", "--layout", "--alpha", "--beta",      "--bias",
            "--act",    "--m",     "--n",       "--k",      "--batch", "--broadcast", "--instance"};
        int known = 0;
        for (size_t o = 0; o < sizeof valued / sizeof valued[0]; ++o)
            known |= !strcmp(a, valued[o]);
        if (!known)
            return cli_usage_error(sub,
                                   "%s: with --groups (or --ptr-array) the options are --dtype, "
                                   "--d-dtype, --layout, --c, --alpha, --beta, --bias, --act, "
                                   "--instance, --list (--ptr-array: --m, --n, --k, --batch, "
                                   "--broadcast) and the common ones.",
                                   a);
        if (i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--groups")) {
            char *text = groups_text(v);
            count = text ? parse_groups(text, dims, MAX_GROUPS) : -1;
            free(text);
            if (count < 1)
                return cli_usage_error(sub,
                                       "--groups %s: expected 1 to %d groups MxNxK (each 0 to "
                                       "2^31) separated by commas, or a file of them.",
                                       v, MAX_GROUPS);
        } else if (!strcmp(a, "--m") || !strcmp(a, "--n") || !strcmp(a, "--k") ||
                   !strcmp(a, "--batch") || !strcmp(a, "--instance")) {
            long long x;
            int inst = a[2] == 'i';
            if (prof_parse_list(v, &x, 1, inst ? 0 : 1, inst ? INT32_MAX : (1LL << 31)) != 1)
                return cli_usage_error(sub, "%s %s: expected a whole number from %d to 2^31.", a, v,
                                       inst ? 0 : 1);
            if (inst)
                instance = (int)x;
            else
                *(a[2] == 'b' ? &batch : &mnk[a[2] == 'm' ? 0 : a[2] == 'n' ? 1 : 2]) = x;
        } else if (!strcmp(a, "--broadcast")) {
            if (strcmp(v, "a") && strcmp(v, "b") && strcmp(v, "a,b") && strcmp(v, "b,a"))
                return cli_usage_error(sub,
                                       "--broadcast %s: with --ptr-array, a, b or a,b (the same "
                                       "A and / or B pointer for every product).",
                                       v);
            share = (strchr(v, 'a') ? 1 : 0) | (strchr(v, 'b') ? 2 : 0);
        } else if (!strcmp(a, "--dtype") || !strcmp(a, "--d-dtype")) {
            ck_dtype t;
            if (ck_dtype_from_name(v, &t) != CK_SUCCESS)
                return cli_usage_error(sub, "%s %s: unknown type.", a, v);
            if (a[2] == 'd' && a[3] == 't') {
                p.a.dtype = p.b.dtype = t;
            } else {
                p.d.dtype = t;
                have_d = 1;
            }
        } else if (!strcmp(a, "--layout")) {
            if (strlen(v) != 2 || !strchr("NT", v[0]) || !strchr("NT", v[1]))
                return cli_usage_error(sub, "--layout %s: expected NN, NT, TN or TT.", v);
            p.a.order = v[0] == 'N' ? CK_GEMM_ROW_MAJOR : CK_GEMM_COL_MAJOR;
            p.b.order = v[1] == 'N' ? CK_GEMM_ROW_MAJOR : CK_GEMM_COL_MAJOR;
        } else if (!strcmp(a, "--alpha") || !strcmp(a, "--beta")) {
            double x;
            int r = prof_parse_double(sub, a, v, &x);
            if (r != CK_EXIT_OK)
                return r;
            if (!isfinite((float)x))
                return cli_usage_error(sub, "%s %s: beyond the f32 range.", a, v);
            *(a[2] == 'a' ? &ga.alpha : &ga.beta) = (float)x;
        } else if (!strcmp(a, "--bias")) {
            if (strcmp(v, "row") && strcmp(v, "col"))
                return cli_usage_error(sub, "--bias %s: expected row or col.", v);
            p.bias = v[0] == 'r' ? CK_GEMM_BIAS_ROW : CK_GEMM_BIAS_COL;
        } else {
            static const char *names[] = {"none",     "relu", "gelu_tanh",
                                          "gelu_erf", "silu", "sigmoid"};
            int found = -1;
            for (int x = 0; x < 6; ++x)
                if (!strcmp(v, names[x]))
                    found = x;
            if (found < 0)
                return cli_usage_error(sub,
                                       "--act %s: expected one of relu gelu_tanh gelu_erf "
                                       "silu sigmoid.",
                                       v);
            p.activation = (ck_gemm_activation)found;
        }
    }
    if (ptr_array) {
        if (count > 0 || mnk[0] < 1 || mnk[1] < 1 || mnk[2] < 1 || batch < 1 || batch > MAX_GROUPS)
            return cli_usage_error(sub,
                                   "--ptr-array takes --m, --n, --k and --batch COUNT (1 to %d "
                                   "products), not --groups.",
                                   MAX_GROUPS);
        count = (int)batch;
        for (int g = 0; g < count; ++g)
            dims[g][0] = mnk[0], dims[g][1] = mnk[1], dims[g][2] = mnk[2];
    } else if (share || batch || mnk[0] || mnk[1] || mnk[2]) {
        return cli_usage_error(sub, "--m, --n, --k, --batch and --broadcast go with --ptr-array, "
                                    "not --groups.");
    }
    if (count < 1)
        return cli_usage_error(sub, "--groups (or --ptr-array) is required.");
    if (!have_d)
        p.d.dtype = p.a.dtype == CK_DTYPE_I8                                    ? CK_DTYPE_I32
                    : p.a.dtype == CK_DTYPE_F32                                 ? CK_DTYPE_F32
                    : (p.a.dtype == CK_DTYPE_F16 || p.a.dtype == CK_DTYPE_BF16) ? p.a.dtype
                                                                                : CK_DTYPE_BF16;
    if (has_c)
        p.c.dtype = p.d.dtype, p.c.order = p.d.order;
    p.bias_dtype = CK_DTYPE_F32;
    /* the template's sizes: the largest group's, the shape the tile is chosen for */
    for (int g = 0; g < count; ++g)
        if (dims[g][0] * dims[g][1] * dims[g][2] >= p.m * p.n * p.k)
            p.m = dims[g][0], p.n = dims[g][1], p.k = dims[g][2];

    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    ck_device_props props;
    ck_device_get_props(ck_context_device(ctx), &props);
    ck_device *dev = ck_context_device(ctx);
    int result = CK_EXIT_FAILURE;
    ck_gemm_grouped_plan *plan = NULL;
    ck_gemm_ptr_array_plan *pa_plan = NULL;
    gg_arrays arr;
    memset(&arr, 0, sizeof arr);
    ck_gemm_ptr_arrays host_arrays, dev_arrays;
    memset(&dev_arrays, 0, sizeof dev_arrays);
    ck_gemm_group_desc *desc = calloc((size_t)count, sizeof *desc);
    static size_t off[MAX_GROUPS][5]; /* element offsets of A, B, C, D, bias in their buffers */
    size_t total[5] = {0};
    ck_dtype ty[5] = {p.a.dtype, p.b.dtype, p.d.dtype, p.d.dtype, CK_DTYPE_F32};
    void *h[5] = {0}, *d[5] = {0}, *out = NULL, *ddesc = NULL;
    double flops = 0;
    if (!desc)
        goto done;
    for (int g = 0; g < count; ++g) {
        long long m = dims[g][0], n = dims[g][1], k = dims[g][2];
        ck_gemm_group_desc *e = &desc[g];
        e->m = m, e->n = n, e->k = k;
        e->lda = p.a.order == CK_GEMM_ROW_MAJOR ? k : m;
        e->ldb = p.b.order == CK_GEMM_ROW_MAJOR ? n : k;
        e->ldc = e->ldd = p.d.order == CK_GEMM_ROW_MAJOR ? n : m;
        long long el[5] = {m * k, k * n, has_c ? m * n : 0, m * n,
                           p.bias == CK_GEMM_BIAS_ROW ? m
                           : p.bias                   ? n
                                                      : 0};
        for (int x = 0; x < 5; ++x) {
            off[g][x] = total[x];
            if (!(g > 0 && x < 2 && (share >> x & 1))) /* --broadcast: one A / B for all */
                total[x] += round64(el[x]);
            else
                off[g][x] = off[0][x];
        }
        flops += 2.0 * (double)m * (double)n * (double)k;
    }
    if (list) { /* the candidates of the template (ids for --instance) */
        ck_gemm_candidate cand[CK_GEMM_MAX_CANDIDATES];
        int nc = 0;
        if (ck_gemm_grouped_candidates(ctx, &p, cand, CK_GEMM_MAX_CANDIDATES, &nc) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        printf("%s candidates on %s, best first (sized for %lldx%lldx%lld):\n",
               ptr_array ? "pointer-array" : "grouped", props.name, (long long)p.m, (long long)p.n,
               (long long)p.k);
        for (int i = 0; i < nc; ++i)
            printf("  id %-8d %s\n", cand[i].id, cand[i].name);
        result = CK_EXIT_OK;
        goto done;
    }
    ck_gemm_plan_options po;
    ck_gemm_plan_options_init(&po);
    po.instance = instance;
    ck_status pst = ptr_array ? ck_gemm_ptr_array_plan_create(ctx, &p, &po, &pa_plan)
                              : ck_gemm_grouped_plan_create_opt(ctx, &p, &po, &plan);
    if (pst != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    unsigned state = c.seed;
    for (int x = 0; x < 5; ++x) {
        if (!total[x])
            continue;
        size_t bytes = total[x] * (size_t)ck_gemm_dtype_bytes(ty[x]);
        if (!(h[x] = malloc(bytes)) || ck_malloc(dev, bytes, &d[x]) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        fill(h[x], ty[x], total[x], &state);
        if (ck_memcpy_h2d(dev, d[x], h[x], bytes, NULL) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
    }
    for (int g = 0; g < count; ++g) {
        ck_gemm_group_desc *e = &desc[g];
        void **ptr[5] = {(void **)&e->a, (void **)&e->b, (void **)&e->c, &e->d, (void **)&e->bias};
        for (int x = 0; x < 5; ++x)
            *ptr[x] = d[x] ? (char *)d[x] + off[g][x] * (size_t)ck_gemm_dtype_bytes(ty[x]) : NULL;
    }
    if (ptr_array) {
        if (make_arrays(dev, desc, count, has_c, p.bias != CK_GEMM_BIAS_NONE, &arr, &host_arrays,
                        &dev_arrays) != CK_SUCCESS ||
            ck_gemm_ptr_array_check(pa_plan, &host_arrays, count, &ga) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
    } else if (ck_gemm_grouped_check(plan, desc, count, &ga) != CK_SUCCESS ||
               ck_malloc(dev, (size_t)count * sizeof *desc, &ddesc) != CK_SUCCESS ||
               ck_memcpy_h2d(dev, ddesc, desc, (size_t)count * sizeof *desc, NULL) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    gg_job job = {ctx, plan, ddesc, pa_plan, dev_arrays, count, ga};
    size_t dbytes = total[3] * (size_t)ck_gemm_dtype_bytes(ty[3]);
    if (!(out = malloc(dbytes ? dbytes : 1)) ||
        run_grouped(&job, ck_context_stream(ctx), 0) != CK_SUCCESS ||
        ck_context_synchronize(ctx) != CK_SUCCESS ||
        (dbytes && ck_memcpy_d2h(dev, out, d[3], dbytes, NULL) != CK_SUCCESS)) {
        result = cli_library_error(sub);
        goto done;
    }
    ck_gemm_candidate ci;
    if (pa_plan)
        ck_gemm_ptr_array_plan_instance(pa_plan, &ci);
    else
        ck_gemm_grouped_plan_instance(plan, &ci);
    int family = ci.family;
    int ok = 1;
    double max_err = 0;
    for (int g = 0; c.check && g < count; ++g) {
        const ck_gemm_group_desc *e = &desc[g];
        if (e->m == 0 || e->n == 0)
            continue;
        ck_gemm_problem q = p;
        q.m = e->m, q.n = e->n, q.k = e->k > 0 ? e->k : 1;
        q.a.ld = q.b.ld = q.c.ld = q.d.ld = 0;
        ck_gemm_prob prob;
        if (ck_gemm_prob_make(&q, &prob) != CK_SUCCESS) {
            result = cli_library_error(sub);
            goto done;
        }
        prob.p.k = e->k;
        prob.tf32_truncate = family == 90; /* wgmma reads f32 bits as tf32 */
        ck_gemm_args ha = ga;
        const void *hp[5];
        for (int x = 0; x < 5; ++x)
            hp[x] = h[x] ? (char *)h[x] + off[g][x] * (size_t)ck_gemm_dtype_bytes(ty[x]) : NULL;
        ha.a = hp[0], ha.b = hp[1], ha.c = hp[2], ha.bias = hp[4];
        int es = ck_gemm_dtype_bytes(ty[3]);
        int sampled = (double)e->m * e->n * (e->k > 0 ? e->k : 1) > 134217728.0 && e->m > 8;
        for (long long r = 0; r < (sampled ? 8 : e->m); ++r) {
            long long i = sampled ? (r * 7919) % e->m : r;
            for (long long j = 0; j < e->n; ++j) {
                double mag = 0, ref = ck_gemm_reference_value(&prob, &ha, i, j, &mag);
                double refq = 0, got = 0;
                uint64_t code = 0, got_code = 0;
                ck_convert_from_f64(ty[3], ref, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0,
                                    &code);
                long long at = (long long)off[g][3] +
                               (p.d.order == CK_GEMM_ROW_MAJOR ? i * e->ldd + j : i + j * e->ldd);
                memcpy(&got_code, (char *)out + at * es, (size_t)es);
                if (ty[3] == CK_DTYPE_I32) {
                    got = (double)(int32_t)(uint32_t)got_code;
                    refq = (double)(int32_t)(uint32_t)code;
                } else {
                    ck_convert_to_f64(ty[3], got_code, &got);
                    ck_convert_to_f64(ty[3], code, &refq);
                }
                double err = fabs(got - refq);
                if (!(err <= ck_gemm_tolerance(&prob, mag, ref)))
                    ok = 0;
                if (err > max_err)
                    max_err = err;
            }
        }
    }
    double ms = 0;
    if (prof_time(ctx, &c, run_grouped, &job, &ms) != CK_SUCCESS) {
        result = cli_library_error(sub);
        goto done;
    }
    double tflops = flops / (ms * 1e-3) / 1e12;
    if (c.json)
        printf("{\"op\": \"%s\", \"groups\": %d, \"flop\": %.0f, \"a\": \"%s\", "
               "\"d\": \"%s\", \"instance\": \"%s\", \"device\": \"%s\", \"ms\": %.6f, "
               "\"tflops\": %.3f, \"ok\": %s}\n",
               ptr_array ? "gemm_ptr_array" : "gemm_grouped", count, flops,
               ck_dtype_name(p.a.dtype), ck_dtype_name(p.d.dtype), ci.name, props.name, ms, tflops,
               ok ? "true" : "false");
    else
        printf("%s gemm, %d %s, %s -> %s on %s\n  instance %s\n  time %.4f ms, %.2f "
               "TFLOP/s\n  check %s (max error %.3g)\n",
               ptr_array ? "pointer-array" : "grouped", count, ptr_array ? "products" : "groups",
               ck_dtype_name(p.a.dtype), ck_dtype_name(p.d.dtype), props.name, ci.name, ms, tflops,
               !c.check ? "not run"
               : ok     ? "ok"
                        : "FAILED",
               max_err);
    result = ok ? CK_EXIT_OK : CK_EXIT_FAILURE;
done:
    for (int x = 0; x < 5; ++x) {
        free(h[x]);
        ck_free(dev, d[x]);
    }
    for (int x = 0; x < 5; ++x) {
        free(arr.h[x]);
        ck_free(dev, arr.d[x]);
    }
    ck_free(dev, ddesc);
    free(out);
    free(desc);
    ck_gemm_grouped_plan_destroy(plan);
    ck_gemm_ptr_array_plan_destroy(pa_plan);
    ck_context_destroy(ctx);
    return result;
}
