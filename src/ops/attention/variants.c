/*
 * The attention variants on the host: the problem's checks of the bias, ALiBi, paged K / V and
 * dropout fields (every refusal a sentence), the execute-time checks of their pointers, their
 * kernel arguments, and the dropout RNG (Philox4x32-10) for the reference.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/attention/attn_internal.h"

#define OP "ck_attention"

static int bias_on(const ck_attn_bias *b)
{
    return b->dims[0] || b->dims[1] || b->dims[2] || b->dims[3];
}

int ck_attn_bias_code(const ck_attn_prob *prob)
{
    const ck_attn_bias *b = &prob->p.var.bias;
    if (!bias_on(b))
        return 0;
    return b->dtype == CK_DTYPE_F32 ? 1 : b->dtype == CK_DTYPE_BF16 ? 2 : 3;
}

static ck_status check_bias(ck_attention_problem *p)
{
    ck_attn_bias *b = &p->var.bias;
    if (!bias_on(b))
        return CK_SUCCESS;
    if (b->dtype != CK_DTYPE_F32 && b->dtype != CK_DTYPE_BF16 && b->dtype != CK_DTYPE_F16)
        return ck_fail(CK_ERROR_UNSUPPORTED, OP ": bias dtype %s; accepted: f32, bf16 or f16.",
                       ck_dtype_name(b->dtype));
    if (p->varlen)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": a bias with varlen sequences is not supported (its s_q and s_k "
                          "dims would have to cover every sequence, which the host cannot "
                          "check).");
    int64_t full[4] = {p->b, p->h_q, p->s_q, p->s_k};
    static const char *names[4] = {"b", "h_q", "s_q", "s_k"};
    for (int x = 0; x < 4; ++x)
        if (b->dims[x] != 1 && b->dims[x] != full[x])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": bias dims [%lld, %lld, %lld, %lld] do not broadcast over [b, "
                              "h_q, s_q, s_k] = [%lld, %lld, %lld, %lld]: dim %d (%s) must be 1 "
                              "or %lld.",
                           (long long)b->dims[0], (long long)b->dims[1], (long long)b->dims[2],
                           (long long)b->dims[3], (long long)full[0], (long long)full[1],
                           (long long)full[2], (long long)full[3], x, names[x], (long long)full[x]);
    if (!b->strides[0] && !b->strides[1] && !b->strides[2] && !b->strides[3]) {
        int64_t st = 1;
        for (int x = 3; x >= 0; --x) {
            b->strides[x] = st;
            st *= b->dims[x];
        }
    }
    for (int x = 0; x < 4; ++x) {
        if (b->strides[x] < 0 || b->strides[x] > (1LL << 40))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           OP ": bias stride %lld of dim %d (%s); accepted: 0 .. 2^40.",
                           (long long)b->strides[x], x, names[x]);
        if (b->dims[x] == 1)
            b->strides[x] = 0;
    }
    return CK_SUCCESS;
}

static ck_status check_paged(const ck_attention_problem *given, ck_attention_problem *p)
{
    ck_attn_variants *v = &p->var;
    if (v->page_size == 0)
        return CK_SUCCESS;
    if (v->page_size < 16 || v->page_size % 16 || v->page_size > (1 << 20))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": page_size = %lld; accepted: a multiple of 16 from 16 to 2^20.",
                       (long long)v->page_size);
    if (p->varlen)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": paged K / V with varlen queries is not supported; give the keys' "
                          "lengths through seqlens_k and fixed-length queries.");
    if (v->num_pages < 1 || v->num_pages > (1LL << 31) - 1 || v->max_pages < 1 ||
        v->max_pages > (1LL << 31) - 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": num_pages = %lld, max_pages = %lld; accepted with paged K / V: "
                          "1 .. 2^31 - 1 each.",
                       (long long)v->num_pages, (long long)v->max_pages);
    if (v->max_pages * v->page_size < p->s_k)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": s_k = %lld keys do not fit in max_pages = %lld pages of %lld rows "
                          "(the block table's row).",
                       (long long)p->s_k, (long long)v->max_pages, (long long)v->page_size);
    /* packed pools: [num_pages, page_size, h_k, d] */
    if (!given->k.batch && !given->k.seq && !given->k.head)
        p->k.batch = v->page_size * p->h_k * p->d;
    if (!given->v.batch && !given->v.seq && !given->v.head)
        p->v.batch = v->page_size * p->h_k * p->d_v;
    return CK_SUCCESS;
}

ck_status ck_attn_variants_check(const ck_attention_problem *given, ck_attention_problem *p)
{
    ck_status st;
    if ((st = check_bias(p)) || (st = check_paged(given, p)))
        return st;
    if (p->var.alibi != 0 && p->var.alibi != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": alibi = %d; accepted: 0 or 1.",
                       p->var.alibi);
    if (!(p->var.dropout_p >= 0.0f && p->var.dropout_p < 1.0f))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": dropout_p = %g; accepted: 0 <= p < 1.",
                       (double)p->var.dropout_p);
    return CK_SUCCESS;
}

static ck_status need(const char *name, const void *ptr, unsigned align)
{
    if (!ptr)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_attention_plan_execute: pointer %s is NULL, which the problem "
                       "needs.",
                       name);
    if ((uintptr_t)ptr % align)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_attention_plan_execute: pointer %s = %p is not %u-byte aligned.", name,
                       ptr, align);
    return CK_SUCCESS;
}

