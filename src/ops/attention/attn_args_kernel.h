/*
 * The attention kernels' argument struct, one definition for the host (the .c files of
 * src/ops/attention) and the device pipelines (*_pipeline_kernel.h): passed by value as the
 * kernel's parameter.
 */
#ifndef CK_OPS_ATTN_ARGS_KERNEL_H
#define CK_OPS_ATTN_ARGS_KERNEL_H

typedef struct ck_attn_kargs {
    const void *q, *k, *v;
    void *o;
    float *lse; /* NULL: no LSE; else f32 [b, h_q, s_q] packed */
    long long sq, sk;
    int hq, group; /* query heads; query heads per key/value head (h_q / h_k) */
    /* element strides (batch, seq, head) of each tensor */
    long long q_b, q_s, q_h, k_b, k_s, k_h, v_b, v_s, v_h, o_b, o_s, o_h;
    /* the mask as a window (left, right; -1 unbounded), aligned bottom-right or top-left: key
     * j is visible to query i when i + lo <= j <= i + hi (and j < sk), lo = off - left,
     * hi = off + right, off = sk - sq (bottom-right) or 0, per sequence */
    long long left, right;
    int bottom_right;
    long long lo, hi; /* the band of the block's sequence: set by the kernel from the above */
    /* varlen: sequence b is rows cu_q[b] .. cu_q[b + 1] - 1 of Q and O (cu_k: of K and V),
     * offsets clamped to [0, total_q] ([0, total_k]); NULL: fixed lengths sq, sk */
    const int *cu_q, *cu_k;
    long long total_q, total_k;
    float scale_log2; /* softmax scale * log2(e): scores in the exp2 domain */
    /* soft-cap: s <- cap_out * tanh(s * cap_in), cap_in = scale / softcap, cap_out = softcap /
     * scale (so that scale_log2 then applies); cap_in 0: none */
    float cap_in, cap_out;
    long long batches; /* b (the sm90 kernel's persistent walk over (query tile, head, batch)) */
    /* the sm90 kernel's lpt order (ATTN_ORDER 2): the work counter (zero at the launch) and the
     * L2 section, in (query head, batch) pairs */
    int *sched;
    long long sect;
    /* ---- variants (attn_variants_kernel.h) ---- */
    const void *bias;                         /* the additive bias (ATTN_BIAS: its type), or NULL */
    long long bias_b, bias_h, bias_q, bias_k; /* its element strides (0 along broadcast dims) */
    const float *alibi;                       /* ALiBi slopes [h_q] (ATTN_ALIBI) */
    float inv_scale;                          /* 1 / scale: bias and ALiBi in the units of Q K^T */
    /* paged K / V (ATTN_PAGED): key j of sequence b is row j % page of page
     * table[b * max_pages + j / page]; k_b and v_b step pages; seqlens_k[b] keys (NULL: sk) */
    const int *table, *seqlens_k;
    long long page, max_pages, num_pages;
    /* dropout (ATTN_DROPOUT): P_ij kept when the Philox word of (b, h, i, j) >= drop_thresh,
     * then scaled by drop_scale; dmask (or NULL): uint8 [b, hq, mask_sq, mask_sk] */
    unsigned drop_thresh, seed_lo, seed_hi, offset_lo, offset_hi;
    float drop_scale;
    unsigned char *dmask;
    long long mask_sq, mask_sk;
    /* split-KV (the decode kernel): part s of the keys writes O (f32, normalized) to
     * ws_o[((s * b + batch) * hq + h) * sq + i][0 .. dv) and its LSE to ws_lse[same row] */
    float *ws_o, *ws_lse;
    int splits;
    int batch, head; /* the block's batch and query head (set by the kernel) */
    /* fp8 e4m3 inputs (the sm90 kernel's ATTN_FP8): v is V^T in the plan's workspace, [b, h_k,
     * d_v, vt_keys] with the keys of each 32 in the order of the P fragment (sm90_fp8.c); the
     * descales (NULL: 1) at descale_b * batch + descale_h * kv head; the tile's scores' scale
     * (scale_log2 dq dk), soft-cap factor (cap_in dq dk) and O's factor (dv), set by the kernel */
    const float *descale_q, *descale_k, *descale_v;
    long long descale_b, descale_h, vt_keys;
    float t_scale_log2, t_cap_in, t_o_scale;
} ck_attn_kargs;

#endif
