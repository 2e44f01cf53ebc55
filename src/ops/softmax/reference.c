/* CPU references of the softmax family, in double (for tests and `ck prof`). */
#include <math.h>
#include <stdlib.h>

#include "ops/softmax/softmax_internal.h"

void ck_softmax_ref_row(const double *t, int64_t n, int logsm, double *out)
{
    double m = -INFINITY;
    int bad = 0;
    for (int64_t j = 0; j < n; ++j) {
        if (isnan(t[j]) || t[j] == INFINITY)
            bad = 1;
        else if (t[j] > m)
            m = t[j];
    }
    if (bad || m == -INFINITY) {
        for (int64_t j = 0; j < n; ++j)
            out[j] = NAN;
        return;
    }
    double l = 0;
    for (int64_t j = 0; j < n; ++j)
        l += exp(t[j] - m);
    double ll = log(l);
    for (int64_t j = 0; j < n; ++j)
        out[j] = logsm ? (t[j] - m) - ll : exp(t[j] - m) / l;
}

/* 1 when (a, ia) ranks before (b, ib): NaN first, then larger, then lower index. */
static int before(double a, int64_t ia, double b, int64_t ib)
{
    int an = isnan(a), bn = isnan(b);
    if (an != bn)
        return an;
    if (!an && a != b)
        return a > b;
    return ia < ib;
}

void ck_topk_softmax_ref_row(const double *logits, int64_t n, int k, int renormalize, int32_t *idx,
                             double *w)
{
    double *prob = malloc(sizeof(double) * (size_t)n);
    char *taken = calloc((size_t)n, 1);
    if (!prob || !taken) {
        free(prob);
        free(taken);
        for (int i = 0; i < k; ++i) {
            idx[i] = -1;
            w[i] = NAN;
        }
        return;
    }
    ck_softmax_ref_row(logits, n, 0, prob);
    double sum = 0;
    for (int i = 0; i < k; ++i) {
        int64_t best = -1;
        for (int64_t j = 0; j < n; ++j)
            if (!taken[j] && (best < 0 || before(logits[j], j, logits[best], best)))
                best = j;
        taken[best] = 1;
        idx[i] = (int32_t)best;
        w[i] = prob[best];
        sum += prob[best];
    }
    if (renormalize)
        for (int i = 0; i < k; ++i)
            w[i] /= sum;
    free(prob);
    free(taken);
}
