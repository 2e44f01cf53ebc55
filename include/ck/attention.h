/*
 * ck/attention.h - fused multi-head attention forward (CK's fmha_fwd: problem, policy, pipeline,
 * kernel), FlashAttention-2 style: the score matrix is never written.
 *
 *     S   = scale * Q K^T                       per (batch, query head), s_q x s_k
 *     S   = softcap * tanh(S / softcap)          with a logit soft-cap (optional)
 *     S   = -inf where the mask hides (i, j)
 *     O   = softmax(S) V                        softmax along j, in f32
 *     LSE = log(sum_j exp(S_ij))                natural log, f32 (optional)
 *
 * Q [b, s_q, h_q, d], K [b, s_k, h_k, d], V [b, s_k, h_k, d_v], O [b, s_q, h_q, d_v], each with
 * any element strides for its batch, sequence and head dims and a contiguous last dim (BSHD and
 * BHSD are both just strides). Query head h reads key/value head h / (h_q / h_k): MHA (h_k =
 * h_q), GQA (h_q a multiple of h_k) and MQA (h_k = 1). Q, K, V and O are bf16 or f16 (one type);
 * products and the softmax accumulate in f32; P is rounded to the input type before P V (as
 * every tensor-core attention does). LSE is f32 [b, h_q, s_q], packed.
 *
 * Masks: a key j is visible to query i when lo <= j - i - off <= hi, with off = 0 for
 * top-left alignment and off = s_k - s_q for bottom-right alignment (the last query sees the
 * last key, as with a KV cache):
 *     CK_ATTN_MASK_NONE     every key
 *     CK_ATTN_MASK_CAUSAL   lo = -inf, hi = 0
 *     CK_ATTN_MASK_WINDOW   lo = -window_left, hi = window_right (-1: unbounded on that side)
 * A query row that sees no key (e.g. bottom-right causal with s_q > s_k, or s_k = 0) gets
 * O = 0 and LSE = -inf, never NaN.
 *
 * Variable-length batches (CK's group mode, problem.varlen = 1): the b sequences are packed
 * one after another without padding, Q and O [total_q, h, d], K and V [total_k, h, d];
 * sequence i holds rows cu_seqlens_q[i] .. cu_seqlens_q[i + 1] - 1 of Q (and O) and rows
 * cu_seqlens_k[i] .. of K and V (int32 device arrays of b + 1 non-decreasing offsets, clamped
 * to [0, total]). Masks and alignment apply per sequence with its own s_q and s_k. LSE is then
 * f32 [h_q, total_q]. s_q and s_k give the longest sequences (they size the grid; a longer
 * one is still computed in full).
 *
 * fp8 (problem.dtype = CK_DTYPE_FP8_E4M3): Q, K and V hold OCP e4m3 codes scaled by descales
 * (args.descale_q / _k / _v: f32 device pointers, NULL meaning 1; one value each, or with
 * problem.descale = CK_ATTN_DESCALE_HEAD an f32 [b, h_k] array each, FlashAttention-3's layout):
 *     S = scale * (dq Q)(dk K)^T,   O = softmax(S) (dv V)   (O bf16, LSE f32 as above)
 * computed on the sm90 kernel only (sm_90a and the emulator): S = Q K^T with e4m3 wgmma, P
 * rounded to e4m3 for P V (relative error up to 2^-4 per term: docs/ops-attention.md gives the
 * tolerance), V read through V^T, which the plan writes into its own device workspace at every
 * execute (b h_k d_v ceil(s_k / 32) bytes; a memory-bound pass over V). Head dims 64, 128, 256
 * (d_v the same list); masks, GQA, the soft-cap and LSE as for bf16; not: varlen, bias, ALiBi,
 * paged K / V, dropout, s_q <= 16 decode (the plan refuses each with a sentence).
 *
 * Variants (docs/ops-attention.md):
 *   bias     an additive tensor broadcastable over [b, h_q, s_q, s_k] (problem.bias: dims each
 *            1 or the full size, element strides; f32, bf16 or f16), added to the scores after
 *            the soft-cap: S = softcap(scale Q K^T) + bias + alibi, then the mask.
 *   alibi    per-head slopes (f32 [h_q], args.alibi_slopes): S_ij -= slope_h |j - i - off|,
 *            off the mask's alignment offset (0 top-left, s_k - s_q bottom-right).
 *   paged    K and V in pools [num_pages, page_size, h_k, d] (the batch stride steps pages),
 *            sequence b's key j in page block_table[b][j / page_size] (int32 [b, max_pages],
 *            device), row j % page_size; seqlens_k[b] keys (int32 [b], device; NULL: s_k),
 *            clamped to [0, s_k], s_k <= max_pages * page_size, page_size >= 16. A page index outside
 *            [0, num_pages) among the pages of a sequence's keys makes every O and LSE of that
 *            batch NaN (never an out-of-bounds read).
 *   dropout  problem.dropout_p in [0, 1): P_ij kept (scaled by 1 / (1 - p)) when the Philox
 *            word of (b, h, i, j) (args.dropout_seed, dropout_offset; docs) is >= p 2^32;
 *            args.dropout_mask (uint8 [b, h_q, s_q, s_k], optional) receives 1 for each
 *            visible and kept P_ij, else 0. LSE is that of the undropped softmax.
 *   decode   s_q <= 16: a kernel that reads K and V once for all the query rows of a head
 *            group, with split-KV (the keys split into parts combined through their LSEs,
 *            deterministic) where the batch has few (b h_k) units.
 *
 * Usage: a plan checks the problem (every refusal a ck_status with a sentence naming the
 * field), chooses the instance and builds the kernel once; execute checks the pointers and
 * launches. Kernels: an sm_80-class kernel (cp.async, ldmatrix, mma.sync) that runs on sm_80
 * and later, and on sm_90a (and the emulator) a FlashAttention-3-style kernel (TMA, wgmma,
 * warp-specialized producer and consumer warpgroups) for the problems it supports (head dims
 * 64, 128, 192, 256; 16-byte aligned strides and pointers; no bias, ALiBi, paged K/V or
 * dropout); the plan's name says which. For s_q <= 16 (fixed-length or paged) the decode
 * kernel on the same stages (with split-KV's combine kernel, which uses the context's
 * workspace). docs/ops-attention.md describes the algorithms.
 */
