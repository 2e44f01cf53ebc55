/*
 * Internal declarations of src/ops/reduce (not installed). The op in CK's parts:
 *   problem.c    argument checks -> the canonical problem (rd_canon)
 *   policy.c     canonical problem + device properties -> the instance (rd_plan)
 *   params.c     THE parameter table of the generated source: its #defines and the kernel
 *                cache key are printed from the same list
 *   kernel.c     the launches (rd_geom, reduce_geom_kernel.h, is the argument struct shared
 *                with the device)
 *   window.c     the tile windows of x the read stages load through (opt-in: RD_WINDOW)
 *   reduce_kernel.h   device states and helpers; reduce_row/col/combine_kernel.h the pipelines,
 *                reduce_window_kernel.h their read stages over the generated windows
 *   reference.c  the CPU reference (tests and `ck prof reduce`)
 */
#ifndef CK_SRC_OPS_REDUCE_INTERNAL_H
#define CK_SRC_OPS_REDUCE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ck/reduce.h"
#include "ck/runtime.h"
#include "gen/sbuf.h"
#include "ops/common/op_params.h"
#include "ops/common/op_window.h"
#include "ops/reduce/reduce_geom_kernel.h"

/* ---- problem.c */

extern const char *const ck_reduce_op_names[CK_REDUCE_OP_COUNT];
int ck_reduce_is_arg(ck_reduce_op op);
/* Bytes per element of x's type (0: not a supported input). */
int ck_reduce_in_size(ck_dtype t);

/* The canonical problem: kept dimensions (lengths, strides of x and y) and reduced dimensions
 * (lengths, strides of x), length-1 dimensions dropped; rows outputs of n elements each. */
typedef struct rd_canon {
    int kd, rd;
    int64_t kl[RD_MAXD], kxs[RD_MAXD], kys[RD_MAXD], rl[RD_MAXD], rxs[RD_MAXD];
    int64_t rows, n;
} rd_canon;

/* Checks shared by ck_reduce and its reference; fills the reduced-axis mask. */
ck_status ck_reduce_check_common(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                                 const ck_reduce_options *opt, int *mask);
/* All checks (y's too) and the canonical form. */
ck_status ck_reduce_analyze(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                            const ck_tensor *y, const ck_reduce_options *opt, rd_canon *c);

/* ---- policy.c */

/* The instance (and the problem fields its source depends on). */
typedef struct rd_plan {
    int kind; /* 0 row, 1 column */
    int ti, to, acc64, op, pre, scale, sqrt_, kd, rd, vb, g, rpb, u, ct, rt;
    int kernel_kind; /* 0 row, 1 column, 2 combine: the source being built */
    int window;      /* the read stage loads x through generated tile windows (window.c,
                      * reduce_window_kernel.h), RD_WINDOW; 0: indexed by hand */
    int arg_scan;    /* argmax/argmin's branch-free fold of a row's vectors, RD_ARG_SCAN
                      * (reduce_row_kernel.h); 0 under CK_REDUCE_PREV=1 */
    int last_fold;   /* a split row's last block combines the parts (RD_LAST_FOLD, ticket
                      * counters of ck_op_counters); 0: the combine kernel */
    size_t smem;
    rd_geom geom;
} rd_plan;

void ck_reduce_choose(rd_plan *p, const rd_canon *c, const ck_tensor *x,
                      const ck_device_props *props);

/* What steers the policy beyond the problem: a tuning-table entry (`ck tune reduce`), the
 * instance ck tune forces: "row,G,RPB,PARTS[,WINDOW]" (G threads per output, RPB outputs per
 * block, whole warps; G > 32: RPB 1) or "col,CT,RT,PARTS[,WINDOW]" (column threads <= 32,
 * reduced threads), PARTS the split (0: the heuristic's), WINDOW 1: x through tile windows
 * where the instance allows (0 or absent: indexed by hand); "window" the heuristic's instance
 * through windows; "auto" none (kind -1). */
typedef struct rd_knobs {
    int kind, a, b, parts, window;
} rd_knobs;

int ck_reduce_knobs_parse(const char *text, rd_knobs *k);
void ck_reduce_apply_knobs(rd_plan *p, const rd_canon *c, const ck_tensor *x, const rd_knobs *k);
/* The developer switch CK_REDUCE_WINDOW=0|1 over k's window field (not for a forced instance). */
void ck_reduce_knobs_env(rd_knobs *k);
/* The developer switch CK_REDUCE_PREV=1: the previous paths of issue 19's fixes (argmax's
 * per-element fold with index comparisons; rows split into about 8 blocks per SM and combined
 * by a second kernel), to time against the defaults. */
