/*
 * The attention op's parts and the contract between them (src/ops/attention), in CK's names:
 *
 *   problem.c    ck_attention_problem -> ck_attn_prob (argument checks, every refusal a sentence)
 *   policy.c     the instance (block tile, warps) for the problem on the device
 *   kernel.c     THE parameter table (the generated defines and the kernel cache key), the
 *                kernel source, ck_attention_plan_create / execute / destroy, ck_attention
 *   tune.c       the tuning table's problem key and instance names, the candidates, the tuner
 *   reference.c  the CPU reference (scores materialized in f64) shared by the tests and
 *                `ck prof attention`, and the tolerance derived from the types
 *
 *   sm90.c       the sm_90a kernel's host side: what it supports (and why not), its instance,
 *                its parameter table and generated parts, its tensor maps and launch
 *
 * Device sources: attn_args_kernel.h (the argument struct both sides share),
 * fwd_sm80_pipeline_kernel.h (cp.async + ldmatrix + mma.sync) and fwd_sm90_pipeline_kernel.h
 * (TMA + wgmma, warp-specialized).
 */
#ifndef CK_SRC_OPS_ATTN_INTERNAL_H
#define CK_SRC_OPS_ATTN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ck/attention.h"
#include "ck/runtime.h"
#include "ops/attention/attn_args_kernel.h"

/* The checked, normalized problem: every stride resolved (packed BSHD where all were 0). */
typedef struct ck_attn_prob {
    ck_attention_problem p;
    int64_t lo, hi;      /* visible keys: i + lo <= j <= i + hi (unbounded: +-CK_ATTN_UNBOUNDED),
                            for s_q and s_k (fixed-length problems; ck_attn_band for others) */
    int64_t left, right; /* the mask as a window: -1 unbounded (none (-1, -1), causal (-1, 0)) */
    int scalar_copy;     /* bit 0: element-wise loads of Q, K, V; bit 1: element-wise stores of O
                            (unaligned pointers given to ck_attention) */
} ck_attn_prob;

#define CK_ATTN_UNBOUNDED (1LL << 62)

/* The band of visible keys of a sequence of sq queries and sk keys. */
void ck_attn_band(const ck_attn_prob *prob, int64_t sq, int64_t sk, int64_t *lo, int64_t *hi);

/* Check and normalize. CK_ERROR_INVALID_ARGUMENT / CK_ERROR_UNSUPPORTED with a sentence. */
ck_status ck_attn_prob_make(const ck_attention_problem *problem, ck_attn_prob *prob);

/* Element offset of (batch, seq, head, 0) in a tensor with strides st. */
static inline int64_t ck_attn_offset(const ck_attn_strides *st, int64_t b, int64_t s, int64_t h)
{
    return b * st->batch + s * st->seq + h * st->head;
}

/* Elements spanned by a tensor of [b, s, h, d] with strides st (0 when empty). */
int64_t ck_attn_span(const ck_attn_strides *st, int64_t b, int64_t s, int64_t h, int64_t d);

/* One instance: the block tile of the sm80 kernel (1, 2, 4 or 8 warps), or of the sm90
 * kernel: warps = CK_ATTN_SM90_WARPS (two consumer warpgroups of 64 query rows each and the
 * producer warpgroup), tile_m 128, or CK_ATTN_SM90_WARPS3 (three consumers), tile_m 192. */
typedef struct ck_attn_instance {
    int tile_m, tile_n, warps;
    int decode; /* 1: the decode kernel (decode.c): tile_m query rows of a head group per block,
                   each warp tile_n keys of a tile of warps * tile_n */
    int splits; /* decode: key range split into this many parts (1: none) */
    int stages; /* decode: depth of the K / V ring (2 to 4; 0: 2) */
} ck_attn_instance;

#define CK_ATTN_SM90_WARPS  12
#define CK_ATTN_SM90_WARPS3 16

static inline int ck_attn_is_sm90(const ck_attn_instance *in)
{
    return !in->decode && (in->warps == CK_ATTN_SM90_WARPS || in->warps == CK_ATTN_SM90_WARPS3);
}

/* Shared bytes of the instance: the Q tile and two stages of K and V tiles. */
size_t ck_attn_shared_bytes(const ck_attn_prob *prob, const ck_attn_instance *in);

/* The instance for the problem on the device: the sm90 kernel where it supports the problem
 * (an sm_90a device or the emulator), else the sm80 kernel (CK_LOG info says why not sm90);
 * CK_ERROR_UNSUPPORTED with a sentence when none fits (compute capability below 8.0, too little
 * shared memory). */
ck_status ck_attn_policy(const ck_attn_prob *prob, const ck_device_props *props,
                         ck_attn_instance *out);

/* A plan of a checked problem with instance `want` (NULL: the policy's), refused with a
 * sentence when the instance cannot run it (ck prof attention --instance, the tests). */