#ifndef CK_ATTENTION_H
#define CK_ATTENTION_H

#include <stdint.h>

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ck_attn_mask {
    CK_ATTN_MASK_NONE = 0,
    CK_ATTN_MASK_CAUSAL = 1,
    CK_ATTN_MASK_WINDOW = 2
} ck_attn_mask;

typedef enum ck_attn_align {
    CK_ATTN_TOP_LEFT = 0,    /* off = 0: query i sees keys up to i (causal) */
    CK_ATTN_BOTTOM_RIGHT = 1 /* off = s_k - s_q: the last query sees the last key */
} ck_attn_align;

/* The layout of the fp8 descales (args.descale_q, _k, _v). */
typedef enum ck_attn_descale {
    CK_ATTN_DESCALE_TENSOR = 0, /* one f32 each */
    CK_ATTN_DESCALE_HEAD = 1    /* f32 [b, h_k] each (packed): per batch and key/value head */
} ck_attn_descale;

/* Element strides of one of Q, K, V, O over (batch, sequence, head); the last dim (d or d_v)
 * is contiguous. All three 0: packed BSHD (what ck_attention_problem_init leaves; varlen:
 * packed [total, h, d]). */
typedef struct ck_attn_strides {
    int64_t batch, seq, head;
} ck_attn_strides;

/* An additive bias over [b, h_q, s_q, s_k]: dims[x] is 1 (broadcast along x) or the full size
 * (b, h_q, s_q, s_k); strides in elements (a dim of 1 ignores its stride; all 0: packed
 * row-major over dims). dims all 0: no bias. */
typedef struct ck_attn_bias {
    ck_dtype dtype; /* CK_DTYPE_F32, CK_DTYPE_BF16 or CK_DTYPE_F16 */
    int64_t dims[4];
    int64_t strides[4];
} ck_attn_bias;

/* The variants' problem fields (see above); ck_attention_problem_init zeroes them: none. */
typedef struct ck_attn_variants {
    ck_attn_bias bias;
    int alibi;                               /* 1: args.alibi_slopes */
    int64_t page_size, num_pages, max_pages; /* page_size > 0: paged K / V */
    float dropout_p;                         /* 0: no dropout */
} ck_attn_variants;