ck_status ck_attn_variants_args(const ck_attn_prob *prob, const ck_attention_args *args,
                                ck_attn_kargs *ka)
{
    const ck_attention_problem *p = &prob->p;
    const ck_attn_variants *v = &p->var;
    ck_status st;
    if (ck_attn_bias_code(prob)) {
        if ((st = need("bias", args->bias, v->bias.dtype == CK_DTYPE_F32 ? 4 : 2)))
            return st;
        ka->bias = args->bias;
        ka->bias_b = v->bias.strides[0], ka->bias_h = v->bias.strides[1];
        ka->bias_q = v->bias.strides[2], ka->bias_k = v->bias.strides[3];
    }
    if (v->alibi) {
        if ((st = need("alibi_slopes", args->alibi_slopes, 4)))
            return st;
        ka->alibi = args->alibi_slopes;
    }
    if (v->page_size) {
        if ((st = need("block_table", args->block_table, 4)) ||
            (args->seqlens_k && (st = need("seqlens_k", args->seqlens_k, 4))))
            return st;
        ka->table = args->block_table, ka->seqlens_k = args->seqlens_k;
        ka->page = v->page_size, ka->max_pages = v->max_pages, ka->num_pages = v->num_pages;
    }
    if (v->dropout_p > 0.0f) {
        ka->drop_thresh = ck_attn_dropout_threshold(v->dropout_p);
        ka->drop_scale = (float)(1.0 / (1.0 - (double)v->dropout_p));
        ka->seed_lo = (unsigned)args->dropout_seed;
        ka->seed_hi = (unsigned)(args->dropout_seed >> 32);
        ka->offset_lo = (unsigned)args->dropout_offset;
        ka->offset_hi = (unsigned)(args->dropout_offset >> 32);
        ka->dmask = args->dropout_mask;
        ka->mask_sq = p->s_q, ka->mask_sk = p->s_k;
    }
    return CK_SUCCESS;
}

typedef struct extent {
    uintptr_t lo, hi;
    const char *name;
} extent;

static extent extent_of(const void *ptr, size_t bytes, const char *name)
{
    extent e = {(uintptr_t)ptr, ptr ? (uintptr_t)ptr + bytes : (uintptr_t)ptr, name};
    return e;
}

static int meet(extent a, extent b)
{
    return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}

ck_status ck_attn_variants_disjoint(const ck_attn_prob *prob, const ck_attention_args *args,
                                    const void *const *ptr, const size_t *bytes,
                                    const char *const *names, int n, int outputs)
{
    const ck_attention_problem *p = &prob->p;
    const ck_attn_variants *v = &p->var;
    size_t bias = 0;
    if (ck_attn_bias_code(prob)) {
        int64_t last = 0;
        for (int x = 0; x < 4; ++x)
            last += (v->bias.dims[x] - 1) * v->bias.strides[x];
        bias = (size_t)(last + 1) * (v->bias.dtype == CK_DTYPE_F32 ? 4 : 2);
    }
    extent in[4] = {
        extent_of(ck_attn_bias_code(prob) ? args->bias : NULL, bias, "bias"),
        extent_of(v->alibi ? args->alibi_slopes : NULL, (size_t)p->h_q * 4, "alibi_slopes"),
        extent_of(v->page_size ? args->block_table : NULL, (size_t)(p->b * v->max_pages) * 4,
                  "block_table"),
        extent_of(v->page_size ? args->seqlens_k : NULL, (size_t)p->b * 4, "seqlens_k")};
    extent mask = extent_of(v->dropout_p > 0.0f ? args->dropout_mask : NULL,
                            (size_t)(p->b * p->h_q * p->s_q * p->s_k), "dropout_mask");
    for (int i = 0; i < n + 4; ++i) { /* the mask against everything */
        extent e = i < n ? extent_of(ptr[i], bytes[i], names[i]) : in[i - n];
        if (meet(mask, e))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_attention_plan_execute: dropout_mask overlaps %s; an output must "
                           "not share memory with the inputs or other outputs.",
                           e.name);
    }
    for (int i = n - outputs; i < n; ++i) /* the outputs against the variants' inputs */
        for (int j = 0; j < 4; ++j)
            if (meet(extent_of(ptr[i], bytes[i], names[i]), in[j]))
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "ck_attention_plan_execute: %s overlaps %s; the outputs must not "
                               "share memory with the inputs.",
                               names[i], in[j].name);
    return CK_SUCCESS;
}

unsigned ck_attn_dropout_threshold(float p)
{
    double t = floor((double)p * 4294967296.0);
    return t >= 4294967295.0 ? 4294967295u : (unsigned)t;
}

void ck_attn_philox4x32(uint32_t ctr[4], uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; ++r) {
        uint64_t p0 = (uint64_t)0xD2511F53u * ctr[0], p1 = (uint64_t)0xCD9E8D57u * ctr[2];
        uint32_t c0 = (uint32_t)(p1 >> 32) ^ ctr[1] ^ k0;
        uint32_t c2 = (uint32_t)(p0 >> 32) ^ ctr[3] ^ k1;
        ctr[0] = c0, ctr[1] = (uint32_t)p1, ctr[2] = c2, ctr[3] = (uint32_t)p0;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
}

int ck_attn_dropout_keep(const ck_attn_prob *prob, uint64_t seed, uint64_t offset, int64_t b,
                         int64_t h, int64_t i, int64_t j)
{
    uint32_t c[4] = {(uint32_t)(j >> 2), (uint32_t)i, (uint32_t)(b * prob->p.h_q + h),
                     (uint32_t)offset};
    ck_attn_philox4x32(c, (uint32_t)seed, (uint32_t)(seed >> 32) ^ (uint32_t)(offset >> 32));
    return c[j & 3] >= ck_attn_dropout_threshold(prob->p.var.dropout_p);
}
