/*
 * Split-KV's combine kernel: block (i, h, b) merges the ka.splits parts of query row i of head h
 * from the workspace (each part's normalized O in f32 and its LSE, written by the decode
 * kernel) in a fixed order: m = max LSE_s, w_s = exp(LSE_s - m), O = sum w_s O_s / sum w_s,
 * LSE = m + log sum w_s. Rows whose parts all saw no key keep O = 0, LSE = -inf; a row whose
 * sequence had a page outside the pool (LSE NaN, O already NaN) is left as the decode kernel
 * wrote it. Included after the ATTN_* defines.
 */
#ifndef CK_OPS_ATTN_SPLITKV_COMBINE_KERNEL_H
#define CK_OPS_ATTN_SPLITKV_COMBINE_KERNEL_H

#include "ck_block_mma.h"
#include "ops/attention/attn_args_kernel.h"

CK_DEVICE void attn_combine_main(ck_attn_kargs ka)
{
    long long i = ck_block_idx_x(), h = ck_block_idx_y(), b = ck_block_idx_z();
    long long nb = ck_grid_dim_z(), part_rows = nb * ka.hq * ka.sq;
    long long row = (b * ka.hq + h) * ka.sq + i;
    const float neg_inf = ck_u32_as_f32(0xFF800000u);
    float m = neg_inf;
    int nan = 0;
    for (int s = 0; s < ka.splits; ++s) {
        float l = ka.ws_lse[s * part_rows + row];
        nan |= l != l;
        m = fmaxf(m, l);
    }
    if (nan)
        return;
    float base = m == neg_inf ? 0.0f : m, sum = 0.0f;
    for (int s = 0; s < ka.splits; ++s)
        sum += ck_exp2_ftz((ka.ws_lse[s * part_rows + row] - base) * 1.4426950408889634f);
    float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    unsigned short *out = (unsigned short *)ka.o + b * ka.o_b + h * ka.o_h + i * ka.o_s;
    for (int c = (int)ck_thread_linear(); c < ATTN_DV; c += (int)ck_block_threads()) {
        float acc = 0.0f;
        for (int s = 0; s < ka.splits; ++s) {
            float w = ck_exp2_ftz((ka.ws_lse[s * part_rows + row] - base) * 1.4426950408889634f);
            acc = fmaf(w, ka.ws_o[(s * part_rows + row) * ATTN_DV + c], acc);
        }
        out[c] = (unsigned short)(ck_pack_f32x2_b16(acc * inv, 0.0f, ATTN_BF16) & 0xFFFFu);
    }
    if (ka.lse && ck_thread_linear() == 0)
        ka.lse[row] = sum > 0.0f ? m + logf(sum) : neg_inf;
}

#endif
