/* ck_im2col's CPU reference: the definition of ck/im2col.h by direct index arithmetic (no
 * descriptor), element bits copied. */
#include <string.h>

#include "core/error.h"
#include "ops/im2col/im2col_internal.h"

ck_status ck_im2col_reference(const ck_conv_problem *p, const void *x, void *out)
{
    ck_im2col_prob r;
    ck_status st = ck_im2col_prob_make(p, &r);
    if (st)
        return st;
    if (!x || !out)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_im2col_reference: x and out must not be "
                                                  "NULL.");
    const ck_conv_prob *q = &r.q;
    const int64_t C = q->p.c, es = r.es;
    const char *xs = x;
    char *o = out;
    for (int64_t g = 0; g < q->p.g; ++g)
        for (int64_t m = 0; m < r.m; ++m) {
            int64_t n = m / (q->out[0] * q->out[1] * q->out[2]);
            int64_t ov[3] = {m / (q->out[1] * q->out[2]) % q->out[0], m / q->out[2] % q->out[1],
                             m % q->out[2]};
            for (int64_t k = 0; k < r.k; ++k) {
                int64_t c = k % C, f = k / C;
                int64_t fv[3] = {f / (q->fil[1] * q->fil[2]), f / q->fil[2] % q->fil[1],
                                 f % q->fil[2]};
                int64_t i[3];
                int in = 1;
                for (int d = 0; d < 3; ++d) {
                    i[d] = ov[d] * q->str[d] + fv[d] * q->dil[d] - q->pl[d];
                    in = in && i[d] >= 0 && i[d] < q->in[d];
                }
                char *dst = o + ((g * r.m + m) * r.k + k) * es;
                if (in)
                    memcpy(dst, xs + ck_conv_x_at(q, n, i, g, c) * es, (size_t)es);
                else
                    memset(dst, 0, (size_t)es);
            }
        }
    return CK_SUCCESS;
}