ck_status ck_attn_plan_create_instance(ck_context *ctx, const ck_attn_prob *prob,
                                       const ck_attn_instance *want, ck_attention_plan **plan);

/* The kernel source of (problem, instance) (malloc'd) and its cache key (malloc'd). */
ck_status ck_attn_source(const ck_attn_prob *prob, const ck_attn_instance *in, char **source);
char *ck_attn_key(const ck_attn_prob *prob, const ck_attn_instance *in);
/* "op/NAME=value/..." of a parameter table, names without "ATTN_" (malloc'd; NULL: no memory
 * or too long); of the sm80 / decode kernels' table for ck_attn_params_key. */
struct ck_op_param;
char *ck_attn_table_key(const char *op, const struct ck_op_param *t, int n);
char *ck_attn_params_key(const char *op, const ck_attn_prob *prob, const ck_attn_instance *in);

/* ---- the sm_90a kernel (sm90.c) ---- */

/* 1 when the sm90 kernel runs the problem on the device; else 0 with the reason (a sentence)
 * in reason. */
int ck_attn_sm90_supports(const ck_attn_prob *prob, const ck_device_props *props, char *reason,
                          size_t reason_size);

/* The sm90 instance for a supported problem (tile, stages that fit the shared memory). */
ck_status ck_attn_sm90_instance(const ck_attn_prob *prob, const ck_device_props *props,
                                ck_attn_instance *out);

/* 1 when an sm90 instance asked for (ck_attn_plan_create_instance) has a shape the kernel
 * has: tile_m 64 per consumer warpgroup with warps CK_ATTN_SM90_WARPS (two) or
 * CK_ATTN_SM90_WARPS3 (three), a key tile of 64 to 192 rows in steps of 16 whose accumulators
 * fit the consumers' registers. */
int ck_attn_sm90_shape_ok(const ck_attn_prob *prob, const ck_attn_instance *in);

/* Shared bytes of an sm90 instance (the Q tile, the K and V rings, barriers, alignment). */
size_t ck_attn_sm90_shared_bytes(const ck_attn_prob *prob, const ck_attn_instance *in);

/* An sm90 instance's kernel source and cache key (malloc'd), from its parameter table. */
ck_status ck_attn_sm90_source(const ck_attn_prob *prob, const ck_attn_instance *in, char **source);
char *ck_attn_sm90_key(const ck_attn_prob *prob, const ck_attn_instance *in);

/* Launch the sm90 kernel with filled kernel arguments: the tensor maps of Q, K and V, a grid of
 * (query tiles, h_q, b) blocks of 128 * (consumers + 1) threads. */
ck_status ck_attn_sm90_launch(ck_context *ctx, ck_kernel *kernel, const ck_attn_prob *prob,
                              const ck_attn_instance *in, const ck_attn_kargs *ka);

/* The CPU reference of one query row (batch b, query head h, row i of the sequence) from host
 * copies of Q, K, V in the problem's layout (varlen: cu_q, cu_k host copies of the offsets,
 * else NULL), scores and softmax in double: o[0 .. d_v) (unrounded), *lse, and
 * *mag = sum_j p_j |v_jc| maximized over c (the magnitude the error of O scales with) and
 * *smag = max_j scale * sum_c |q_c k_jc| (the magnitude of the scores). A row that sees no key
 * gives o = 0, lse = -inf, mag = smag = 0. scale: the effective scale (not 0). */
void ck_attn_reference_row(const ck_attn_prob *prob, const void *q, const void *k, const void *v,
                           const int32_t *cu_q, const int32_t *cu_k, double scale, int64_t b,
                           int64_t h, int64_t i, double *o, double *lse, double *mag, double *smag);

/* Rows of sequence b (varlen: from the host offsets cu, clamped to [0, total] as the kernel
 * does; else `fixed`) and the index of its first row in the packed tensors (0 otherwise). */
void ck_attn_seq(const ck_attn_prob *prob, const int32_t *cu, int64_t total, int64_t fixed,
                 int64_t b, int64_t *len, int64_t *first);

/* Bounds on |kernel - reference| for O (from mag and the reference value) and LSE (from smag),
 * derived from the input type (P rounded to it), f32 accumulation over d and s_k and the
 * output rounding. */
double ck_attn_tolerance_o(const ck_attn_prob *prob, double mag, double smag, double ref);
double ck_attn_tolerance_lse(const ck_attn_prob *prob, double smag, double ref);

/* The effective scale of args (0 -> 1 / sqrt(d)). */
double ck_attn_scale(const ck_attn_prob *prob, float scale);

/* ---- fp8 e4m3 on the sm90 kernel (sm90_fp8.c) ---- */