int ck_reduce_prev_env(void);
/* The instance's text in the table's form, and the table's problem key. */
void ck_reduce_instance_name(const rd_plan *p, char *buf, size_t size);
void ck_reduce_problem_key(const rd_plan *p, char *buf, size_t size);

/* `ck tune reduce`: times the instances of the problem's kind and stores the fastest. */
typedef void (*ck_reduce_tune_progress)(void *user, int i, int n, const char *instance, double ms);
ck_status ck_reduce_tune(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                         int naxes, ck_tensor *y, const ck_reduce_options *opt, int reps,
                         ck_reduce_tune_progress progress, void *user, char *best, size_t best_size,
                         double *best_ms);

/* ---- params.c */

/* The parameter table of p's source for kernel p->kernel_kind (CK_OP_MAX_PARAMS of room); its
 * count. */
int ck_reduce_params(const rd_plan *p, ck_op_param *t);
/* The source (ck_op_build_fn: user is the rd_plan) and the cache key. */
ck_status ck_reduce_build_source(void *user, char **source);
ck_status ck_reduce_plan_key(const rd_plan *p, char *key, size_t size);

/* ---- window.c */

/* Whether the instance's read stage can load x through tile windows: a row instance over
 * contiguous reduced elements (vb > 0) or strided ones (vb = 0: one window xe over the merged
 * reduced dimensions), a column instance over one reduced dimension. */
int ck_reduce_window_ok(const rd_plan *p);
/* The windows of p's read stage (kernel p->kernel_kind 0 or 1), appended to b: x (whole tiles
 * of the read loop), for rows xv (whole vectors) and xe (the last elements), for columns xe
 * (the last rows). */
ck_status ck_reduce_windows(const rd_plan *p, ck_sbuf *b);
/* Whether the row's windows x and xv hold 32-bit words of 16-byte vectors of narrow elements (two
 * or four a word; the stage unpacks them: RD_WIN_WORDS of reduce_window_kernel.h). */
int ck_reduce_window_words(const rd_plan *p);
/* One of them ("x", "xv" or "xe"; for the tests; release with ck_op_window_free). */
ck_status ck_reduce_window_spec(const rd_plan *p, const char *name, ck_op_window *w);

/* ---- kernel.c */

/* The checks, the canonical problem and the instance of ck_reduce's arguments. */
ck_status ck_reduce_make_plan(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                              int naxes, const ck_tensor *y, const ck_reduce_options *opt,
                              rd_plan *p, rd_canon *c);
/* p turned into the plan of the combine kernel of a split instance. */
void ck_reduce_combine_plan(rd_plan *q);

/* The instance ck_reduce would run (for tests, `ck prof` and docs): kind 0 row (vb > 0:
 * contiguous with vb-byte vectors, 0: strided), 1 column; threads per output group (row),
 * column threads x reduced threads (column), parts > 1: split with a second combine kernel. */
typedef struct ck_reduce_plan_info {
    int kind, vb, g, rpb, ct, rt, kd, rd;
    long long parts, rows, n;
    int fold; /* split parts combined by the last block to finish (no combine kernel) */
} ck_reduce_plan_info;

/* The checks and instance choice of ck_reduce without running it. */
ck_status ck_reduce_plan(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                         int naxes, const ck_tensor *y, const ck_reduce_options *opt,
                         ck_reduce_plan_info *info);

/* The generated source ck_reduce would compile for this problem: which 0 the main kernel
 * (rd_row_k or rd_col_k), 1 the combine kernel of split instances (CK_ERROR_NOT_FOUND when the
 * instance does not split). *source is malloc'd (caller frees). For NVRTC compile tests. */
ck_status ck_reduce_source(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                           int naxes, const ck_tensor *y, const ck_reduce_options *opt, int which,
                           char **source);

/* CPU reference in double precision. x->data is a host copy laid out as x's description says.
 * For each output, in the row-major order of the kept axes of x: val (after post-ops; the
 * value op's result), idx (argmax/argmin: flat index of the reduced axes in x's axis order) and
 * mag (sum of |term| after the pre-op and squaring, passed through the same post-ops, for error
 * bounds; |value| for max/min). Arrays hold ck_tensor_numel(x) / n entries. Checks as
 * ck_reduce except y (no y here). */
ck_status ck_reduce_reference(ck_reduce_op op, const ck_tensor *x, const int *axes, int naxes,
                              const ck_reduce_options *opt, double *val, int64_t *idx, double *mag);

#endif
