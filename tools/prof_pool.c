/* `ck prof pool` and `ck prof im2col`: time the memory-bound companions of convolution
 * (ck/pool.h, ck/im2col.h) and check every element against their CPU references. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "conv_cli.h"
#include "prof.h"

static const char pool_help[] =
    "usage: ck prof pool [--mode max|avg] [--n N] [--c C] [--hw HxW | --dhw DxHxW]\n"
    "                    [--kernel K[xK..]] [--stride S[xS..]] [--dilation D[xD..]]\n"
    "                    [--pad P[xP..]] [--ceil] [--exclude-pad] [--divisor D]\n"
    "                    [--indices i32|i64] [--backward] [--dtype T] [options]\n"
    "\n"
    "Pooling over a channels-last tensor (NHWC / NDHWC) with torch's max_pool / avg_pool\n"
    "semantics; --backward times the max-pool backward (dx from dy and the indices). Prints\n"
    "time, GB/s (x read once, y and indices written once; backward: dy and indices read, dx\n"
    "written) and the ratio to the copy bandwidth; every element is checked against the CPU\n"
    "reference unless --no-check. Default: ResNet-50's max pool, --n 32 --c 64 --hw 112x112\n"
    "--kernel 3 --stride 2 --pad 1, bf16.\n"
    "\n"
    "  --mode max|avg            (default max)\n"
    "  --kernel, --stride, --dilation, --pad   per spatial dim (one value: every dim; with\n"
    "                            --kernel and no --stride, the stride is the kernel, as torch)\n"
    "  --ceil                    ceil_mode\n"
    "  --exclude-pad             avg: count_include_pad = False\n"
    "  --divisor D               avg: divisor_override\n"
    "  --indices i32|i64         max: write the indices (default i64 with --backward)\n"
    "  --dtype f32|f16|bf16      (default bf16)\n";

static const char im2col_help[] =
    "usage: ck prof im2col [convolution options] [options]\n"
    "\n"
    "Write the im2col matrix [G, N*out, filter*C/G] of a convolution's NHWGC input (ck_im2col,\n"
    "CK's img2col). Prints time, GB/s (x read once, the matrix written once) and the ratio to\n"
    "the copy bandwidth; every element is checked (bit for bit) unless --no-check. Options of\n"
    "the convolution (only its geometry and --dtype are used):\n";

typedef struct pool_job {
    ck_context *ctx;
    ck_pool_problem p;
    int backward;
    void *a, *b, *c; /* forward: x, y, indices; backward: dy, indices, dx */
} pool_job;

static ck_status pool_run(void *user, ck_stream *stream, int rotation)
{
    (void)stream, (void)rotation;
    pool_job *j = user;
    return j->backward ? ck_pool_backward(j->ctx, &j->p, j->a, j->b, j->c)
                       : ck_pool_forward(j->ctx, &j->p, j->a, j->b, j->c);
}

static int es_of(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : 2;
}

static double value(const void *p, ck_dtype t, int64_t i)
{
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es_of(t), (size_t)es_of(t));
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

