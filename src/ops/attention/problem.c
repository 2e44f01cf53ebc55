/*
 * Attention problem (what): argument checks with a sentence for every refusal, strides
 * resolved, the mask turned into the visible band of keys i + lo <= j <= i + hi.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/attention/attn_internal.h"

#define OP "ck_attention"

void ck_attention_problem_init(ck_attention_problem *p)
{
    memset(p, 0, sizeof *p);
    p->dtype = CK_DTYPE_BF16;
    p->mask = CK_ATTN_MASK_NONE;
    p->align = CK_ATTN_TOP_LEFT;
}

void ck_attention_args_init(ck_attention_args *args)
{
    memset(args, 0, sizeof *args);
}

static int head_dim_ok(int64_t d)
{
    return d == 32 || d == 64 || d == 96 || d == 128 || d == 192 || d == 256;
}

int64_t ck_attn_span(const ck_attn_strides *st, int64_t b, int64_t s, int64_t h, int64_t d)
{
    if (b == 0 || s == 0 || h == 0)
        return 0;
    return (b - 1) * st->batch + (s - 1) * st->seq + (h - 1) * st->head + d;
}

/* Resolve a tensor's strides (all 0: packed BSHD) and check them: non-negative, and no two
 * (batch, seq, head) positions of an output sharing elements is checked by the caller. */
static ck_status strides(const char *name, ck_attn_strides *st, int64_t s, int64_t h, int64_t d,
                         int varlen)
{
    if (st->batch == 0 && st->seq == 0 && st->head == 0) {
        st->head = d;
        st->seq = h * d;
        st->batch = varlen ? 0 : s * h * d;
        return CK_SUCCESS;
    }
    if (varlen && st->batch != 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %s batch stride %lld with varlen; the sequences are packed along "
                          "the sequence dim: the batch stride must be 0.",
                       name, (long long)st->batch);
    if (st->batch < 0 || st->seq < 0 || st->head < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %s strides (batch %lld, seq %lld, head %lld) must not be negative.",
                       name, (long long)st->batch, (long long)st->seq, (long long)st->head);
    if (st->batch > (1LL << 40) || st->seq > (1LL << 40) || st->head > (1LL << 40))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": %s strides (batch %lld, seq %lld, head %lld) exceed 2^40 elements.",
                       name, (long long)st->batch, (long long)st->seq, (long long)st->head);
    return CK_SUCCESS;
}

/* O must not have two positions on one element: with its strides sorted, each one at least
 * the extent of the dims inside it. */
static ck_status output_distinct(const ck_attn_strides *st, int64_t b, int64_t s, int64_t h,
                                 int64_t d)
{
    int64_t len[3] = {b, s, h}, str[3] = {st->batch, st->seq, st->head};
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 3; ++i) /* ascending stride */
        for (int j = i + 1; j < 3; ++j)
            if (str[order[j]] < str[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    int64_t extent = d;
    for (int i = 0; i < 3; ++i) {
        int x = order[i];
        if (len[x] <= 1)
            continue;
        if (str[x] < extent)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": the strides of o (batch %lld, seq %lld, head %lld) make two "
                              "output rows share elements; each stride must be at least the "
                              "extent of the dims inside it.",
                           (long long)st->batch, (long long)st->seq, (long long)st->head);
        extent = str[x] * (len[x] - 1) + extent;
    }
    return CK_SUCCESS;
}

/* What fp8 e4m3 inputs take (the sm90 kernel's fp8 path only), and the descales' layout. */
static ck_status fp8_check(const ck_attention_problem *p)
{
    if (p->descale != CK_ATTN_DESCALE_TENSOR && p->descale != CK_ATTN_DESCALE_HEAD)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": descale = %d; accepted: CK_ATTN_DESCALE_TENSOR (0) or "
                          "CK_ATTN_DESCALE_HEAD (1).",
                       (int)p->descale);
    if (p->dtype != CK_DTYPE_FP8_E4M3) {
        if (p->descale != CK_ATTN_DESCALE_TENSOR)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": descale = %d with %s inputs; descales are for fp8e4m3.",
                           (int)p->descale, ck_dtype_name(p->dtype));
        return CK_SUCCESS;
    }
    const int64_t *bd = p->var.bias.dims;
    const char *no = p->varlen                          ? "variable-length batches"
                     : bd[0] || bd[1] || bd[2] || bd[3] ? "a bias"
                     : p->var.alibi                     ? "ALiBi"
                     : p->var.page_size                 ? "paged K / V"
                     : p->var.dropout_p > 0.0f          ? "dropout"
                                                        : NULL;
    if (no)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": fp8e4m3 inputs run on the sm90 kernel only, which does not take %s "
                          "(bf16 and f16 do).",
                       no);
    int64_t dims[2] = {p->d, p->d_v};
    for (int i = 0; i < 2; ++i)
        if (dims[i] != 64 && dims[i] != 128 && dims[i] != 256)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           OP ": fp8e4m3 takes head dims 64, 128 or 256 (e4m3 wgmma's N and "
                              "whole swizzle lines); %s = %lld.",
                           i ? "d_v" : "d", (long long)dims[i]);
    return CK_SUCCESS;
}

