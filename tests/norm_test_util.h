/* Helpers of the norm tests: typed host buffers holding codes and their exact values. */
#ifndef CK_TESTS_NORM_TEST_UTIL_H
#define CK_TESTS_NORM_TEST_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "test.h"

static inline size_t nt_esize(ck_dtype t)
{
    return t == CK_DTYPE_F32 ? 4 : (t == CK_DTYPE_F16 || t == CK_DTYPE_BF16) ? 2 : 1;
}

static inline uint64_t nt_code(ck_dtype t, double v)
{
    uint64_t c = 0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &c);
    return c;
}

static inline double nt_value(ck_dtype t, uint64_t c)
{
    double v = 0;
    ck_convert_to_f64(t, c, &v);
    return v;
}

static inline void nt_put(void *buf, ck_dtype t, size_t i, uint64_t c)
{
    size_t e = nt_esize(t);
    memcpy((char *)buf + i * e, &c, e); /* little endian */
}

static inline uint64_t nt_get(const void *buf, ck_dtype t, size_t i)
{
    uint64_t c = 0;
    memcpy(&c, (const char *)buf + i * nt_esize(t), nt_esize(t));
    return c;
}

/* Half the spacing of t's values at |v| (0 for f32 in the tolerances that use it since f32
 * outputs carry no extra rounding beyond the kernel's own f32 arithmetic). */
static inline double nt_half_ulp(ck_dtype t, double v)
{
    int m = t == CK_DTYPE_BF16 ? 7 : t == CK_DTYPE_F16 ? 10 : 23;
    double a = fabs(v);
    if (t == CK_DTYPE_F16 && a < 6.103515625e-05)
        return ldexp(1.0, -25);
    if (a == 0)
        return 0;
    int e;
    frexp(a, &e);
    return ldexp(1.0, e - 1 - m - 1);
}

/* A device tensor [rows, n] with row stride ld of dtype t, and its host image. */
typedef struct nt_buf {
    ck_dtype t;
    int64_t rows, n, ld;
    void *host, *dev;
    ck_tensor ten;
} nt_buf;

static inline int nt_alloc(ck_context *ctx, nt_buf *b, ck_dtype t, int64_t rows, int64_t n,
                           int64_t ld, int as_vector)
{
    memset(b, 0, sizeof *b);
    b->t = t;
    b->rows = rows;
    b->n = n;
    b->ld = ld;
    size_t bytes = (size_t)((rows > 0 ? (rows - 1) * ld + n : 0) * (int64_t)nt_esize(t)) + 16;
    b->host = calloc(1, bytes);
    if (!b->host || ck_malloc(ck_context_device(ctx), bytes, &b->dev) != CK_SUCCESS)
        return 0;
    ck_memset_d8(ck_context_device(ctx), b->dev, 0xee, bytes, NULL);
    if (as_vector) {
        int64_t shape[1] = {n};
        ck_tensor_init(&b->ten, b->dev, t, 1, shape, NULL);
    } else {
        int64_t shape[2] = {rows, n}, strides[2] = {ld, 1};
        ck_tensor_init(&b->ten, b->dev, t, 2, shape, strides);
    }
    return 1;
}

static inline size_t nt_bytes(const nt_buf *b)
{
    return (size_t)((b->rows > 0 ? (b->rows - 1) * b->ld + b->n : 0) * (int64_t)nt_esize(b->t));
}

static inline void nt_upload(ck_context *ctx, nt_buf *b)
{
    CHECK_OK(ck_memcpy_h2d(ck_context_device(ctx), b->dev, b->host, nt_bytes(b), NULL));
}

static inline void nt_download(ck_context *ctx, nt_buf *b)
{
    CHECK_OK(ck_memcpy_d2h(ck_context_device(ctx), b->host, b->dev, nt_bytes(b), NULL));
}

static inline void nt_free(ck_context *ctx, nt_buf *b)
{
    if (b->dev)
        ck_free(ck_context_device(ctx), b->dev);
    free(b->host);
    memset(b, 0, sizeof *b);
}

/* Fill with uniform values in [lo, hi) rounded to the type; v receives the exact values
 * (row-major rows x n). */
static inline void nt_fill(nt_buf *b, double *v, double lo, double hi, uint64_t *rng)
{
    for (int64_t r = 0; r < b->rows; ++r)
        for (int64_t j = 0; j < b->n; ++j) {
            double u = (double)(ckt_rand64(rng) >> 11) * 0x1p-53;
            uint64_t c = nt_code(b->t, lo + (hi - lo) * u);
            nt_put(b->host, b->t, (size_t)(r * b->ld + j), c);
            v[r * b->n + j] = nt_value(b->t, c);
        }
}

static inline double nt_at(const nt_buf *b, int64_t r, int64_t j)
{
    return nt_value(b->t, nt_get(b->host, b->t, (size_t)(r * b->ld + j)));
}

#endif