/* random values in [-1, 1) as the type's codes */
static void fill(void *p, ck_dtype t, int64_t n, unsigned *s)
{
    for (int64_t i = 0; i < n; ++i) {
        float f;
        prof_fill_uniform(&f, 1, -1.0f, 1.0f, s);
        uint64_t code = 0;
        ck_convert_from_f64(t, f, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
        memcpy((char *)p + i * es_of(t), &code, (size_t)es_of(t));
    }
}

static int dims_option(const char *sub, const char *opt, const char *v, int ndim, int64_t *dst,
                       long long lo)
{
    long long vals[3];
    int n = prof_parse_list(v, vals, 3, lo, 1LL << 31);
    if (n == 0 || (n != 1 && n != ndim))
        return cli_usage_error(sub, "%s '%s': expected 1 or %d values >= %lld separated by 'x'",
                               opt, v, ndim, lo);
    for (int d = 0; d < ndim; ++d)
        dst[d] = vals[n == 1 ? 0 : d];
    return CK_EXIT_OK;
}

int prof_pool(int argc, char **argv)
{
    const char *sub = "prof pool";
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            fputs(pool_help, stdout);
            fputs(prof_common_help, stdout);
            return CK_EXIT_OK;
        }
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    pool_job j;
    memset(&j, 0, sizeof j);
    ck_pool_problem *p = &j.p;
    ck_pool_problem_init(p);
    p->n = 32, p->c = 64, p->in[0] = p->in[1] = 112;
    int kernel_given = 0;
    const char *kernel = "3", *stride = NULL, *dil = "1", *pad = "1", *idx = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int val = !strcmp(a, "--mode") || !strcmp(a, "--n") || !strcmp(a, "--c") ||
                  !strcmp(a, "--hw") || !strcmp(a, "--dhw") || !strcmp(a, "--kernel") ||
                  !strcmp(a, "--stride") || !strcmp(a, "--dilation") || !strcmp(a, "--pad") ||
                  !strcmp(a, "--divisor") || !strcmp(a, "--indices") || !strcmp(a, "--dtype");
        if (val && i + 1 >= argc)
            return cli_usage_error(sub, "option %s needs a value.", a);
        const char *v = val ? argv[++i] : NULL;
        long long x;
        if (!strcmp(a, "--mode")) {
            if (strcmp(v, "max") && strcmp(v, "avg"))
                return cli_usage_error(sub, "--mode '%s': expected max or avg.", v);
            p->mode = v[0] == 'm' ? CK_POOL_MAX : CK_POOL_AVG;
        } else if (!strcmp(a, "--n") || !strcmp(a, "--c") || !strcmp(a, "--divisor")) {
            if (prof_parse_list(v, &x, 1, 1, 1LL << 31) != 1)
                return cli_usage_error(sub, "%s '%s': expected a whole number >= 1.", a, v);
            *(a[2] == 'n' ? &p->n : a[2] == 'c' ? &p->c : &p->divisor_override) = x;
        } else if (!strcmp(a, "--hw") || !strcmp(a, "--dhw")) {
            p->ndim = (int)strlen(a) - 2;
            long long vals[3];
            if (prof_parse_list(v, vals, 3, 1, 1LL << 31) != p->ndim)
                return cli_usage_error(sub, "%s '%s': expected %d lengths separated by 'x'.", a, v,
                                       p->ndim);
            for (int d = 0; d < p->ndim; ++d)
                p->in[d] = vals[d];
        } else if (!strcmp(a, "--kernel")) {
            kernel = v;
            kernel_given = 1;
        } else if (!strcmp(a, "--stride")) {
            stride = v;
        } else if (!strcmp(a, "--dilation")) {
            dil = v;
        } else if (!strcmp(a, "--pad")) {
            pad = v;
        } else if (!strcmp(a, "--indices")) {
            idx = v;
            if (strcmp(v, "i32") && strcmp(v, "i64"))
                return cli_usage_error(sub, "--indices '%s': expected i32 or i64.", v);
        } else if (!strcmp(a, "--dtype")) {
            if (ck_dtype_from_name(v, &p->dtype) != CK_SUCCESS)
                return cli_usage_error(sub, "--dtype %s: %s", v, ck_last_error());
        } else if (!strcmp(a, "--ceil")) {
            p->ceil_mode = 1;
        } else if (!strcmp(a, "--exclude-pad")) {
            p->count_include_pad = 0;
        } else if (!strcmp(a, "--backward")) {
            j.backward = 1;
        } else {
            return prof_unknown_argument(sub, a);
        }
    }
    if ((rc = dims_option(sub, "--kernel", kernel, p->ndim, p->kernel, 1)) ||
        (rc = dims_option(sub, "--stride",
                          stride         ? stride
                          : kernel_given ? kernel
                                         : "2",
                          p->ndim, p->stride, 1)) ||
        (rc = dims_option(sub, "--dilation", dil, p->ndim, p->dilation, 1)) ||
        (rc = dims_option(sub, "--pad", pad, p->ndim, p->pad, 0)))
        return rc;
    p->index = idx          ? (idx[1] == '3' ? CK_POOL_INDEX_I32 : CK_POOL_INDEX_I64)
               : j.backward ? CK_POOL_INDEX_I64
                            : CK_POOL_INDEX_NONE;
    int64_t out[3];
    if (ck_pool_output_lengths(p, out) != CK_SUCCESS)
        return cli_library_error(sub);
    int64_t nx = p->n * p->c, ny = p->n * p->c;
    for (int d = 0; d < p->ndim; ++d)
        nx *= p->in[d], ny *= out[d];
    int es = es_of(p->dtype), is = p->index == CK_POOL_INDEX_I32 ? 4 : p->index ? 8 : 0;
    size_t bx = (size_t)nx * es, by = (size_t)ny * es, bi = (size_t)ny * (size_t)is;
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    j.ctx = ctx;
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    void *hx = malloc(bx), *hy = malloc(by), *hi = malloc(bi ? bi : 1), *gx = malloc(bx),
         *gy = malloc(by), *gi = malloc(bi ? bi : 1);
    void *dx = NULL, *dy = NULL, *di = NULL;
    prof_result r;
    memset(&r, 0, sizeof r);
    rc = CK_EXIT_FAILURE;
    if (!hx || !hy || !hi || !gx || !gy || !gi) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        goto done;
    }
    unsigned s = c.seed ? c.seed : 1;
    fill(hx, p->dtype, nx, &s);
    if (j.backward) { /* the forward's indices (the reference), a random dy */
        fill(hy, p->dtype, ny, &s);
        if (ck_pool_forward_reference(p, hx, gy, hi) != CK_SUCCESS) {
            rc = cli_library_error(sub);
            goto done;
        }
    }
    if (ck_malloc(dev, bx, &dx) || ck_malloc(dev, by, &dy) || (is && ck_malloc(dev, bi, &di)) ||
        ck_memcpy_h2d(dev, dx, hx, bx, NULL) || ck_memcpy_h2d(dev, dy, hy, by, NULL) ||
        (j.backward && ck_memcpy_h2d(dev, di, hi, bi, NULL))) {
        rc = cli_library_error(sub);
        goto done;
    }
    if (j.backward)
        j.a = dy, j.b = di, j.c = dx;
    else
        j.a = dx, j.b = dy, j.c = di;
    r.op = "pool";
    int len = snprintf(r.problem, sizeof r.problem, "%s %s%s n%lld c%lld ",
                       j.backward               ? "max backward"
                       : p->mode == CK_POOL_MAX ? "max"
                                                : "avg",
                       ck_dtype_name(p->dtype), is ? (is == 4 ? " i32" : " i64") : "",
                       (long long)p->n, (long long)p->c);
    for (int d = 0; d < p->ndim && len > 0 && len < 200; ++d)
        len += snprintf(r.problem + len, sizeof r.problem - (size_t)len, "%s%lld", d ? "x" : "",
                        (long long)p->in[d]);
    if (len > 0 && len < 200)
        snprintf(r.problem + len, sizeof r.problem - (size_t)len, " k%lld s%lld p%lld%s",
                 (long long)p->kernel[0], (long long)p->stride[0], (long long)p->pad[0],
                 p->ceil_mode ? " ceil" : "");
    r.device = props.name;
    r.ok = 1;
    if (c.check) {
        if (pool_run(&j, NULL, 0) || ck_context_synchronize(ctx)) {
            rc = cli_library_error(sub);
            goto done;
        }
        double unit = p->dtype == CK_DTYPE_BF16  ? 0x1p-8
                      : p->dtype == CK_DTYPE_F16 ? 0x1p-11
                                                 : 0x1p-24;
        long long bad = 0;
        double worst = 0;
        if (j.backward) {
            if (ck_memcpy_d2h(dev, gx, dx, bx, NULL) || ck_pool_backward_reference(p, hy, hi, hx)) {
                rc = cli_library_error(sub);
                goto done;
            }
            for (int64_t e = 0; e < nx; ++e) {
                double v = value(gx, p->dtype, e), ref = value(hx, p->dtype, e);
                double err = fabs(v - ref);
                worst = err > worst ? err : worst;
                bad += !(err <= unit * fabs(ref) + 0x1p-18);
            }
        } else {
            if (ck_memcpy_d2h(dev, gy, dy, by, NULL) ||
                (is && ck_memcpy_d2h(dev, gi, di, bi, NULL)) ||
                ck_pool_forward_reference(p, hx, hy, is ? hi : NULL)) {
                rc = cli_library_error(sub);
                goto done;
            }
            for (int64_t e = 0; e < ny; ++e) {
                double v = value(gy, p->dtype, e), ref = value(hy, p->dtype, e);
                double err = fabs(v - ref);
                worst = err > worst ? err : worst;
                int ok = p->mode == CK_POOL_MAX ? v == ref : err <= unit * fabs(ref) + 0x1p-20;
                if (is)
                    ok = ok && !memcmp((char *)gi + e * is, (char *)hi + e * is, (size_t)is);
                bad += !ok;
            }
        }
        r.checked = 1;
        r.ok = bad == 0;
        r.max_error = worst;
        if (bad)
            fprintf(stderr, "ck %s: %lld elements differ from the reference.\n", sub, bad);
    }
    if (prof_time(ctx, &c, pool_run, &j, &r.ms) != CK_SUCCESS ||
        prof_copy_bandwidth(ctx, &r.copy_gbps) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    r.bytes = (double)bx + (double)by + (double)bi;
    rc = prof_report(&c, &r);
done:
    ck_free(dev, dx);
    ck_free(dev, dy);
    ck_free(dev, di);
    free(hx), free(hy), free(hi), free(gx), free(gy), free(gi);
    ck_context_destroy(ctx);
    return rc;
}

