/*
 * The attention op's parts and the contract between them (src/ops/attention), in CK's names:
 *
 *   problem.c    ck_attention_problem -> ck_attn_prob (argument checks, every refusal a sentence)
 *   policy.c     the instance (block tile, warps) for the problem on the device
 *   kernel.c     THE parameter table (the generated defines and the kernel cache key), the
 *                kernel source, ck_attention_plan_create / execute / destroy, ck_attention
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
 * producer warpgroup), tile_m 128. */
typedef struct ck_attn_instance {
    int tile_m, tile_n, warps;
} ck_attn_instance;

#define CK_ATTN_SM90_WARPS 12

static inline int ck_attn_is_sm90(const ck_attn_instance *in)
{
    return in->warps == CK_ATTN_SM90_WARPS;
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

/* ---- the sm_90a kernel (sm90.c) ---- */

/* 1 when the sm90 kernel runs the problem on the device; else 0 with the reason (a sentence)
 * in reason. */
int ck_attn_sm90_supports(const ck_attn_prob *prob, const ck_device_props *props, char *reason,
                          size_t reason_size);

/* The sm90 instance for a supported problem (tile, stages that fit the shared memory). */
ck_status ck_attn_sm90_instance(const ck_attn_prob *prob, const ck_device_props *props,
                                ck_attn_instance *out);

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

#endif
