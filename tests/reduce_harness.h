/*
 * Shared by tests/test_reduce*.c: run one ck_reduce problem on the context's device with random
 * data (fixed seed) and compare EVERY output element with the double-precision CPU reference
 * (ck_reduce_reference).
 *
 * Tolerance of a value result (ref = exact result, mag = the same post-ops applied to the sum of
 * |terms|): any order of n - 1 fp32 additions has |error| <= (n - 1) u sum|terms| with
 * u = 2^-24 (fp64 accumulation: 2^-53) (Higham, recursive summation bound gamma_{n-1} holds for
 * any association); the pre-op square, the mean's division, the norm's square root and the
 * scale add a few roundings (4 u |ref|), and the store rounds once more into y's type (half an
 * ulp, taken as one ulp of |ref| plus the smallest subnormal). Square roots halve relative errors,
 * so applying them to mag keeps the bound. Max and min incur only the last two terms. NaN must
 * give NaN, infinities the same infinity, argmax/argmin the exact index.
 */
#ifndef CK_TESTS_REDUCE_HARNESS_H
#define CK_TESTS_REDUCE_HARNESS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/reduce/reduce_internal.h"
#include "test.h"

enum { RT_PACKED = 0, RT_PADDED = 1, RT_PERMUTED = 2, RT_BROADCAST = 3 };

static inline int rt_size(ck_dtype t)
{
    return (int)(ck_dtype_get(t)->storage_bits / 8);
}

/* Strides of x for `mode`: packed; rows padded by 3 elements; a random physical order of the
 * dimensions with padding; dimension 0 broadcast (stride 0). */
static inline void rt_strides(int rank, const int64_t *shape, int mode, uint64_t *seed, int64_t *st)
{
    int order[8];
    for (int d = 0; d < rank; ++d)
        order[d] = d;
    if (mode == RT_PERMUTED)
        for (int d = rank - 1; d > 0; --d) {
            int j = (int)(ckt_rand64(seed) % (uint64_t)(d + 1)), t = order[d];
            order[d] = order[j];
            order[j] = t;
        }
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; --i) {
        int d = order[i];
        st[d] = s;
        s *= shape[d] + ((mode == RT_PADDED || mode == RT_PERMUTED) && i == rank - 1 ? 3 : 0);
    }
    if (mode == RT_BROADCAST && rank > 0)
        st[0] = 0;
}

/* A random code of type t: floats uniform in [-4, 4) (rounded to t), integers in a small range. */
static inline uint64_t rt_random_code(ck_dtype t, uint64_t *seed)
{
    uint64_t r = ckt_rand64(seed);
    uint64_t code = 0;
    if (t == CK_DTYPE_I8)
        return (uint64_t)(uint8_t)(int8_t)((int)(r % 201) - 100);
    if (t == CK_DTYPE_U8)
        return r % 256;
    if (t == CK_DTYPE_I32)
        return (uint64_t)(uint32_t)(int32_t)((int64_t)(r % 2000001) - 1000000);
    double v = ((double)(r >> 11) / 9007199254740992.0) * 8.0 - 4.0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    return code;
}

static inline void rt_put(void *buf, int size, int64_t i, uint64_t code)
{
    memcpy((unsigned char *)buf + i * size, &code, (size_t)size);
}

static inline uint64_t rt_get(const void *buf, int size, int64_t i)
{
    uint64_t code = 0;
    memcpy(&code, (const unsigned char *)buf + i * size, (size_t)size);
    return code;
}

static inline double rt_out_rel(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F64:
        return 0x1p-52;
    case CK_DTYPE_F32:
        return 0x1p-23;
    case CK_DTYPE_F16:
        return 0x1p-10;
    case CK_DTYPE_BF16:
        return 0x1p-7;
    default:
        return 0x1p-2;
    }
}

typedef struct rt_problem {
    ck_dtype xt, yt;
    int rank;
    int64_t shape[6];
    int mode; /* RT_* */
    int naxes;
    int axes[6];
    int keep;    /* y keeps reduced axes as length 1 */
    int ypad;    /* y strided: every other element */
    int special; /* inject NaN / +Inf / -Inf */
    int ties;    /* > 0: every element one of the first `ties` of -Inf, 1, -0, +0, +Inf (ties,
                  * rows of one value; 1: every element -Inf) */
    ck_reduce_op op;
    ck_reduce_options opt;
} rt_problem;

