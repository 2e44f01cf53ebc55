/* `ck prof layernorm` and `ck prof rmsnorm`: forward (optionally with residual add and
 * row quantization, smoothing) or backward, checked against a double CPU reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ops/norm/norm_internal.h"
#include "prof.h"

static const char norm_help[] =
    "usage: ck prof layernorm|rmsnorm [--shape RxN] [--dtype bf16] [--bwd] [--residual]\n"
    "                                 [--quant int8|fp8e4m3] [--smooth] [common options]\n"
    "  --shape RxN       rows x hidden size (default 16384x8192)\n"
    "  --dtype T         x / y / residual / gamma / beta type: f32, f16 or bf16 (default bf16)\n"
    "  --bwd             backward (dx, dgamma, dbeta) instead of forward\n"
    "  --residual        fused residual add, also writing x + residual\n"
    "  --quant Q         quantized y (int8 or fp8e4m3) with a per-row scale\n"
    "  --smooth          smooth-quant factors before quantization (needs --quant)\n"
    "  --tune            first time every instance of the problem (forward, or with --bwd the\n"
    "                    backward) and store the fastest in the tuning table (as `ck tune\n"
    "                    layernorm|rmsnorm`)\n"
    "Bytes: each input read once, each output written once (gamma/beta once).\n";

typedef struct job {
    ck_context *ctx;
    ck_norm_forward_desc f;
    ck_norm_backward_desc b;
    int bwd;
} job;

static ck_status run_job(void *user, ck_stream *stream, int rotation)
{
    (void)stream;
    (void)rotation;
    job *j = user;
    return j->bwd ? ck_norm_backward(j->ctx, &j->b) : ck_norm_forward(j->ctx, &j->f);
}

typedef struct dbuf {
    void *dev;
    ck_tensor t;
} dbuf;

/* Fast exact host conversions for 1 GiB inputs (ck_convert_array is the general per-element
 * path): f32 -> bf16 / f16 round to nearest even (NaN quiet), f16 / bf16 / i8 / fp8e4m3 -> f32. */
static uint16_t host_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint16_t host_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, o;
    u &= 0x7fffffffu;
    if (u >= 0x47800000u) {
        o = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
    } else if (u < 0x38800000u) {
        float a, s;
        memcpy(&a, &u, 4);
        s = a + 0.5f; /* bit 0 of the sum is 2^-24: rounds to nearest even */
        memcpy(&o, &s, 4);
        o -= 0x3f000000u;
    } else {
        o = (u + 0xc8000fffu + ((u >> 13) & 1u)) >> 13;
    }
    return (uint16_t)(o | sign);
}

static float host_f16_to_f32(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, em = h & 0x7fffu, u;
    float f;
    if (em >= 0x7c00u) {
        u = sign | 0x7f800000u | ((em & 0x3ffu) << 13);
        memcpy(&f, &u, 4);
        return f;
    }
    u = em << 13;
    memcpy(&f, &u, 4);
    f *= 0x1p112f;
    return sign ? -f : f;
}

