/*
 * Independent reference for the numeric conversion tests. Written differently from
 * src/core/numeric_conv.h: every finite value of a target format is enumerated in long
 * double from the format's definition (written out by hand below), sorted, and a value is
 * rounded by comparing it with its two neighbours (ties: the even code). Special codes
 * are spelled out per type from the OCP / IEEE specifications.
 */
#ifndef CK_TESTS_NUMERIC_REF_H
#define CK_TESTS_NUMERIC_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ck/types.h"

typedef struct ref_type {
    ck_dtype dtype;
    int ebits, mbits, bias;
    int code_shift;    /* tf32: codes are 19-bit values shifted left by 13 */
    uint64_t sign_bit; /* in the stored code */
    int has_inf;       /* +Inf = exponent all ones, mantissa 0 */
    int ieee_nan;      /* exponent all ones, mantissa != 0 */
    int ones_nan;      /* only S.1..1.1..1 (OCP e4m3) */
    int fnuz;          /* 0x80 is the only NaN, no -0 */
    /* filled by ref_init: */
    int n;            /* number of non-negative finite values */
    long double *val; /* ascending */
    uint64_t *code;   /* stored codes of val[] */
    long double next; /* the value after the largest, with an unbounded exponent */
} ref_type;

/* Floating-point target types, by hand from the specifications. */
static ref_type ref_types[] = {
    {CK_DTYPE_F16, 5, 10, 15, 0, 0x8000, 1, 1, 0, 0, 0, 0, 0, 0},
    {CK_DTYPE_BF16, 8, 7, 127, 0, 0x8000, 1, 1, 0, 0, 0, 0, 0, 0},
    {CK_DTYPE_TF32, 8, 10, 127, 13, 0x80000000u, 1, 1, 0, 0, 0, 0, 0, 0},
    {CK_DTYPE_FP8_E4M3, 4, 3, 7, 0, 0x80, 0, 0, 1, 0, 0, 0, 0, 0},
    {CK_DTYPE_FP8_E5M2, 5, 2, 15, 0, 0x80, 1, 1, 0, 0, 0, 0, 0, 0},
    {CK_DTYPE_FP8_E4M3_FNUZ, 4, 3, 8, 0, 0x80, 0, 0, 0, 1, 0, 0, 0, 0},
    {CK_DTYPE_FP8_E5M2_FNUZ, 5, 2, 16, 0, 0x80, 0, 0, 0, 1, 0, 0, 0, 0},
    {CK_DTYPE_FP6_E2M3, 2, 3, 1, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0},
    {CK_DTYPE_FP6_E3M2, 3, 2, 3, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0},
    {CK_DTYPE_FP4_E2M1, 2, 1, 1, 0, 0x8, 0, 0, 0, 0, 0, 0, 0, 0},
};
enum { REF_TYPE_COUNT = (int)(sizeof ref_types / sizeof ref_types[0]) };

/* Is the (unshifted) positive field pattern c a NaN or Inf of t? */
static inline int ref_is_special(const ref_type *t, uint64_t c)
{
    uint64_t emax = ((uint64_t)1 << t->ebits) - 1, mmask = ((uint64_t)1 << t->mbits) - 1;
    uint64_t ef = c >> t->mbits, mf = c & mmask;
    if ((t->has_inf || t->ieee_nan) && ef == emax)
        return 1;
    if (t->ones_nan && ef == emax && mf == mmask)
        return 1;
    return 0;
}

/* Enumerate the non-negative finite values of t (the positive half of the codes). */
static inline void ref_init(ref_type *t)
{
    uint64_t count = (uint64_t)1 << (t->ebits + t->mbits);
    if (t->val) /* already enumerated */
        return;
    t->val = (long double *)malloc(sizeof(long double) * count);
    t->code = (uint64_t *)malloc(sizeof(uint64_t) * count);
    int n = 0;
    for (uint64_t c = 0; c < count; ++c) {
        if (ref_is_special(t, c))
            continue;
        uint64_t ef = c >> t->mbits, mf = c & (((uint64_t)1 << t->mbits) - 1);
        long double v = ef == 0 ? ldexpl((long double)mf, 1 - t->bias - t->mbits)
                                : ldexpl((long double)(mf + ((uint64_t)1 << t->mbits)),
                                         (int)ef - t->bias - t->mbits);
        t->val[n] = v;
        t->code[n] = c << t->code_shift;
        ++n;
    }
    t->n = n;
    t->next = t->val[n - 1] + (t->val[n - 1] - t->val[n - 2]);
}

/* The search below needs ascending values; tests check this. */
static inline int ref_ascending(const ref_type *t)
{
    for (int i = 1; i < t->n; ++i)
        if (!(t->val[i] > t->val[i - 1]))
            return 0;
    return 1;
}

static inline void ref_free(ref_type *t)
{
    free(t->val);
    free(t->code);
    t->val = NULL;
    t->code = NULL;
}

static inline ref_type *ref_find(ck_dtype d)
{
    for (int i = 0; i < REF_TYPE_COUNT; ++i)
        if (ref_types[i].dtype == d)
            return &ref_types[i];
    return NULL;
}

static inline uint64_t ref_max_code(const ref_type *t)
{
    return t->code[t->n - 1];
}