/* Runs p; returns the number of mismatching elements (each also a CHECK failure). When out is
 * not NULL it receives the y bytes (malloc'd) for determinism checks, *out_bytes their size. */
static inline long rt_run(ck_context *ctx, const rt_problem *p, uint64_t seed, void **out,
                          size_t *out_bytes)
{
    ck_device *dev = ck_context_device(ctx);
    int xs = rt_size(p->xt), ys = rt_size(p->yt);
    int64_t st[6];
    uint64_t s = seed;
    rt_strides(p->rank, p->shape, p->mode, &s, st);
    ck_tensor x, y, hx;
    CHECK_OK(ck_tensor_init(&x, (void *)(uintptr_t)4096, p->xt, p->rank, p->shape, st));
    int64_t ext = ck_tensor_extent_bytes(&x);
    int64_t xcount = ext / xs;
    void *hbuf = malloc((size_t)(ext > 0 ? ext : 1));
    for (int64_t i = 0; i < xcount; ++i)
        rt_put(hbuf, xs, i, rt_random_code(p->xt, &s));
    if (p->ties > 0) {
        const double level[5] = {-INFINITY, 1.0, -0.0, 0.0, INFINITY};
        for (int64_t i = 0; i < xcount; ++i) {
            uint64_t c = 0;
            ck_convert_from_f64(p->xt, level[ckt_rand64(&s) % (uint64_t)p->ties],
                                CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_NONSATURATE, 0, &c);
            rt_put(hbuf, xs, i, c);
        }
    }
    if (p->special && xcount > 0) {
        const ck_dtype_info *info = ck_dtype_get(p->xt);
        uint64_t codes[3] = {info->nan_code, 0, 0};
        ck_convert_from_f64(p->xt, INFINITY, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_NONSATURATE, 0,
                            &codes[1]);
        ck_convert_from_f64(p->xt, -INFINITY, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_NONSATURATE, 0,
                            &codes[2]);
        for (int k = 0; k < p->special; ++k)
            rt_put(hbuf, xs, (int64_t)(ckt_rand64(&s) % (uint64_t)xcount), codes[k % 3]);
    }
    hx = x;
    hx.data = hbuf;
    void *dx = NULL, *dy = NULL;
    if (ext > 0) {
        CHECK_OK(ck_malloc(dev, (size_t)ext, &dx));
        CHECK_OK(ck_memcpy_h2d(dev, dx, hbuf, (size_t)ext, NULL));
    }
    x.data = dx;
    /* y */
    int mask[6] = {0};
    for (int i = 0; i < p->naxes; ++i)
        mask[p->axes[i] < 0 ? p->axes[i] + p->rank : p->axes[i]] = 1;
    int64_t yshape[6];
    int yr = 0;
    for (int d = 0; d < p->rank; ++d)
        if (!mask[d] || p->keep)
            yshape[yr++] = mask[d] ? 1 : p->shape[d];
    int64_t yst[6], acc = p->ypad ? 2 : 1;
    for (int d = yr - 1; d >= 0; --d) {
        yst[d] = acc;
        acc *= yshape[d];
    }
    CHECK_OK(ck_tensor_init(&y, (void *)(uintptr_t)4096, p->yt, yr, yshape, yst));
    int64_t yext = ck_tensor_extent_bytes(&y), ycount = ck_tensor_numel(&y);
    unsigned char *hy = malloc((size_t)(yext > 0 ? yext : 1));
    if (yext > 0) {
        CHECK_OK(ck_malloc(dev, (size_t)yext, &dy));
        CHECK_OK(ck_memset_d8(dev, dy, 0xA5, (size_t)yext, NULL));
    }
    y.data = dy;
    long bad = 0;
    ck_status st_run = ck_reduce(ctx, p->op, &x, p->axes, p->naxes, &y, &p->opt);
    CHECK_MSG(st_run == CK_SUCCESS, "ck_reduce: %s", ck_last_error());
    CHECK_OK(ck_context_synchronize(ctx));
    if (yext > 0)
        CHECK_OK(ck_memcpy_d2h(dev, hy, dy, (size_t)yext, NULL));
    double *val = malloc(sizeof(double) * (size_t)(ycount + 1));
    double *mag = malloc(sizeof(double) * (size_t)(ycount + 1));
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(ycount + 1));
    CHECK_OK(ck_reduce_reference(p->op, &hx, p->axes, p->naxes, &p->opt, val, idx, mag));
    int64_t n = 1;
    for (int d = 0; d < p->rank; ++d)
        if (mask[d])
            n *= p->shape[d];
    int acc64 = p->xt == CK_DTYPE_F64 || p->xt == CK_DTYPE_I32;
    double u = acc64 ? 0x1p-53 : 0x1p-24;
    int sumlike = p->op != CK_REDUCE_MAX && p->op != CK_REDUCE_MIN;
    double sub = ck_dtype_get(p->yt)->min_subnormal;
    for (int64_t i = 0; st_run == CK_SUCCESS && i < ycount; ++i) {
        int64_t off = 0, rem = i;
        for (int d = yr - 1; d >= 0; --d) {
            off += (rem % yshape[d]) * yst[d];
            rem /= yshape[d];
        }
        uint64_t code = rt_get(hy, ys, off);
        if (p->op == CK_REDUCE_ARGMAX || p->op == CK_REDUCE_ARGMIN) {
            int32_t got = (int32_t)(uint32_t)code;
            if (got != idx[i]) {
                ++bad;
                CHECK_MSG(0, "%s output %lld: index %d, expected %lld", ck_reduce_op_name(p->op),
                          (long long)i, got, (long long)idx[i]);
            }
            continue;
        }
        double got = 0;
        ck_convert_to_f64(p->yt, code, &got);
        double ref = val[i];
        int ok;
        if (isnan(ref))
            ok = isnan(got);
        else if (isinf(ref))
            ok = got == ref;
        else if (fabs(ref) > ck_dtype_get(p->yt)->max_finite) /* overflow: Inf or saturated */
            ok = (isinf(got) || fabs(got) == ck_dtype_get(p->yt)->max_finite) && got * ref > 0;
        else {
            double tol = (sumlike ? (double)(n + 8) * u * mag[i] : 0.0) + 4 * u * fabs(ref) +
                         rt_out_rel(p->yt) * fabs(ref) + sub;
            ok = fabs(got - ref) <= tol;
        }
        if (!ok) {
            ++bad;
            CHECK_MSG(0, "%s %s->%s output %lld of %lld: %.9g, expected %.9g (n %lld)",
                      ck_reduce_op_name(p->op), ck_dtype_name(p->xt), ck_dtype_name(p->yt),
                      (long long)i, (long long)ycount, got, ref, (long long)n);
        }
    }
    /* y's gaps (ypad) are untouched */
    if (p->ypad)
        for (int64_t e = 1; e * ys < yext; e += 2)
            if (hy[e * ys] != 0xA5) {
                ++bad;
                CHECK_MSG(0, "y gap element %lld was written", (long long)e);
                break;
            }
    if (bad == 0)
        ++ckt_pass_;
    if (out) {
        *out = hy;
        *out_bytes = (size_t)yext;
        hy = NULL;
    }
    free(hy);
    free(val);
    free(mag);
    free(idx);
    free(hbuf);
    ck_free(dev, dx);
    ck_free(dev, dy);
    return bad;
}

static inline rt_problem rt_make(ck_dtype xt, ck_dtype yt, ck_reduce_op op, int rank,
                                 const int64_t *shape, int naxes, const int *axes)
{
    rt_problem p;
    memset(&p, 0, sizeof p);
    p.xt = xt;
    p.yt = yt;
    p.op = op;
    p.rank = rank;
    for (int d = 0; d < rank; ++d)
        p.shape[d] = shape[d];
    p.naxes = naxes;
    for (int i = 0; i < naxes; ++i)
        p.axes[i] = axes[i];
    ck_reduce_options_init(&p.opt);
    return p;
}

#endif