typedef struct ck_attention_problem {
    int64_t b, s_q, s_k, h_q, h_k;
    int64_t d, d_v; /* head dims: each 32, 64, 96, 128, 192 or 256 (d_v may differ from d) */
    ck_dtype dtype; /* Q, K, V and O: CK_DTYPE_BF16 or CK_DTYPE_F16; or Q, K, V
                       CK_DTYPE_FP8_E4M3 with O bf16 (above) */
    ck_attn_strides q, k, v, o;
    ck_attn_mask mask;
    ck_attn_align align;
    int64_t window_left, window_right; /* CK_ATTN_MASK_WINDOW: >= 0, or -1 for unbounded */
    int lse;                           /* 1: write LSE (ck_attention_args.lse) */
    float softcap;            /* > 0: scores soft-capped to (-softcap, softcap) by tanh; 0: none */
    int varlen;               /* 1: variable-length sequences (above); batch strides must be 0 */
    int64_t total_q, total_k; /* varlen: rows of the packed Q / O and K / V */
    ck_attn_variants var;     /* bias, ALiBi, paged K / V, dropout */
    ck_attn_descale descale;  /* fp8: the layout of the descales (0 for other types) */
} ck_attention_problem;

/* Zero sizes, bf16, packed BSHD, no mask (top-left), no LSE, no soft-cap. */
void ck_attention_problem_init(ck_attention_problem *p);

typedef struct ck_attention_args {
    const void *q, *k, *v;
    void *o;
    float *lse;  /* f32 [b, h_q, s_q] when the problem has lse, else ignored */
    float scale; /* softmax scale (finite); 0 selects 1 / sqrt(d) */
    const int32_t *cu_seqlens_q, *cu_seqlens_k;     /* varlen: b + 1 offsets each (device) */
    const void *bias;                               /* the problem's bias (device) */
    const float *alibi_slopes;                      /* f32 [h_q] (device) */
    const int32_t *block_table, *seqlens_k;         /* paged: [b, max_pages] and [b] or NULL */
    uint64_t dropout_seed, dropout_offset;          /* the Philox key and counter offset */
    uint8_t *dropout_mask;                          /* NULL, or uint8 [b, h_q, s_q, s_k] */
    const float *descale_q, *descale_k, *descale_v; /* fp8: f32 (device; NULL: 1) */
} ck_attention_args;

/* Pointers NULL, scale 0 (1 / sqrt(d)). */
void ck_attention_args_init(ck_attention_args *args);

typedef struct ck_attention_plan ck_attention_plan;

/* Check the problem and build its kernel: the tuning table's instance for this problem on this
 * device where `ck tune attention` stored one and the plan accepts it (else the policy's, with a
 * warning logged). Errors: CK_ERROR_INVALID_ARGUMENT (a size or stride
 * out of range, h_q not a multiple of h_k, a window below -1, ...) or CK_ERROR_UNSUPPORTED (a
 * head dim or type the kernels do not have), each with a sentence (ck_last_error()). Free with
 * ck_attention_plan_destroy. */
ck_status ck_attention_plan_create(ck_context *ctx, const ck_attention_problem *problem,
                                   ck_attention_plan **plan);

/* The chosen instance's name, e.g. "sm80.d128.dv128.m128n64.w4". */
const char *ck_attention_plan_name(const ck_attention_plan *plan);

/* 1 when the tuning table (`ck tune attention`, ck_attention_tune in ck/tune.h) chose the
 * plan's instance for this problem on this device, else 0 (the policy's). */
int ck_attention_plan_tuned(const ck_attention_plan *plan);

/* Run on the context's stream. Checks the pointers (non-NULL, aligned as the instance needs:
 * 16 bytes where the strides allow 16-byte copies, O and LSE not overlapping Q, K, V or each
 * other) and the scale; refuses with a sentence. No host allocation. */
ck_status ck_attention_plan_execute(ck_attention_plan *plan, const ck_attention_args *args);

void ck_attention_plan_destroy(ck_attention_plan *plan);

/* One call: plan (from the context's kernel cache), execute, destroy. */
ck_status ck_attention(ck_context *ctx, const ck_attention_problem *problem,
                       const ck_attention_args *args);

#ifdef __cplusplus
}
#endif
#endif /* CK_ATTENTION_H */