static inline uint64_t ref_nan_code(const ref_type *t, int neg)
{
    uint64_t s = neg ? t->sign_bit : 0;
    if (t->fnuz)
        return 0x80;
    if (t->ones_nan)
        return s | 0x7F;
    if (t->ieee_nan) /* quiet NaN: exponent all ones, top mantissa bit */
        return s |
               ((((((uint64_t)1 << t->ebits) - 1) << t->mbits) | ((uint64_t)1 << (t->mbits - 1)))
                << t->code_shift);
    return ref_max_code(t); /* no NaN: +max */
}

/* Code for an overflowing magnitude of sign neg under overflow mode sat. */
static inline uint64_t ref_overflow(const ref_type *t, int neg, int sat)
{
    uint64_t s = neg ? t->sign_bit : 0;
    if (sat || (!t->has_inf && !t->ieee_nan && !t->ones_nan && !t->fnuz))
        return s | ref_max_code(t);
    if (t->has_inf)
        return s | ((((uint64_t)1 << t->ebits) - 1) << t->mbits << t->code_shift);
    return ref_nan_code(t, neg);
}

/* Index of the largest value <= a (a >= 0). */
static inline int ref_floor_index(const ref_type *t, long double a)
{
    int lo = 0, hi = t->n - 1;
    if (a >= t->val[hi])
        return hi;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (t->val[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Does the magnitude round up from val[i] to the next value (or beyond max)? */
static inline int ref_round_up(long double a, long double lo, long double hi, int lo_code_odd,
                               ck_round_mode mode, uint32_t rnd)
{
    long double mid = (lo + hi) / 2;
    if (a == lo)
        return 0;
    switch (mode) {
    case CK_ROUND_TOWARD_ZERO:
        return 0;
    case CK_ROUND_NEAREST_AWAY:
        return a >= mid;
    case CK_ROUND_STOCHASTIC:
        /* up iff rnd < floor((a-lo)/(hi-lo) * 2^32) iff (rnd+1)*(hi-lo) <= (a-lo)*2^32 */
        return ((long double)rnd + 1.0L) * (hi - lo) <= ldexpl(a - lo, 32);
    default:
        return a > mid || (a == mid && lo_code_odd);
    }
}

/* Reference rounding of x (any long double, or NaN/Inf) to t. */
static inline uint64_t ref_round_at(const ref_type *t, long double x, int floor_index,
                                    ck_round_mode mode, int sat, uint32_t rnd)
{
    int neg = signbit(x) != 0;
    uint64_t s = neg ? t->sign_bit : 0;
    long double a = fabsl(x);
    if (isnan(x))
        return ref_nan_code(t, neg);
    if (isinf(x))
        return ref_overflow(t, neg, sat);
    long double maxv = t->val[t->n - 1];
    if (a > maxv) {
        if (mode == CK_ROUND_TOWARD_ZERO)
            return s | ref_max_code(t);
        if (a >= t->next)
            return ref_overflow(t, neg, sat);
        int odd = (int)((ref_max_code(t) >> t->code_shift) & 1);
        return ref_round_up(a, maxv, t->next, odd, mode, rnd) ? ref_overflow(t, neg, sat)
                                                              : (s | ref_max_code(t));
    }
    int i = floor_index >= 0 ? floor_index : ref_floor_index(t, a);
    uint64_t c = t->code[i];
    if (a > t->val[i] && i + 1 < t->n &&
        ref_round_up(a, t->val[i], t->val[i + 1], (int)((c >> t->code_shift) & 1), mode, rnd))
        c = t->code[i + 1];
    if (c == 0 && t->fnuz)
        return 0;
    return s | c;
}

static inline uint64_t ref_round(const ref_type *t, long double x, ck_round_mode mode, int sat,
                                 uint32_t rnd)
{
    return ref_round_at(t, x, -1, mode, sat, rnd);
}

/* Reference rounding to an integer type: floorl and comparisons with the halfway point. */
static inline uint64_t ref_round_int(ck_dtype d, long double x, ck_round_mode mode, uint32_t rnd)
{
    long double lo_lim = d == CK_DTYPE_I8 ? -128.0L : d == CK_DTYPE_U8 ? 0.0L : -2147483648.0L;
    long double hi_lim = d == CK_DTYPE_I8 ? 127.0L : d == CK_DTYPE_U8 ? 255.0L : 2147483647.0L;
    int bits = d == CK_DTYPE_I32 ? 32 : 8;
    long double r;
    if (isnan(x))
        return 0;
    if (isinf(x)) {
        r = x > 0 ? hi_lim : lo_lim;
    } else {
        long double a = fabsl(x), f = floorl(a);
        r = f;
        if (a > f) {
            int odd = fmodl(f, 2.0L) != 0;
            if (a < 4.0e18L && ref_round_up(a, f, f + 1.0L, odd, mode, rnd))
                r = f + 1.0L;
        }
        if (x < 0)
            r = -r;
        if (r > hi_lim)
            r = hi_lim;
        if (r < lo_lim)
            r = lo_lim;
    }
    long long v = (long long)r;
    return (uint64_t)v & (bits == 32 ? 0xFFFFFFFFull : 0xFFull);
}

#endif
