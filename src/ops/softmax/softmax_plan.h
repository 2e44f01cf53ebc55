/*
 * The softmax instance (src/ops/softmax), in CK's parts:
 *   problem.c  problem: argument checks -> the problem fields of smx_plan and smx_geom
 *   kernel.c   the launch
 *   policy.c   policy: problem + device properties (+ tuning table / developer switches, as
 *              smx_knobs) -> the instance fields of smx_plan
 *   params.c   THE parameter table of the generated source: its #defines and the kernel cache
 *              key are printed from the same list; the kernels over the pipelines
 *   softmax_kernel.h, softmax_staged_kernel.h   the device pipelines
 *   reference.c   the CPU reference (tests and `ck prof`)
 *   tune.c     `ck tune softmax`: time the candidate instances, store the fastest
 * Not installed.
 */
#ifndef CK_SRC_OPS_SOFTMAX_PLAN_H
#define CK_SRC_OPS_SOFTMAX_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ck/context.h"
#include "ck/runtime.h"
#include "ck/softmax.h"
#include "gen/sbuf.h"
#include "ops/common/op_params.h"
#include "ops/common/op_window.h"

typedef struct smx_plan {
    /* problem: type indices (ck_smx_code), mask bits (1 additive, 2 causal), log-softmax, row
     * length, elements per access, 16-byte accesses of x / y / mask */
    int ti, to, tm, maskbits, logsm;
    long long n;
    int vec, wide_x, wide_y, wide_m;
    /* rows whose 16-byte vectors are not aligned (N not a multiple of the 16-byte vector of the
     * narrowest type, x 16-byte aligned): span_vec that vector (0: none), span_wide_y/_m whether
     * y / the mask can take 16-byte accesses over the same aligned spans as x. The policy sets
     * span: the register instance reads and writes each row's 16-byte aligned span (its head
     * before the first boundary, its tail past the last) through windows that mask the lanes
     * outside the row (window.c); vec is then span_vec and the wide_* flags the span's. */
    int span_vec, span_wide_y, span_wide_m, span;
    /* instance */
    int kind; /* 0 register rows, 1 online, 2 staged (shared memory, persistent) */
    int g, nv, cluster, rows_per_block;
    int seg_elems, segs, unroll;
    int raw;     /* register instance keeping raw 16-bit inputs (smx_rows_raw) */
    int pairred; /* raw: one reduction of (m, l) pairs (1) or max then sum (0), SMX_PAIRRED */
    int window;  /* register instance: x, y and the mask through generated tile windows
                  * (window.c, softmax_window_kernel.h), SMX_WINDOW; 0: indexed by hand */
    /* staged instance (softmax_staged_kernel.h): vectors per block part and per thread, 16-byte
     * units of x per vector, stages, resident blocks per SM assumed, clusters in the grid,
     * dynamic shared memory per block */
    int pv, v, xu, stages, per_sm, grid_clusters;
    long long smem;
} smx_plan;

/* The launch geometry of a problem: rows, row strides of x / y (elements), the mask's row map
 * (mask row of x row r at ((r / mdiv) % mmod) * ms), the causal mask's row count cm, the scale
 * times log2(e), the pointers (mask: x's when there is none). */
typedef struct smx_geom {
    int64_t rows, xs, ys, ms, mdiv, mmod, cm;
    float scale2;
    const void *x, *mask;
    void *y;
} smx_geom;

/* The argument checks (each refusal a sentence) and the problem: the problem fields of *p and
 * the geometry *g (g->rows = 0 or p->n = 0: nothing to compute). problem.c. */
ck_status ck_smx_problem_of(const ck_tensor *x, const ck_tensor *y,
                            const ck_softmax_options *options, smx_plan *p, smx_geom *g);

/* p->vec from p's problem fields: elements per access, the most that fit 16 bytes of the
 * narrowest type and divide the row length. */
void ck_smx_problem_vec(smx_plan *p);

/* The span fields of p (span_vec, span_wide_y, span_wide_m) from its problem fields, the
 * pointers and the geometry (problem.c). */
void ck_smx_problem_span(smx_plan *p, const void *x, const void *y, const void *mask, int64_t rows,
                         int64_t xs, int64_t ys, int64_t ms, int64_t mdiv, int64_t mmod);

/* The vectors of a row: N / vec, or with span the most a row's aligned span covers
 * (ceil((N + vec - 1) / vec): a head of up to vec - 1 elements before the row). */
long long ck_smx_nvec(const smx_plan *p);

/* What steers the policy beyond the problem and the device: a tuning-table entry (`ck tune
 * softmax`), the instance `ck tune` is timing, or the developer switches (docs/ops-softmax.md).
 * -1 / 0 fields leave the choice to the heuristic. */