typedef struct im2col_job {
    ck_context *ctx;
    ck_conv_problem p;
    void *x, *out;
} im2col_job;

static ck_status im2col_run(void *user, ck_stream *stream, int rotation)
{
    (void)stream, (void)rotation;
    im2col_job *j = user;
    return ck_im2col(j->ctx, &j->p, j->x, j->out);
}

int prof_im2col(int argc, char **argv)
{
    const char *sub = "prof im2col";
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            fputs(im2col_help, stdout);
            fputs(conv_cli_help, stdout);
            fputs(prof_common_help, stdout);
            return CK_EXIT_OK;
        }
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    im2col_job j;
    memset(&j, 0, sizeof j);
    ck_conv_problem_init(&j.p);
    for (int i = 1; i < argc; ++i) {
        int k = conv_cli_option(sub, argc, argv, &i, &j.p);
        if (k < 0)
            return CK_EXIT_USAGE;
        if (k == 0)
            return prof_unknown_argument(sub, argv[i]);
    }
    int64_t nx = 0, m = 0, kk = 0;
    if (ck_conv_tensor_elements(&j.p, &nx, NULL, NULL) || ck_im2col_shape(&j.p, &m, &kk))
        return cli_library_error(sub);
    int es = es_of(j.p.in_dtype);
    size_t bx = (size_t)nx * es, bo = (size_t)(j.p.g * m * kk) * es;
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    j.ctx = ctx;
    ck_device *dev = ck_context_device(ctx);
    ck_device_props props;
    ck_device_get_props(dev, &props);
    void *hx = malloc(bx), *ho = malloc(bo), *go = malloc(bo);
    prof_result r;
    memset(&r, 0, sizeof r);
    rc = CK_EXIT_FAILURE;
    if (!hx || !ho || !go) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        goto done;
    }
    unsigned s = c.seed ? c.seed : 1;
    fill(hx, j.p.in_dtype, nx, &s);
    if (ck_malloc(dev, bx, &j.x) || ck_malloc(dev, bo, &j.out) ||
        ck_memcpy_h2d(dev, j.x, hx, bx, NULL)) {
        rc = cli_library_error(sub);
        goto done;
    }
    r.op = "im2col";
    conv_cli_describe(&j.p, r.problem, sizeof r.problem);
    r.device = props.name;
    r.ok = 1;
    if (c.check) {
        if (im2col_run(&j, NULL, 0) || ck_context_synchronize(ctx) ||
            ck_memcpy_d2h(dev, go, j.out, bo, NULL) || ck_im2col_reference(&j.p, hx, ho)) {
            rc = cli_library_error(sub);
            goto done;
        }
        long long bad = 0;
        for (int64_t e = 0; e < j.p.g * m * kk; ++e)
            bad += memcmp((char *)go + e * es, (char *)ho + e * es, (size_t)es) != 0;
        r.checked = 1;
        r.ok = bad == 0;
        r.max_error = (double)bad; /* mismatching elements (a copy is exact) */
    }
    if (prof_time(ctx, &c, im2col_run, &j, &r.ms) != CK_SUCCESS ||
        prof_copy_bandwidth(ctx, &r.copy_gbps) != CK_SUCCESS) {
        rc = cli_library_error(sub);
        goto done;
    }
    r.bytes = (double)bx + (double)bo;
    rc = prof_report(&c, &r);
done:
    ck_free(dev, j.x);
    ck_free(dev, j.out);
    free(hx), free(ho), free(go);
    ck_context_destroy(ctx);
    return rc;
}
