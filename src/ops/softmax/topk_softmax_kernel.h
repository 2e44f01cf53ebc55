/*
 * Top-k softmax (MoE gating) in device C, one warp per token. Included by the source that
 * src/ops/softmax/topk_softmax.c generates after defining:
 *
 *   TK_TI, TK_TW   types of the logits and of the weights (ck_dtype codes: f32, f16, bf16)
 *   TK_E, TK_K     experts and k;  TK_EPL = ceil(TK_E / 32), TK_KPL = ceil(TK_K / 32)
 *   TK_RENORM      1: weights renormalized over the k selected
 *   TK_ROWS        tokens (warps) per block
 *
 * Lane l holds experts l, l + 32, ... The softmax statistics are warp reductions; each of the k
 * selections is a warp arg-max over (logit, index) with the order "NaN first, larger first,
 * lower index first", so the selection is exact (it compares logits, not rounded
 * probabilities) and every lane agrees on it.
 */
#ifndef CK_OPS_TOPK_SOFTMAX_KERNEL_H
#define CK_OPS_TOPK_SOFTMAX_KERNEL_H

#include "ops/softmax/softmax_common_kernel.h"

#define TK_WORDS ((TK_EPL + 31) / 32)

/* 1 when candidate (a, ia) ranks before (b, ib); index -1 is "no candidate". */
CK_DEVICE int tk_before(float a, int ia, float b, int ib)
{
    if (ia < 0)
        return 0;
    if (ib < 0)
        return 1;
    int an = a != a, bn = b != b;
    if (an != bn)
        return an;
    if (!an && a != b)
        return a > b;
    return ia < ib;
}

CK_DEVICE void tk_topk(int32_t *idx, void *w, const void *x, long long tokens, long long xs,
                       long long is, long long wst)
{
    const unsigned lane = ck_lane_id();
    const long long token = (long long)ck_block_idx_x() * TK_ROWS + ck_warp_id();
    if (token >= tokens)
        return; /* only warp collectives below */
    float v[TK_EPL];
    CK_UNROLL for (int j = 0; j < TK_EPL; ++j)
    {
        int e = j * 32 + (int)lane;
        v[j] = e < TK_E ? ck_load_f32(x, token * xs + e, TK_TI) : ck_neg_inf_f32();
    }
    float m = ck_neg_inf_f32();
    CK_UNROLL for (int j = 0; j < TK_EPL; ++j) m = fmaxf(m, v[j]);
    m = ck_warp_reduce_max_f32(m);
    const float mu = ck_ml_offset(m) * SMX_LOG2E;
    float l = 0.0f;
    CK_UNROLL for (int j = 0; j < TK_EPL; ++j)
    {
        if (j * 32 + (int)lane < TK_E)
            l += exp2f(fmaf(v[j], SMX_LOG2E, -mu));
    }
    l = ck_warp_reduce_add_f32(l);
    uint32_t taken[TK_WORDS];
    CK_UNROLL for (int q = 0; q < TK_WORDS; ++q) taken[q] = 0;
    float sel_p[TK_KPL];
    int32_t sel_i[TK_KPL];
    CK_UNROLL for (int q = 0; q < TK_KPL; ++q)
    {
        sel_p[q] = 0.0f;
        sel_i[q] = -1;
    }
    float s = 0.0f;
    for (int i = 0; i < TK_K; ++i) {
        float bv = 0.0f;
        int bi = -1;
        CK_UNROLL for (int j = 0; j < TK_EPL; ++j)
        {
            int e = j * 32 + (int)lane;
            if (e < TK_E && !((taken[j / 32] >> (j % 32)) & 1u) && tk_before(v[j], e, bv, bi)) {
                bv = v[j];
                bi = e;
            }
        }
        CK_UNROLL for (int off = 16; off >= 1; off /= 2)
        {
            float ov = ck_shfl_xor_f32(bv, (unsigned)off);
            int oi = ck_shfl_xor_i32(bi, (unsigned)off);
            if (tk_before(ov, oi, bv, bi)) {
                bv = ov;
                bi = oi;
            }
        }
        if ((unsigned)(bi & 31) == lane) {
            int j = bi >> 5;
            CK_UNROLL for (int q = 0; q < TK_WORDS; ++q) if (q == j / 32) taken[q] |= 1u
                                                                                      << (j % 32);
        }
        float p = exp2f(fmaf(bv, SMX_LOG2E, -mu));
        s += p;
        if ((unsigned)(i & 31) == lane) {
            CK_UNROLL for (int q = 0; q < TK_KPL; ++q) if (q == i / 32)
            {
                sel_p[q] = p;
                sel_i[q] = bi;
            }
        }
    }
#if TK_RENORM
    (void)l;
    const float c = 1.0f / s;
#else
    (void)s;
    const float c = 1.0f / l;
#endif
    CK_UNROLL for (int q = 0; q < TK_KPL; ++q)
    {
        int i = q * 32 + (int)lane;
        if (i < TK_K) {
            idx[token * is + i] = sel_i[q];
            ck_store_f32(w, token * wst + i, TK_TW, sel_p[q] * c);
        }
    }
}

#endif