typedef struct smx_knobs {
    int shape;   /* 0 none, 1 register shape (g, c, r), 2 staged shape (g, c, s, b, k) */
    int g, c, r; /* threads per row (block), blocks per row, rows per block */
    int s, b, k; /* staged: stages, blocks per SM (0 automatic), clusters in the grid (0 auto) */
    int raw;     /* register instance: -1 policy, 0 f32 cache, 1 raw 16-bit cache */
    int red;     /* raw: -1 policy, 0 max then sum, 1 one reduction of (m, l) pairs */
    int minb;    /* raw: launch bounds' blocks per SM (0 policy) */
    int window;  /* register instance: -1 policy (indexed), 0 indexed, 1 tile windows */
    int span;    /* rows not 16-byte aligned: -1 policy (aligned spans), 0 element accesses */
    int regs_only, staged_opt_in; /* "regs": never staged; "staged": staged where it fits */
} smx_knobs;

/* No knob set. */
void ck_smx_knobs_none(smx_knobs *k);

/* Knobs from an instance's text (the tuning table's form, ck_smx_instance_name):
 * "regs,G,C,R,RAW,RED,MINB[,WINDOW]" or "staged,G,C,S,B,K"; also "auto" (no knob), "regs",
 * "window" (the heuristic's register instance through tile windows), "staged" and
 * the developer switch's "staged,G,C,S,B". Returns 0 when the text is not one of these. */
int ck_smx_knobs_parse(smx_knobs *k, const char *text);

/* Knobs from the developer switches CK_SOFTMAX_VARIANT, CK_SOFTMAX_INSTANCE, CK_SOFTMAX_RAW,
 * CK_SOFTMAX_RED, CK_SOFTMAX_MINB, CK_SOFTMAX_WINDOW, CK_SOFTMAX_SPAN (fields they leave unset keep their value). */
void ck_smx_knobs_env(smx_knobs *k);

/* The instance for the problem fields of p on a device (fills the instance fields). */
void ck_smx_policy(smx_plan *p, int64_t rows, const ck_device_props *props, const smx_knobs *k);

/* The instance's name in the tuning table's form ("regs,256,1,1,0,0,0", "staged,512,2,2,0,0",
 * "online,512,8"). */
void ck_smx_instance_name(const smx_plan *p, char *buf, size_t size);

/* The parameter table of p's kernel source (CK_OP_MAX_PARAMS entries of room); its count. */
int ck_smx_params(const smx_plan *p, ck_op_param *t);

/* The kernel source (ck_op_build_fn: user is the smx_plan) and the cache key. */
ck_status ck_smx_build_source(void *user, char **source);
ck_status ck_smx_plan_key(const smx_plan *p, char *key, size_t size);

/* The tuning table's problem key of p's problem with `rows` rows ("bf16>bf16/n=4096/rows=8/
 * mask=0/log=0/w=110"). */
void ck_smx_problem_key(const smx_plan *p, int64_t rows, char *buf, size_t size);

/* The knobs for p's problem on ctx: the instance ck tune forces, else the tuning table's entry
 * with the developer switches over it, else the switches alone. */
void ck_smx_knobs_for(ck_context *ctx, const smx_plan *p, int64_t rows, smx_knobs *k);

/* The plan ck_softmax would run for these arguments (checks included); plan->n = 0 when there
 * is nothing to compute. */
ck_status ck_smx_plan_of(ck_context *ctx, const ck_tensor *x, const ck_tensor *y,
                         const ck_softmax_options *options, smx_plan *plan, int64_t *rows);

/* Progress of ck_smx_tune: candidate i of n (its instance name), its median ms or -1. */
typedef void (*ck_smx_tune_progress)(void *user, int i, int n, const char *instance, double ms);

/* `ck tune softmax`: times every distinct instance the policy can run for these arguments
 * (the heuristic's choice, register shapes of 32 to 1024 threads on 1 to 16 blocks per row,
 * staged shapes), `reps` runs each after 2 warm-up runs, and stores the fastest in the tuning
 * table under this device and problem; later calls of ck_softmax on a new context use it. */
ck_status ck_smx_tune(ck_context *ctx, const ck_tensor *x, ck_tensor *y,
                      const ck_softmax_options *options, int reps, ck_smx_tune_progress progress,
                      void *user, char *best, size_t best_size, double *best_ms);

/* The tile windows of the register instances (window.c): whether the instance can take them;
 * the windows x, y (and m with an additive mask) of p's source appended to b; one window's spec
 * ('x', 'y' or 'm'; for the tests; release with ck_op_window_free). */
int ck_smx_window_ok(const smx_plan *p);
ck_status ck_smx_windows(const smx_plan *p, ck_sbuf *b);
ck_status ck_smx_window_spec(const smx_plan *p, char which, ck_op_window *w);

/* Element size of type index t (0 f32: 4, else 2). */
int ck_smx_size_of(int code);

#endif
