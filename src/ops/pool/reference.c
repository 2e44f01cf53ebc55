/* The pooling CPU references: the definitions of ck/pool.h by direct loops, f64 sums, values
 * through ck's conversions. Shared by the tests and `ck prof pool`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ops/pool/pool_internal.h"

static double get(const void *p, ck_dtype t, int64_t i)
{
    uint64_t code = 0;
    int es = t == CK_DTYPE_F32 ? 4 : 2;
    memcpy(&code, (const char *)p + i * es, (size_t)es);
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static void put(void *p, ck_dtype t, int64_t i, double v)
{
    uint64_t code = 0;
    int es = t == CK_DTYPE_F32 ? 4 : 2;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    memcpy((char *)p + i * es, &code, (size_t)es);
}

static void put_index(void *p, int is, int64_t i, int64_t v)
{
    if (is == 4) {
        int32_t w = (int32_t)v;
        memcpy((char *)p + i * 4, &w, 4);
    } else {
        memcpy((char *)p + i * 8, &v, 8);
    }
}

static int64_t get_index(const void *p, int is, int64_t i)
{
    if (is == 4) {
        int32_t w;
        memcpy(&w, (const char *)p + i * 4, 4);
        return w;
    }
    int64_t w;
    memcpy(&w, (const char *)p + i * 8, 8);
    return w;
}

ck_status ck_pool_forward_reference(const ck_pool_problem *p, const void *x, void *y, void *indices)
{
    ck_pool_prob r;
    ck_status st = ck_pool_prob_make(p, 0, &r);
    if (st)
        return st;
    if (!x || !y || (r.is && !indices))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_pool_forward_reference: x, y (and indices) must not be NULL.");
    const int64_t C = p->c, *in = r.in, *ot = r.out;
    int64_t e = 0; /* output element, NHWC order */
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t o0 = 0; o0 < ot[0]; ++o0)
            for (int64_t o1 = 0; o1 < ot[1]; ++o1)
                for (int64_t o2 = 0; o2 < ot[2]; ++o2)
                    for (int64_t c = 0; c < C; ++c, ++e) {
                        int64_t o[3] = {o0, o1, o2}, s[3], size = 1, count = 0;
                        for (int d = 0; d < 3; ++d) {
                            s[d] = o[d] * r.str[d] - r.pad[d];
                            int64_t end = s[d] + r.ker[d];
                            size *= (end < in[d] + r.pad[d] ? end : in[d] + r.pad[d]) - s[d];
                        }
                        double best = -INFINITY, sum = 0;
                        int64_t arg = -1;
                        for (int64_t f0 = 0; f0 < r.ker[0]; ++f0)
                            for (int64_t f1 = 0; f1 < r.ker[1]; ++f1)
                                for (int64_t f2 = 0; f2 < r.ker[2]; ++f2) {
                                    int64_t f[3] = {f0, f1, f2}, i[3];
                                    int valid = 1;
                                    for (int d = 0; d < 3; ++d) {
                                        i[d] = s[d] + f[d] * r.dil[d];
                                        valid = valid && i[d] >= 0 && i[d] < in[d];
                                    }
                                    if (!valid)
                                        continue;
                                    int64_t flat = (i[0] * in[1] + i[1]) * in[2] + i[2];
                                    double v = get(x, p->dtype,
                                                   ((n * in[0] * in[1] * in[2]) + flat) * C + c);
                                    if (arg < 0)
                                        arg = flat; /* the first element in the input */
                                    if (v > best || isnan(v)) {
                                        best = v;
                                        arg = flat;
                                    }
                                    sum += v;
                                    ++count;
                                }
                        if (p->mode == CK_POOL_MAX) {
                            put(y, p->dtype, e, best);
                            if (r.is)
                                put_index(indices, r.is, e, arg);
                        } else {
                            double div = p->divisor_override > 0 ? (double)p->divisor_override
                                         : p->count_include_pad  ? (double)size
                                                                 : (double)count;
                            put(y, p->dtype, e, sum / div);
                        }
                    }
    return CK_SUCCESS;
}

ck_status ck_pool_backward_reference(const ck_pool_problem *p, const void *dy, const void *indices,
                                     void *dx)
{
    ck_pool_prob r;
    ck_status st = ck_pool_prob_make(p, 1, &r);
    if (st)
        return st;
    if (!dy || !indices || !dx)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_pool_backward_reference: dy, indices and dx must not be NULL.");
    const int64_t C = p->c, plane = r.in[0] * r.in[1] * r.in[2],
                  outs = r.out[0] * r.out[1] * r.out[2];
    double *acc = calloc((size_t)r.q.x_elems, sizeof *acc);
    if (!acc)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_pool_backward_reference: out of memory.");
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t o = 0; o < outs; ++o)
            for (int64_t c = 0; c < C; ++c) {
                int64_t e = (n * outs + o) * C + c, i = get_index(indices, r.is, e);
                if (i < 0 || i >= plane) {
                    free(acc);
                    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                                   "ck_pool_backward_reference: index %lld at output element "
                                   "%lld is outside the input plane of %lld elements.",
                                   (long long)i, (long long)e, (long long)plane);
                }
                acc[(n * plane + i) * C + c] += get(dy, p->dtype, e);
            }
    for (int64_t e = 0; e < r.q.x_elems; ++e)
        put(dx, p->dtype, e, acc[e]);
    free(acc);
    return CK_SUCCESS;
}