/* That S registers 16j .. 16j + 15 of a key tile of tile_n, packed as fwd_sm90_fp8_kernel.h
 * does, are the 8-bit register-A fragment of P V's k-step j with V^T's key order (checked on the
 * encodings for every thread). */
ck_status ck_attn_fp8_check_p(int tile_n);

/* Keys of a V^T line: s_k rounded up to 32. */
int64_t ck_attn_fp8_vt_keys(const ck_attn_prob *prob);

/* A plan's V^T workspace: vt [b, h_k, d_v, vt_keys] and the staging chunk of the last keys
 * (when s_k is not a multiple of 32), both zeroed at creation; with two_pass (CK_ATTN_FP8_VT=2)
 * stage is V^T in key order, as large as vt. */
typedef struct ck_attn_fp8_ws {
    void *vt, *stage;
    int two_pass;
} ck_attn_fp8_ws;

ck_status ck_attn_fp8_workspace(ck_context *ctx, const ck_attn_prob *prob, ck_attn_fp8_ws *ws);
void ck_attn_fp8_workspace_free(ck_context *ctx, ck_attn_fp8_ws *ws);

/* V (the problem's strides) to V^T in ws, keys in the P fragment's order (ck_permute on the
 * context's stream). */
ck_status ck_attn_fp8_transpose_v(ck_context *ctx, const ck_attn_prob *prob,
                                  const ck_attn_fp8_ws *ws, const void *v);

/* ---- variants (variants.c) ---- */

/* Check and normalize problem->var (bias strides, paged pools' packed strides) in p, whose
 * other fields are already checked; `given` is the caller's problem. A sentence on refusal. */
ck_status ck_attn_variants_check(const ck_attention_problem *given, ck_attention_problem *p);

/* ATTN_BIAS of the problem: 0 none, 1 f32, 2 bf16, 3 f16. */
int ck_attn_bias_code(const ck_attn_prob *prob);

/* Check the variants' pointers of args and set their fields of ka. */
ck_status ck_attn_variants_args(const ck_attn_prob *prob, const ck_attention_args *args,
                                ck_attn_kargs *ka);

/* The variants' tensors of args against the n tensors (ptr, bytes, names) of Q, K, V, O, ...,
 * the last `outputs` of them outputs: the dropout mask shares memory with none, the outputs
 * with none of the variants' inputs; else CK_ERROR_INVALID_ARGUMENT naming both. */
ck_status ck_attn_variants_disjoint(const ck_attn_prob *prob, const ck_attention_args *args,
                                    const void *const *ptr, const size_t *bytes,
                                    const char *const *names, int n, int outputs);

/* Dropout: the integer threshold of p (words below it drop), Philox4x32-10 in place, and the
 * keep decision of (b, h, i, j) as the kernels make it (docs/ops-attention.md). */
unsigned ck_attn_dropout_threshold(float p);
void ck_attn_philox4x32(uint32_t ctr[4], uint32_t k0, uint32_t k1);
int ck_attn_dropout_keep(const ck_attn_prob *prob, uint64_t seed, uint64_t offset, int64_t b,
                         int64_t h, int64_t i, int64_t j);

/* The reference's inputs beyond Q, K, V (host copies; NULL where the problem has none). */
typedef struct ck_attn_ref_in {
    const void *q, *k, *v;                          /* K and V: the pools when paged */
    const int32_t *cu_q, *cu_k;                     /* varlen offsets */
    const void *bias;                               /* the problem's bias */
    const float *alibi;                             /* [h_q] */
    const int32_t *block_table;                     /* paged: [b, max_pages] */
    const int32_t *seqlens_k;                       /* paged: [b] or NULL */
    uint64_t seed, offset;                          /* dropout */
    double scale;                                   /* the effective scale */
    const float *descale_q, *descale_k, *descale_v; /* fp8: host copies (NULL: 1) */
    int p_tile; /* fp8: 0, P exact; else P rounded to e4m3 as the sm90 kernel with key tiles
                   of p_tile rounds it (relative to the running max of the tiles so far) */
    struct ck_attn_ref_fp8 *fp8_out; /* fp8 (optional): the terms of the tolerance */
} ck_attn_ref_in;

/* fp8: max over O's columns of sum_j |dv v_jc| / l, and of the same weighted by the spacing of
 * e4m3 at p_j where the kernel's p_j may round either way (quantized reference). */
typedef struct ck_attn_ref_fp8 {
    double vsum, amb;
} ck_attn_ref_fp8;

/* fp8: the relative error of the kernel's p before its rounding to e4m3 (scores, exp2, chain). */
double ck_attn_fp8_near(const ck_attn_prob *prob, double smag);

/* fp8: the bound on |kernel - reference| for O against the exact reference (quantized 0: P's
 * rounding, 2^-4 relative per term, 2^-10 absolute where P is subnormal in e4m3) or the one that
 * rounds P as the kernel does (quantized 1: only the ambiguous roundings, amb); mag, smag as for
 * ck_attn_tolerance_o, vsum and amb from ck_attn_ref_fp8; O is bf16. */