ck_status ck_attn_prob_make(const ck_attention_problem *problem, ck_attn_prob *prob)
{
    if (!problem || !prob)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": problem must not be NULL.");
    memset(prob, 0, sizeof *prob);
    ck_attention_problem p = *problem;
    if (p.dtype != CK_DTYPE_BF16 && p.dtype != CK_DTYPE_F16 && p.dtype != CK_DTYPE_FP8_E4M3)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": dtype %s is not supported; accepted: bf16 or f16 (Q, K, V and O "
                          "share it), or fp8e4m3 (Q, K, V; O bf16).",
                       ck_dtype_name(p.dtype));
    if (p.b < 0 || p.s_q < 0 || p.s_k < 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": b = %lld, s_q = %lld, s_k = %lld; accepted: sizes >= 0.",
                       (long long)p.b, (long long)p.s_q, (long long)p.s_k);
    if (p.h_q < 1 || p.h_k < 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": h_q = %lld, h_k = %lld; accepted: head counts >= 1.", (long long)p.h_q,
                       (long long)p.h_k);
    if (p.h_q % p.h_k)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": h_q = %lld is not a multiple of h_k = %lld; each key/value head "
                          "serves h_q / h_k query heads (MHA: equal, MQA: h_k = 1).",
                       (long long)p.h_q, (long long)p.h_k);
    if (!head_dim_ok(p.d) || !head_dim_ok(p.d_v))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": head dims d = %lld, d_v = %lld; accepted: each of 32, 64, 96, 128, "
                          "192, 256.",
                       (long long)p.d, (long long)p.d_v);
    if (p.b > 65535 || p.h_q > 65535 || p.s_q > (1LL << 31) - 256 || p.s_k > (1LL << 40))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": b = %lld, h_q = %lld, s_q = %lld, s_k = %lld out of range; "
                          "accepted: b, h_q <= 65535, s_q < 2^31 - 256, s_k <= 2^40.",
                       (long long)p.b, (long long)p.h_q, (long long)p.s_q, (long long)p.s_k);
    if (p.varlen != 0 && p.varlen != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": varlen = %d; accepted: 0 or 1.", p.varlen);
    if (p.varlen && (p.total_q < 0 || p.total_k < 0 || p.total_q > (1LL << 31) - 1 ||
                     p.total_k > (1LL << 31) - 1))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": total_q = %lld, total_k = %lld; accepted with varlen: 0 .. 2^31 - 1 "
                          "(the offsets are int32).",
                       (long long)p.total_q, (long long)p.total_k);
    if (!p.varlen)
        p.total_q = p.total_k = 0;
    ck_status st;
    if ((st = strides("q", &p.q, p.s_q, p.h_q, p.d, p.varlen)) ||
        (st = strides("k", &p.k, p.s_k, p.h_k, p.d, p.varlen)) ||
        (st = strides("v", &p.v, p.s_k, p.h_k, p.d_v, p.varlen)) ||
        (st = strides("o", &p.o, p.s_q, p.h_q, p.d_v, p.varlen)))
        return st;
    if ((st = p.varlen ? output_distinct(&p.o, 1, p.total_q, p.h_q, p.d_v)
                       : output_distinct(&p.o, p.b, p.s_q, p.h_q, p.d_v)))
        return st;
    if (p.align != CK_ATTN_TOP_LEFT && p.align != CK_ATTN_BOTTOM_RIGHT)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": align = %d; accepted: CK_ATTN_TOP_LEFT (0) or CK_ATTN_BOTTOM_RIGHT "
                          "(1).",
                       (int)p.align);
    switch (p.mask) {
    case CK_ATTN_MASK_NONE:
        prob->left = prob->right = -1;
        break;
    case CK_ATTN_MASK_CAUSAL:
        prob->left = -1, prob->right = 0;
        break;
    case CK_ATTN_MASK_WINDOW:
        if (p.window_left < -1 || p.window_right < -1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": window (left %lld, right %lld); accepted: sizes >= 0, or -1 for "
                              "unbounded on that side.",
                           (long long)p.window_left, (long long)p.window_right);
        if (p.window_left > (1LL << 40) || p.window_right > (1LL << 40))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": window (left %lld, right %lld); accepted: sizes up to 2^40.",
                           (long long)p.window_left, (long long)p.window_right);
        prob->left = p.window_left, prob->right = p.window_right;
        break;
    default:
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": mask = %d; accepted: CK_ATTN_MASK_NONE, CK_ATTN_MASK_CAUSAL or "
                          "CK_ATTN_MASK_WINDOW.",
                       (int)p.mask);
    }
    if (!(p.softcap >= 0.0f) || !isfinite(p.softcap))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": softcap = %g; accepted: 0 (none) or a positive finite number.",
                       (double)p.softcap);
    if (p.lse != 0 && p.lse != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": lse = %d; accepted: 0 or 1.", p.lse);
    if ((st = ck_attn_variants_check(problem, &p)) || (st = fp8_check(&p)))
        return st;
    prob->p = p;
    ck_attn_band(prob, p.s_q, p.s_k, &prob->lo, &prob->hi);
    return CK_SUCCESS;
}

void ck_attn_band(const ck_attn_prob *prob, int64_t sq, int64_t sk, int64_t *lo, int64_t *hi)
{
    int64_t off = prob->p.align == CK_ATTN_BOTTOM_RIGHT ? sk - sq : 0;
    *lo = prob->left < 0 ? -CK_ATTN_UNBOUNDED : off - prob->left;
    *hi = prob->right < 0 ? CK_ATTN_UNBOUNDED : off + prob->right;
}

void ck_attn_seq(const ck_attn_prob *prob, const int32_t *cu, int64_t total, int64_t fixed,
                 int64_t b, int64_t *len, int64_t *first)
{
    if (!prob->p.varlen) {
        *len = fixed, *first = 0;
        return;
    }
    int64_t a = cu[b] < 0 ? 0 : cu[b] > total ? total : cu[b];
    int64_t e = cu[b + 1] < 0 ? 0 : cu[b + 1] > total ? total : cu[b + 1];
    *first = a, *len = e > a ? e - a : 0;
}

double ck_attn_scale(const ck_attn_prob *prob, float scale)
{
    return scale == 0.0f ? 1.0 / sqrt((double)prob->p.d) : (double)scale;
}
