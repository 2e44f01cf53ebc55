/*
 * The direct convolution reference (CK's reference_conv_fwd / bwd_data / bwd_weight): nested
 * loops over the mathematical definition with every product and sum in double, shared by the
 * tests and `ck prof conv`. Independent of the descriptors and the GEMM: output element by
 * output element, the input index o * stride + f * dilation - pad_left tested against the input.
 * 8-bit inputs: the sum runs over the decoded codes (exact in double), then alpha and the two
 * read tensors' scales multiply it; the written value is divided by its tensor's scale before
 * the cast (ck_conv_args).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "ops/conv/conv_internal.h"
#include "ops/gemm/gemm_internal.h"

static int bytes_of(ck_dtype t)
{
    return ck_gemm_dtype_bytes(t);
}

/* alpha times the scales of the two tensors the direction reads */
static double product_scale(const ck_conv_problem *p, const ck_conv_args *h)
{
    double s = h->alpha;
    if (p->direction != CK_CONV_BWD_DATA)
        s *= h->scale_x;
    if (p->direction != CK_CONV_BWD_WEIGHT)
        s *= h->scale_w;
    if (p->direction != CK_CONV_FWD)
        s *= h->scale_y;
    return s;
}

/* the scale of the written tensor */
static double written_scale(const ck_conv_problem *p, const ck_conv_args *h)
{
    return p->direction == CK_CONV_FWD        ? h->scale_y
           : p->direction == CK_CONV_BWD_DATA ? h->scale_x
                                              : h->scale_w;
}

static double load(const void *p, ck_dtype t, int64_t i)
{
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * bytes_of(t), (size_t)bytes_of(t));
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static void store(void *p, ck_dtype t, int64_t i, double v)
{
    uint64_t code = 0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    memcpy((char *)p + i * bytes_of(t), &code, (size_t)bytes_of(t));
}

/* Split a linear index of an [n][s0][s1][s2][g][ch] tensor. */
static void split(int64_t idx, const int64_t *sp, int64_t G, int64_t CH, int64_t *n, int64_t *s,
                  int64_t *g, int64_t *ch)
{
    *ch = idx % CH, idx /= CH;
    *g = idx % G, idx /= G;
    for (int d = 2; d >= 0; --d)
        s[d] = idx % sp[d], idx /= sp[d];
    *n = idx;
}

static double fwd_value(const ck_conv_prob *q, const ck_conv_args *h, int64_t idx, double *abs)
{
    const ck_conv_problem *p = &q->p;
    int64_t n, o[3], g, k, f[3], i[3];
    split(idx, q->out, p->g, p->k, &n, o, &g, &k);
    double sum = 0, mag = 0;
    for (f[0] = 0; f[0] < q->fil[0]; ++f[0])
        for (f[1] = 0; f[1] < q->fil[1]; ++f[1])
            for (f[2] = 0; f[2] < q->fil[2]; ++f[2]) {
                int inside = 1;
                for (int d = 0; d < 3; ++d) {
                    i[d] = o[d] * q->str[d] + f[d] * q->dil[d] - q->pl[d];
                    inside = inside && i[d] >= 0 && i[d] < q->in[d];
                }
                if (!inside)
                    continue;
                for (int64_t c = 0; c < p->c; ++c) {
                    double t = load(h->x, p->in_dtype, ck_conv_x_at(q, n, i, g, c)) *
                               load(h->w, p->wei_dtype, ck_conv_w_at(q, g, k, f, c));
                    sum += t;
                    mag += fabs(t);
                }
            }
    double sc = product_scale(p, h), v = sc * sum;
    mag *= fabs(sc);
    if (p->residual) {
        double r = load(h->residual, p->residual_dtype, idx);
        v += r, mag += fabs(r);
    }
    if (p->bias) {
        double b = load(h->bias, p->bias_dtype, g * p->k + k);
        v += b, mag += fabs(b);
    }
    if (abs)
        *abs = mag;
    return v;
}

