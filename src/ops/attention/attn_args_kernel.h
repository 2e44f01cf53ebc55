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
    /* key j is visible to query i when i + lo <= j <= i + hi (and j < sk); unbounded sides
     * hold +-2^62 */
    long long lo, hi;
    float scale_log2; /* softmax scale * log2(e): scores in the exp2 domain */
    /* soft-cap: s <- cap_out * tanh(s * cap_in), cap_in = scale / softcap, cap_out = softcap /
     * scale (so that scale_log2 then applies); cap_in 0: none */
    float cap_in, cap_out;
} ck_attn_kargs;

#endif