double ck_attn_tolerance_o_fp8(const ck_attn_prob *prob, double mag, double smag, double vsum,
                               double amb, double ref, int quantized);

/* ck_attn_reference_row with every variant. A paged sequence with a page outside the pool
 * gives o = lse = NaN (the kernels' rule). */
void ck_attn_reference_row_in(const ck_attn_prob *prob, const ck_attn_ref_in *in, int64_t b,
                              int64_t h, int64_t i, double *o, double *lse, double *mag,
                              double *smag);

/* ---- the decode kernel and split-KV (decode.c) ---- */

/* Whether the decode kernel can run the problem (s_q <= 16, fixed lengths, ...); else a
 * sentence (when `why`). */
int ck_attn_decode_ok(const ck_attn_prob *prob, int why);

/* The decode instance for the problem on the device with `splits` parts (0: the policy's). */
ck_status ck_attn_decode_policy(const ck_attn_prob *prob, const ck_device_props *props, int splits,
                                ck_attn_instance *out);

/* Parts of the key range for the decode instance `in` when `sms` SMs hold `per_sm` of its
 * blocks each: the count that minimizes a model of each SM's time (its rounds of resident
 * blocks, each block reading its part's key tiles plus a fixed cost, at full bandwidth only
 * with enough blocks in flight) plus the combine kernel's cost. */
int ck_attn_decode_splits(const ck_attn_prob *prob, const ck_attn_instance *in, int64_t sms,
                          int64_t per_sm);

/* CK_ATTN_DECODE_SPLITS (1 to 64): the parts every decode plan with the policy's parts takes
 * instead (a developer switch); 0 when unset. */
int ck_attn_decode_env_splits(void);

/* The policy's decode instance *in with the block shape of `want` (tile_m 0: the policy's
 * rows; tile_n 0: the policy's keys per warp and warps; stages 0: the policy's ring), checked:
 * 1, 2, 4 or 8 warps, keys per warp 16, 32 or 64, 16 to 64 rows, 2 to 4 stages, the shared
 * memory. */
ck_status ck_attn_decode_instance(const ck_attn_prob *prob, const ck_device_props *props,
                                  const ck_attn_instance *want, ck_attn_instance *in);

/* Shared bytes of a decode instance. */
size_t ck_attn_decode_shared_bytes(const ck_attn_prob *prob, const ck_attn_instance *in);

/* The decode kernel's source (ck_attn_decode) and the combine kernel's (ck_attn_combine). */
ck_status ck_attn_decode_source(const ck_attn_prob *prob, const ck_attn_instance *in,
                                char **source);
char *ck_attn_decode_key(const ck_attn_prob *prob, const ck_attn_instance *in);
ck_status ck_attn_combine_source(const ck_attn_prob *prob, char **source);
char *ck_attn_combine_key(const ck_attn_prob *prob);

/* Launch the decode kernel (and with split-KV the combine kernel) for ka. */
ck_status ck_attn_decode_launch(ck_context *ctx, const ck_attn_prob *prob,
                                const ck_attn_instance *in, ck_kernel *decode, ck_kernel *combine,
                                ck_attn_kargs *ka, size_t shared);

/* ---- tuning (tune.c) ---- */

/* The tuning table's problem key of the problem (the fields that change the best instance). */
void ck_attn_tuning_key(const ck_attn_prob *prob, char *buf, size_t size);

/* The instance's name, which is the plan's name and the tuning table's instance text:
 * "sm90.d64.dv64.m128n64.w12", "sm80.d64.dv64.m64n32.w4", "decode.d64.dv64.r16n32.w1.k2.s1". */
void ck_attn_instance_name(const ck_attn_prob *prob, const ck_attn_instance *in, char *buf,
                           size_t size);

/* Parse a name of ck_attn_instance_name back for the problem: 1 and *in, or 0 when it is not
 * one (or names other head dims). */
int ck_attn_instance_parse(const ck_attn_prob *prob, const char *text, ck_attn_instance *in);

/* The tuned instance of the problem on the context's device (the one `ck tune` forces, else the
 * tuning table's): 1 with *in, -1 when the text (in text) names no instance, 0 when there is
 * none. *forced: the tuner forced it. */
int ck_attn_tuned(ck_context *ctx, const ck_attn_prob *prob, ck_attn_instance *in, char *text,
                  size_t text_size, int *forced);

/* The #defines of the parameter table (kernel.c), appended to b (a ck_sbuf). */
struct ck_sbuf;
void ck_attn_defines(const ck_attn_prob *prob, const ck_attn_instance *in, struct ck_sbuf *b);

#endif