static double bwd_data_value(const ck_conv_prob *q, const ck_conv_args *h, int64_t idx, double *abs)
{
    const ck_conv_problem *p = &q->p;
    int64_t n, i[3], g, c, f[3], o[3];
    split(idx, q->in, p->g, p->c, &n, i, &g, &c);
    double sum = 0, mag = 0;
    for (f[0] = 0; f[0] < q->fil[0]; ++f[0])
        for (f[1] = 0; f[1] < q->fil[1]; ++f[1])
            for (f[2] = 0; f[2] < q->fil[2]; ++f[2]) {
                int hit = 1;
                for (int d = 0; d < 3; ++d) {
                    int64_t t = i[d] + q->pl[d] - f[d] * q->dil[d];
                    hit = hit && t >= 0 && t % q->str[d] == 0 && t / q->str[d] < q->out[d];
                    o[d] = hit ? t / q->str[d] : 0;
                }
                if (!hit)
                    continue;
                for (int64_t k = 0; k < p->k; ++k) {
                    double t = load(h->y, p->out_dtype, ck_conv_y_at(q, n, o, g, k)) *
                               load(h->w, p->wei_dtype, ck_conv_w_at(q, g, k, f, c));
                    sum += t;
                    mag += fabs(t);
                }
            }
    double sc = product_scale(p, h);
    if (abs)
        *abs = mag * fabs(sc);
    return sc * sum;
}

static double bwd_weight_value(const ck_conv_prob *q, const ck_conv_args *h, int64_t idx,
                               double *abs)
{
    const ck_conv_problem *p = &q->p;
    int64_t g, k, f[3], c, o[3], i[3], rest = idx;
    c = rest % p->c, rest /= p->c;
    for (int d = 2; d >= 0; --d)
        f[d] = rest % q->fil[d], rest /= q->fil[d];
    k = rest % p->k, g = rest / p->k;
    double sum = 0, mag = 0;
    for (int64_t n = 0; n < p->n; ++n)
        for (o[0] = 0; o[0] < q->out[0]; ++o[0])
            for (o[1] = 0; o[1] < q->out[1]; ++o[1])
                for (o[2] = 0; o[2] < q->out[2]; ++o[2]) {
                    int inside = 1;
                    for (int d = 0; d < 3; ++d) {
                        i[d] = o[d] * q->str[d] + f[d] * q->dil[d] - q->pl[d];
                        inside = inside && i[d] >= 0 && i[d] < q->in[d];
                    }
                    if (!inside)
                        continue;
                    double t = load(h->y, p->out_dtype, ck_conv_y_at(q, n, o, g, k)) *
                               load(h->x, p->in_dtype, ck_conv_x_at(q, n, i, g, c));
                    sum += t;
                    mag += fabs(t);
                }
    double sc = product_scale(p, h);
    if (abs)
        *abs = mag * fabs(sc);
    return sc * sum;
}

double ck_conv_reference_value(const ck_conv_problem *problem, const ck_conv_args *host,
                               int64_t index, double *abs_terms)
{
    ck_conv_prob q;
    if (ck_conv_prob_make(problem, &q) != CK_SUCCESS) {
        ck_clear_error();
        return NAN;
    }
    switch (q.p.direction) {
    case CK_CONV_FWD:
        return fwd_value(&q, host, index, abs_terms);
    case CK_CONV_BWD_DATA:
        return bwd_data_value(&q, host, index, abs_terms);
    default:
        return bwd_weight_value(&q, host, index, abs_terms);
    }
}

ck_status ck_conv_reference(const ck_conv_problem *problem, const ck_conv_args *host)
{
    if (!problem || !host)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_conv_reference: NULL argument.");
    ck_conv_prob q;
    ck_status st = ck_conv_prob_make(problem, &q);
    if (st)
        return st;
    const ck_conv_problem *p = &q.p;
    double inv = 1.0 / written_scale(p, host);
    if (!host->x || !host->w || !host->y || (p->bias && !host->bias) ||
        (p->residual && !host->residual))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_conv_reference: x, w, y (and bias, residual where the problem has "
                       "them) must not be NULL.");
    if (p->direction == CK_CONV_FWD) {
        for (int64_t e = 0; e < q.y_elems; ++e)
            store(host->y, p->out_dtype, e,
                  ck_gemm_act_f64(p->activation, fwd_value(&q, host, e, NULL)) * inv);
    } else if (p->direction == CK_CONV_BWD_DATA) {
        for (int64_t e = 0; e < q.x_elems; ++e)
            store(host->x, p->in_dtype, e, bwd_data_value(&q, host, e, NULL) * inv);
    } else {
        for (int64_t e = 0; e < q.w_elems; ++e)
            store(host->w, p->wei_dtype, e, bwd_weight_value(&q, host, e, NULL) * inv);
    }
    return CK_SUCCESS;
}
