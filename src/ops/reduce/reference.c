/*
 * The reduce CPU reference (reduce_internal.h), in double precision: the one the tests and
 * `ck prof reduce` check ck_reduce against.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/reduce.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/reduce/reduce_internal.h"

#define OP "ck_reduce"

static double load_f64(const ck_tensor *x, int64_t off)
{
    const unsigned char *b = (const unsigned char *)x->data + off * ck_reduce_in_size(x->dtype);
    uint64_t code = 0;
    memcpy(&code, b, (size_t)ck_reduce_in_size(x->dtype)); /* little-endian */
    double v = 0;
    ck_convert_to_f64(x->dtype, code, &v);
    return v;
}

ck_status ck_reduce_reference(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                              const ck_reduce_options *opt, double *val, int64_t *idx, double *mag)
{
    ck_reduce_options defaults;
    ck_reduce_options_init(&defaults);
    if (!opt)
        opt = &defaults;
    if (!x || !val || !idx || !mag)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_reduce_reference: an argument is NULL.");
    int mask[CK_REDUCE_MAX_RANK];
    ck_status st = ck_reduce_check_common(op, x, axes, naxes, opt, mask);
    if (st != CK_SUCCESS)
        return st;
    int r = x->rank;
    int64_t rows = 1, n = 1;
    for (int d = 0; d < r; ++d) {
        if (mask[d])
            n *= x->shape[d];
        else
            rows *= x->shape[d];
    }
    int64_t ki[CK_REDUCE_MAX_RANK] = {0};
    for (int64_t row = 0; row < rows; ++row) {
        int64_t base = 0, rem = row;
        for (int d = r - 1; d >= 0; --d)
            if (!mask[d]) {
                ki[d] = rem % x->shape[d];
                rem /= x->shape[d];
                base += ki[d] * x->strides[d];
            }
        int maxlike = op == CK_REDUCE_MAX || op == CK_REDUCE_ARGMAX;
        double acc = op == CK_REDUCE_MAX || op == CK_REDUCE_ARGMAX   ? -INFINITY
                     : op == CK_REDUCE_MIN || op == CK_REDUCE_ARGMIN ? INFINITY
                                                                     : 0.0;
        double m = 0;
        int64_t best = -1;
        for (int64_t j = 0; j < n; ++j) {
            int64_t off = base, q = j;
            for (int d = r - 1; d >= 0; --d)
                if (mask[d]) {
                    off += (q % x->shape[d]) * x->strides[d];
                    q /= x->shape[d];
                }
            double v = load_f64(x, off);
            if (opt->pre == CK_REDUCE_PRE_ABS)
                v = fabs(v);
            else if (opt->pre == CK_REDUCE_PRE_SQUARE)
                v = v * v;
            if (op == CK_REDUCE_SUM_SQUARES || op == CK_REDUCE_NORM2)
                v = v * v;
            switch (op) {
            case CK_REDUCE_MAX:
            case CK_REDUCE_MIN:
            case CK_REDUCE_ARGMAX:
            case CK_REDUCE_ARGMIN:
                if (isnan(acc))
                    break;
                if (isnan(v) || best < 0 || (maxlike ? v > acc : v < acc)) {
                    acc = v;
                    best = j;
                }
                break;
            default:
                acc += v;
                m += fabs(v);
            }
        }
        if (op == CK_REDUCE_MAX || op == CK_REDUCE_MIN)
            m = fabs(acc);
        if (op == CK_REDUCE_MEAN) {
            acc /= (double)n;
            m /= (double)n;
        } else if (op == CK_REDUCE_NORM2) {
            acc = sqrt(acc);
            m = sqrt(m);
        }
        if (!ck_reduce_is_arg(op)) {
            acc *= opt->scale;
            m *= fabs(opt->scale);
            if (opt->post_sqrt) {
                acc = sqrt(acc);
                m = sqrt(m);
            }
        }
        val[row] = acc;
        idx[row] = best;
        mag[row] = m;
    }
    return CK_SUCCESS;
}