static float host_bf16_to_f32(uint32_t b)
{
    uint32_t u = b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* count values of f32 `src` into dtype dt at dst (f32/f16/bf16 fast, others ck_convert_array) */
static ck_status encode(ck_dtype dt, void *dst, const float *src, size_t count)
{
    if (dt == CK_DTYPE_F32) {
        memcpy(dst, src, count * 4);
    } else if (dt == CK_DTYPE_BF16) {
        uint16_t *d = dst;
        for (size_t i = 0; i < count; ++i)
            d[i] = host_f32_to_bf16(src[i]);
    } else if (dt == CK_DTYPE_F16) {
        uint16_t *d = dst;
        for (size_t i = 0; i < count; ++i)
            d[i] = host_f32_to_f16(src[i]);
    } else {
        return ck_convert_array(dt, dst, CK_DTYPE_F32, src, count, NULL);
    }
    return CK_SUCCESS;
}

static ck_status decode(ck_dtype dt, float *dst, const void *src, size_t count)
{
    if (dt == CK_DTYPE_F32) {
        memcpy(dst, src, count * 4);
    } else if (dt == CK_DTYPE_BF16) {
        const uint16_t *s = src;
        for (size_t i = 0; i < count; ++i)
            dst[i] = host_bf16_to_f32(s[i]);
    } else if (dt == CK_DTYPE_F16) {
        const uint16_t *s = src;
        for (size_t i = 0; i < count; ++i)
            dst[i] = host_f16_to_f32(s[i]);
    } else if (dt == CK_DTYPE_I8) {
        const int8_t *s = src;
        for (size_t i = 0; i < count; ++i)
            dst[i] = (float)s[i];
    } else if (dt == CK_DTYPE_FP8_E4M3) {
        float table[256];
        for (unsigned c = 0; c < 256; ++c)
            if (ck_convert_to_f32(dt, c, &table[c]) != CK_SUCCESS)
                return CK_ERROR_INVALID_ARGUMENT;
        const uint8_t *s = src;
        for (size_t i = 0; i < count; ++i)
            dst[i] = table[s[i]];
    } else {
        return ck_convert_array(CK_DTYPE_F32, dst, dt, src, count, NULL);
    }
    return CK_SUCCESS;
}

static ck_status make(ck_context *ctx, dbuf *b, ck_dtype dt, int rank, long long rows, long long n,
                      const float *init, size_t count)
{
    size_t es = dt == CK_DTYPE_F32 ? 4 : (dt == CK_DTYPE_F16 || dt == CK_DTYPE_BF16) ? 2 : 1;
    size_t bytes = (size_t)rows * (size_t)n * es;
    ck_status st = ck_malloc(ck_context_device(ctx), bytes ? bytes : 1, &b->dev);
    if (st != CK_SUCCESS)
        return st;
    int64_t shape2[2] = {rows, n}, shape1[1] = {rows * n};
    st = ck_tensor_init(&b->t, b->dev, dt, rank, rank == 2 ? shape2 : shape1, NULL);
    if (st == CK_SUCCESS && init) {
        void *h = malloc(bytes);
        if (!h)
            return CK_ERROR_OUT_OF_MEMORY;
        st = encode(dt, h, init, count);
        if (st == CK_SUCCESS)
            st = ck_memcpy_h2d(ck_context_device(ctx), b->dev, h, bytes, NULL);
        free(h);
    }
    return st;
}

static void read_back(ck_context *ctx, const dbuf *b, size_t count, float *out)
{
    size_t es = b->t.dtype == CK_DTYPE_F32 ? 4 : (b->t.dtype == CK_DTYPE_F16 || b->t.dtype == CK_DTYPE_BF16) ? 2 : 1;
    void *h = malloc(count * es);
    if (!h)
        return;
    if (ck_memcpy_d2h(ck_context_device(ctx), h, b->dev, count * es, NULL) == CK_SUCCESS)
        decode(b->t.dtype, out, h, count);
    free(h);
}

/* A rows x n tensor of uniform random values in [lo, hi) without a host copy of its own: a
 * tile of up to 4 Mi elements is generated, encoded and uploaded again and again (the unchecked
 * forward of 1 GiB inputs needs no host reference; its timing does not depend on the values). */
static ck_status make_random(ck_context *ctx, dbuf *b, ck_dtype dt, long long rows, long long n,
                             float lo, float hi, unsigned *seed)
{
    ck_status st = make(ctx, b, dt, 2, rows, n, NULL, 0);
    if (st != CK_SUCCESS)
        return st;
    size_t total = (size_t)rows * (size_t)n, tile = total < ((size_t)1 << 22) ? total : (size_t)1 << 22;
    size_t es = dt == CK_DTYPE_F32 ? 4 : 2;
    float *f = malloc(tile * 4);
    void *h = malloc(tile * es);
    if (!f || !h) {
        free(f);
        free(h);
        return CK_ERROR_OUT_OF_MEMORY;
    }
    prof_fill_uniform(f, tile, lo, hi, seed);
    st = encode(dt, h, f, tile);
    for (size_t off = 0; st == CK_SUCCESS && off < total; off += tile) {
        size_t cnt = total - off < tile ? total - off : tile;
        st = ck_memcpy_h2d(ck_context_device(ctx), (char *)b->dev + off * es, h, cnt * es, NULL);
    }
    free(f);
    free(h);
    return st;
}

/* rounds v to dtype dt (the inputs' exact values), fast for 1 GiB */
static void quantize_inputs(ck_dtype dt, float *v, size_t n)
{
    if (dt == CK_DTYPE_BF16)
        for (size_t i = 0; i < n; ++i)
            v[i] = host_bf16_to_f32(host_f32_to_bf16(v[i]));
    else if (dt == CK_DTYPE_F16)
        for (size_t i = 0; i < n; ++i)
            v[i] = host_f16_to_f32(host_f32_to_f16(v[i]));
}

static int prof_norm(int argc, char **argv, ck_norm_kind kind)
{
    char sub[32]; /* "prof layernorm": the command to name in messages */
    snprintf(sub, sizeof sub, "prof %s", argv[0]);
    prof_common c;
    int rc = prof_parse_common(sub, &argc, argv, &c);
    if (rc != CK_EXIT_OK)
        return rc;
    long long dims[2] = {16384, 8192};
    ck_dtype dt = CK_DTYPE_BF16, qt = CK_DTYPE_F32;
    int bwd = 0, residual = 0, quant = 0, smooth = 0, tune = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(norm_help, stdout);
            fputs(prof_common_help, stdout);
            return CK_EXIT_OK;
        } else if (!strcmp(a, "--shape") && i + 1 < argc) {
            int rank = 0;
            rc = prof_shape_option(sub, argv[++i], dims, 2, 2, &rank);
            if (rc != CK_EXIT_OK)
                return rc;
        } else if (!strcmp(a, "--dtype") && i + 1 < argc) {
            if (ck_dtype_from_name(argv[++i], &dt) != CK_SUCCESS ||
                (dt != CK_DTYPE_F32 && dt != CK_DTYPE_F16 && dt != CK_DTYPE_BF16))
                return cli_usage_error(sub, "--dtype %s: expected f32, f16 or bf16.", argv[i]);
        } else if (!strcmp(a, "--quant") && i + 1 < argc) {
            const char *q = argv[++i];
            if (!strcmp(q, "int8") || !strcmp(q, "i8"))
                qt = CK_DTYPE_I8;
            else if (!strcmp(q, "fp8e4m3") || !strcmp(q, "fp8"))
                qt = CK_DTYPE_FP8_E4M3;
            else
                return cli_usage_error(sub, "--quant %s: expected int8 or fp8e4m3.", q);
            quant = 1;
        } else if (!strcmp(a, "--tune")) {
            tune = 1;
        } else if (!strcmp(a, "--bwd")) {
            bwd = 1;
        } else if (!strcmp(a, "--residual")) {
            residual = 1;
        } else if (!strcmp(a, "--smooth")) {
            smooth = 1;
        } else {
            if (!strcmp(a, "--shape") || !strcmp(a, "--dtype") || !strcmp(a, "--quant"))
                return cli_usage_error(sub, "option %s needs a value.", a);
            return prof_unknown_argument(sub, a);
        }
    }
    if (smooth && !quant)
        return cli_usage_error(sub, "--smooth needs --quant.");
    if (bwd && (quant || residual))
        return cli_usage_error(sub, "--bwd takes neither --quant nor --residual.");
    if (dims[1] > (bwd ? CK_NORM_BWD_MAX_N : CK_NORM_MAX_N)) /* before any allocation */
        return cli_usage_error(sub,
                               "--shape: the hidden size N = %lld is more than the library "
                               "supports (%d forward, %d backward).",
                               dims[1], (int)CK_NORM_MAX_N, (int)CK_NORM_BWD_MAX_N);
    long long rows = dims[0], n = dims[1];
    int ln = kind == CK_NORM_LAYERNORM;
    ck_context *ctx = NULL;
    if (ck_context_create(c.backend, 0, &ctx) != CK_SUCCESS)
        return cli_library_error(sub);
    size_t total = (size_t)rows * (size_t)n;
    /* host arrays only where used: the residual / dy with --residual or --bwd, y with the
     * check */
    int need_r = residual || bwd, host_x = c.check || bwd;
    float *hx = host_x ? malloc(total * 4) : NULL, *hr = need_r && host_x ? malloc(total * 4) : NULL,
          *hy = c.check ? malloc(total * 4) : NULL,
          *hg = malloc((size_t)n * 4), *hb = malloc((size_t)n * 4), *hs = malloc((size_t)n * 4),
          *hm = malloc((size_t)rows * 4), *hrs = malloc((size_t)rows * 4),
          *hsc = malloc((size_t)rows * 4);
    /* the reference's rows and parameters in double (src/ops/norm/reference.c) */
    double *ra = malloc((size_t)n * 8), *ry = malloc((size_t)n * 8), *rd = malloc((size_t)n * 8),
           *rg = malloc((size_t)n * 8), *rb = malloc((size_t)n * 8), *rsm = malloc((size_t)n * 8);
    dbuf x = {0}, r = {0}, y = {0}, ro = {0}, g = {0}, b = {0}, s = {0}, sc = {0}, mean = {0},
         rstd = {0}, dg = {0}, db = {0};
    ck_status st = CK_ERROR_OUT_OF_MEMORY;
    prof_result res;
    memset(&res, 0, sizeof res);
    if ((host_x && !hx) || (need_r && host_x && !hr) || (c.check && !hy) || !hg || !hb || !hs || !hm || !hrs || !hsc || !ra ||
        !ry || !rd || !rg || !rb || !rsm)
        goto fail;
    unsigned seed = c.seed;
    if (host_x)
        prof_fill_uniform(hx, total, -2.0f, 3.0f, &seed);
    if (host_x && need_r)
        prof_fill_uniform(hr, total, -1.0f, 1.0f, &seed);
    prof_fill_uniform(hg, (size_t)n, 0.5f, 1.5f, &seed);
    prof_fill_uniform(hb, (size_t)n, -0.5f, 0.5f, &seed);
    prof_fill_uniform(hs, (size_t)n, 0.25f, 2.0f, &seed);
    if (host_x)
        quantize_inputs(dt, hx, total);
    if (host_x && need_r)
        quantize_inputs(dt, hr, total); /* dy in the backward */
    quantize_inputs(dt, hg, (size_t)n);
    quantize_inputs(dt, hb, (size_t)n);
    for (long long k = 0; k < n; ++k) {
        rg[k] = hg[k];
        rb[k] = hb[k];
        rsm[k] = hs[k];
    }
    /* the statistics of x (+ residual): the forward's reference, the backward's inputs (f32) */
    for (long long i = 0; (c.check || bwd) && i < rows; ++i) {
        double mu, rs;
        for (long long k = 0; k < n; ++k)
            ra[k] = (double)(float)(hx[i * n + k] + (residual ? (double)hr[i * n + k] : 0.0));
        ck_norm_reference_stats(kind, n, ra, 1e-5, &mu, &rs);
        hm[i] = (float)mu;
        hrs[i] = (float)rs;
    }
    ck_dtype yt = quant ? qt : dt;
    if ((st = host_x ? make(ctx, &x, dt, 2, rows, n, hx, total)
                     : make_random(ctx, &x, dt, rows, n, -2.0f, 3.0f, &seed)) != CK_SUCCESS ||
        (st = make(ctx, &g, dt, 1, 1, n, hg, (size_t)n)) != CK_SUCCESS ||
        (st = make(ctx, &y, yt, 2, rows, n, NULL, 0)) != CK_SUCCESS)
        goto fail;
    job j;
    memset(&j, 0, sizeof j);
    j.ctx = ctx;
    j.bwd = bwd;
    double bytes = 0, es = dt == CK_DTYPE_F32 ? 4 : 2;
    if (!bwd) {
        j.f.kind = kind;
        j.f.epsilon = 1e-5f;
        j.f.x = &x.t;
        j.f.gamma = &g.t;
        j.f.y = &y.t;
        bytes = (double)total * es * 2 + (double)n * es;
        if (quant)
            bytes -= (double)total * (es - 1);
        if (ln) {
            if ((st = make(ctx, &b, dt, 1, 1, n, hb, (size_t)n)) != CK_SUCCESS)
                goto fail;
            j.f.beta = &b.t;
            bytes += (double)n * es;
        }
        if (residual) {
            if ((st = host_x ? make(ctx, &r, dt, 2, rows, n, hr, total)
                             : make_random(ctx, &r, dt, rows, n, -1.0f, 1.0f, &seed)) != CK_SUCCESS ||
                (st = make(ctx, &ro, dt, 2, rows, n, NULL, 0)) != CK_SUCCESS)
                goto fail;
            j.f.residual = &r.t;
            j.f.residual_out = &ro.t;
            bytes += (double)total * es * 2;
        }
        if (quant) {
            if ((st = make(ctx, &sc, CK_DTYPE_F32, 1, 1, rows, NULL, 0)) != CK_SUCCESS)
                goto fail;
            j.f.y_scale = &sc.t;
            bytes += (double)rows * 4;
        }
        if (smooth) {
            if ((st = make(ctx, &s, CK_DTYPE_F32, 1, 1, n, hs, (size_t)n)) != CK_SUCCESS)
                goto fail;
            j.f.smooth = &s.t;
            bytes += (double)n * 4;
        }
    } else {
        if ((st = make(ctx, &r, dt, 2, rows, n, hr, total)) != CK_SUCCESS ||
            (st = make(ctx, &rstd, CK_DTYPE_F32, 1, 1, rows, hrs, (size_t)rows)) != CK_SUCCESS ||
            (st = make(ctx, &dg, CK_DTYPE_F32, 1, 1, n, NULL, 0)) != CK_SUCCESS)
            goto fail;
        j.b.kind = kind;
        j.b.dy = &r.t;
        j.b.x = &x.t;
        j.b.gamma = &g.t;
        j.b.rstd = &rstd.t;
        j.b.dx = &y.t;
        j.b.dgamma = &dg.t;
        bytes = (double)total * es * 3 + (double)n * es + (double)rows * 4 + (double)n * 4;
        if (ln) {
            if ((st = make(ctx, &mean, CK_DTYPE_F32, 1, 1, rows, hm, (size_t)rows)) != CK_SUCCESS ||
                (st = make(ctx, &db, CK_DTYPE_F32, 1, 1, n, NULL, 0)) != CK_SUCCESS)
                goto fail;
            j.b.mean = &mean.t;
            j.b.dbeta = &db.t;
            bytes += (double)rows * 4 + (double)n * 4;
        }
    }
    if (tune) {
        char best[64];
        double best_ms = 0;
        if ((st = bwd ? ck_norm_bwd_tune(ctx, &j.b, prof_tune_reps(ctx, &c), prof_tune_progress, &c,
                                         best, sizeof best, &best_ms)
                      : ck_norm_tune(ctx, &j.f, prof_tune_reps(ctx, &c), prof_tune_progress, &c,
                                     best, sizeof best, &best_ms)) != CK_SUCCESS)
            goto fail;
        if (!c.json)
            printf("tuned: %s (%.4f ms) stored in the tuning table\n", best, best_ms);
    }
    if ((st = run_job(&j, NULL, 0)) != CK_SUCCESS || (st = ck_context_synchronize(ctx)) != CK_SUCCESS)
        goto fail;
    res.op = argv[0];
    snprintf(res.problem, sizeof res.problem, "%s %lldx%lld%s%s%s%s%s", ck_dtype_name(dt), rows, n,
             bwd ? " bwd" : "", residual ? " residual" : "", quant ? " quant " : "",
             quant ? ck_dtype_name(qt) : "", smooth ? " smooth" : "");
    res.ok = 1;
    if (c.check) {
        res.checked = 1;
        read_back(ctx, &y, total, hy);
        if (quant)
            read_back(ctx, &sc, (size_t)rows, hsc);
        double worst = 0;
        for (long long i = 0; i < rows; ++i) {
            for (long long k = 0; k < n; ++k) {
                ra[k] = (double)(float)(hx[i * n + k] + (residual ? (double)hr[i * n + k] : 0.0));
                rd[k] = bwd ? hr[i * n + k] : 0.0;
            }
            if (bwd) {
                ck_norm_reference_bwd(kind, n, rd, ra, rg, hm[i], hrs[i], ry, NULL, NULL);
            } else {
                double mu, rs;
                ck_norm_reference_stats(kind, n, ra, 1e-5, &mu, &rs);
                ck_norm_reference_y(kind, n, ra, mu, rs, rg, ln ? rb : NULL, smooth ? rsm : NULL,
                                    ry);
            }
            for (long long k = 0; k < n; ++k) {
                double want = ry[k], err;
                double got = hy[i * n + k];
                if (quant) {
                    /* dequantized, in units of the code's spacing: int8 one step, fp8 1/8 */
                    got *= hsc[i];
                    err = fabs(got - want) / (qt == CK_DTYPE_I8 ? hsc[i] : fabs(want) * 0.0625 + hsc[i]);
                    err = err <= 1.0 ? 0.0 : err;
                } else {
                    double ulp = dt == CK_DTYPE_BF16 ? 0x1p-8 : dt == CK_DTYPE_F16 ? 0x1p-11 : 0x1p-22;
                    err = fabs(got - want) / (1.0 + fabs(want));
                    err = err <= ulp + 1e-4 ? 0.0 : err;
                }
                if (!(err <= worst))
                    worst = err;
            }
        }
        res.max_error = worst;
        res.ok = worst == 0.0;
    }
    if ((st = prof_time(ctx, &c, run_job, &j, &res.ms)) != CK_SUCCESS ||
        (st = prof_copy_bandwidth(ctx, &res.copy_gbps)) != CK_SUCCESS)
        goto fail;
    ck_device_props props;
    ck_device_get_props(ck_context_device(ctx), &props);
    res.device = props.name;
    res.bytes = bytes;
    rc = prof_report(&c, &res);
    goto done;
fail:
    /* a host allocation that failed leaves no library error to print */
    if (st == CK_ERROR_OUT_OF_MEMORY && ck_last_status() != CK_ERROR_OUT_OF_MEMORY) {
        fprintf(stderr, "ck %s: out of host memory.\n", sub);
        rc = CK_EXIT_FAILURE;
    } else {
        rc = cli_library_error(sub);
    }
done:;
    dbuf *all[] = {&x, &r, &y, &ro, &g, &b, &s, &sc, &mean, &rstd, &dg, &db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        ck_free(ck_context_device(ctx), all[i]->dev);
    free(hx);
    free(hr);
    free(hy);
    free(hg);
    free(hb);
    free(hs);
    free(hm);
    free(hrs);
    free(hsc);
    free(ra);
    free(ry);
    free(rd);
    free(rg);
    free(rb);
    free(rsm);
    ck_context_destroy(ctx);
    return rc;
}

int prof_layernorm(int argc, char **argv) { return prof_norm(argc, argv, CK_NORM_LAYERNORM); }

int prof_rmsnorm(int argc, char **argv) { return prof_norm(argc, argv, CK_NORM_RMSNORM); }
