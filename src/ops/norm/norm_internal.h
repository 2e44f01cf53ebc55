/*
 * Internal interface of src/ops/norm (tests use it to compile the generated kernels). The op in
 * CK's parts:
 *   problem.c   argument checks -> the problem (ck_norm_fwd_problem, ck_norm_bwd_problem)
 *   policy.c    problem + device properties (+ tuning table / developer switches, as
 *               ck_norm_fwd_knobs) -> the instance (ck_norm_instance)
 *   params.c    THE parameter tables of the generated sources: their #defines and the kernel
 *               cache keys are printed from the same lists
 *   kernel.c    the launches (one argument struct shared with the device: norm_args_kernel.h)
 *   norm_fwd_kernel.h, norm_fwd_looped_kernel.h, norm_bwd_kernel.h   the device pipelines
 *   tune.c      `ck tune layernorm|rmsnorm`
 *   reference.c the CPU reference (tests and `ck prof layernorm|rmsnorm`)
 * Not installed.
 */
#ifndef CK_SRC_OPS_NORM_NORM_INTERNAL_H
#define CK_SRC_OPS_NORM_NORM_INTERNAL_H

#include <stdint.h>
#include <stddef.h>

#include "ck/norm.h"
#include "ck/runtime.h"
#include "ck/tile_kernel.h"
#include "gen/sbuf.h"
#include "ops/common/op_params.h"

/* Rows up to this length take the register pipeline (norm_fwd_kernel.h); longer ones the looped
 * pipeline (norm_fwd_looped_kernel.h). */
enum { CK_NORM_REG_MAX_N = 65536 };

/* The looped pipeline's shared memory for x (bytes a block): within the 227 KiB a block may take
 * on every sm_90 device (clusters), 96 KiB without clusters (sm_89's 99 KiB). */
enum { CK_NORM_LOOP_SMEM_CLUSTER = 200 * 1024, CK_NORM_LOOP_SMEM_ONE = 96 * 1024 };

/* A row tensor seen as rows x n with a row stride (elements). */
typedef struct ck_norm_rows {
    int64_t rows, n, stride;
} ck_norm_rows;

/* The quantized y's epilogue (norm_fwd_quant_kernel.h; the developer switch CK_NORM_QUANT):
 * the default - the row's reciprocal, fp8 codes by the target's instruction, 16-bit x held as
 * f32 (which then holds y from the amax stage to the write stage) where it fits - or each part
 * of it undone. */
enum {
    CK_NORM_Q_FAST = 0,  /* "fast" */
    CK_NORM_Q_EXACT,     /* "exact": a division and the integer conversion per element */
    CK_NORM_Q_INTCVT,    /* "intcvt": fp8 codes by the integer conversion (as before sm_89) */
    CK_NORM_Q_RECOMPUTE, /* "recompute": bf16 x in the raw cache, y computed again to write */
};

/* The chosen instance of a problem. */
typedef struct ck_norm_instance {
    int vec;     /* elements per vector access */
    int g;       /* threads per row (<= 32: several rows per block; else the block) */
    int block;   /* threads per block */
    int iters;   /* vectors per thread and row */
    int cache;   /* of which kept in registers */
    int raw;     /* forward: the cache holds x's raw 16-bit codes */
    int cluster; /* forward: blocks per row (a thread-block cluster, sm_90); 1: none */
    int looped;  /* forward: the looped pipeline (long rows, norm_fwd_looped_kernel.h) */
    int smem;    /* looped with raw: vectors per thread held in shared memory (16 bytes each) */
    int window;  /* forward: the read stage's x / residual loads and residual_out stores through
                  * generated tile windows (norm_fwd_window_kernel.h; CK_NORM_WINDOW=1) */
    int qexact;  /* forward, quantized y: a division and the library's conversion per element
                  * (CK_NORM_QUANT=exact); 0: the row's reciprocal and packed conversions
                  * (norm_fwd_quant_kernel.h), the same bits */
    int fp8cvt;  /* forward: the target converts f32 to fp8 e4m3 in one instruction (sm_89+,
                  * and the emulator's model of it); 0: the library's integer conversion */
    int ring;    /* backward: rows of x and dy in the shared-memory ring (cp.async), 0: none */
    int cslices; /* backward: slices of the partial rows per combine block (1: one per column) */
    unsigned grid;
} ck_norm_instance;

/* The dynamic shared memory of the forward's launch (bytes): the looped pipeline's held x. */
size_t ck_norm_fwd_smem_bytes(const ck_norm_instance *in);

/* The backward's instance for hidden size n, vector width vec, `rows` rows on a device
 * (want_part: dgamma or dbeta wanted, so the grid also bounds the partial sums' workspace;
 * pair_bytes: bytes of an element of x plus one of dy, which size the shared-memory ring, 0:
 * unknown, 8 assumed). The developer switch CK_NORM_BWD="RING,CSLICES" (policy.c) over it. */
void ck_norm_pick_bwd(int64_t n, int vec, int64_t rows, const ck_device_props *props, int want_part,
                      int pair_bytes, ck_norm_instance *in);
/* ck_norm_pick_bwd with the knobs given: vectors per thread (1..8) and a persistent grid (0/1);
 * ck_norm_pick_bwd takes them from the developer switch CK_NORM_INSTANCE (default 1,1). */
void ck_norm_pick_bwd_with(int64_t n, int vec, int64_t rows, const ck_device_props *props,
                           int want_part, int pair_bytes, int vpt, int persistent,
                           ck_norm_instance *in);
/* The backward's knobs: text "bwd,VPT,PERSISTENT" (the tuning table's form) or "VPT,PERSISTENT"
 * (the switch's); 0 when it does not parse. The knobs of a problem on ctx: the instance ck tune
 * forces, else the tuning table's entry (op "layernorm_bwd" / "rmsnorm_bwd") with the switch
 * over it. */
int ck_norm_bwd_knobs_parse(const char *text, int *vpt, int *persistent);
void ck_norm_bwd_instance_name(int vpt, int persistent, char *buf, size_t size);
/* The backward's default vectors per thread for hidden size n in vectors of vec (2 above 512
 * vectors, else 1); ck_norm_bwd_knobs_for gives vpt 0 where neither the table nor the switch
 * names one, for the caller to take this. */
int ck_norm_bwd_default_vpt(int64_t n, int vec);
void ck_norm_bwd_knobs_for(ck_context *ctx, const char *op, const char *problem, int *vpt,
                           int *persistent);

/* ck_norm_pick_bwd without the partial sums on a device of `sms` multiprocessors (other limits
 * those of the emulator's properties). */
void ck_norm_pick(int64_t n, int vec, int64_t rows, int sms, ck_norm_instance *in);

/* The forward's instance: one row group per block (grid = row groups), the row in registers.
 * raw_ok: 1 when x is 16-bit, read as 16-byte vectors, without a residual (its raw codes may
 * be cached where f32 values would not fit), 2 when x is bf16 besides (raw codes preferred
 * in every block instance); 0 otherwise. CK_NORM_FWD overrides (policy.c). */
void ck_norm_pick_fwd(int64_t n, int vec, int64_t rows, int raw_ok, int clusters_ok,
                      ck_norm_instance *in);

/* What steers the forward's policy beyond the problem: a tuning-table entry (`ck tune
 * layernorm|rmsnorm`), the instance ck tune times, or the developer switches (policy.c). */
typedef struct ck_norm_fwd_knobs {
    int g;              /* threads per row (0: the heuristic) */
    int vals;           /* f32 values per thread before a larger block (default 32) */
    int vals_set;       /* vals given */
    int raw;            /* -1 heuristic, 0/1 forbid / force the raw 16-bit cache */
    int block;          /* threads per block of the lane-group instance (default 128) */
    int cc, cg;         /* cluster instance: blocks per row and threads per block (0: none) */
    int lg, lc, lcache; /* looped instance: threads per block, blocks per row, vectors cached
                         * per thread (-1: the policy's); lg 0: not forced */
    int lres, lsmem;    /* looped: -1 the policy's, 0 streamed, 1 resident (16-bit x held as
                         * raw codes: CACHE vectors in registers, lsmem in shared memory, -1
                         * the rest of the row as fits); CK_NORM_RESIDENT, or the text's fifth
                         * field */
    int window;         /* 1: the read stage through tile windows where the instance allows */
    int quant;          /* the quantized y's epilogue (CK_NORM_QUANT): CK_NORM_Q_* */
    int qf32;           /* set by the caller: y is quantized and the f32 cache fits (not
                         * layernorm with both beta and smooth) */
} ck_norm_fwd_knobs;

void ck_norm_fwd_knobs_none(ck_norm_fwd_knobs *k);
/* The developer switches CK_NORM_FWD, CK_NORM_CLUSTER, CK_NORM_WINDOW and CK_NORM_QUANT over
 * k. */
void ck_norm_fwd_knobs_env(ck_norm_fwd_knobs *k);
/* An instance's text in the tuning table's form "fwd,G,RAW,BLOCK,CLUSTER", or
 * "loop,G,C,CACHE" for the looped pipeline streaming (CACHE -1: the policy's), or
 * "loop,G,C,CACHE,SMEM" resident (SMEM -1: the policy's), or "auto" (no knob); 0 when it does
 * not parse. */
int ck_norm_fwd_knobs_parse(ck_norm_fwd_knobs *k, const char *text);
void ck_norm_fwd_instance_name(const ck_norm_instance *in, char *buf, size_t size);
/* ck_norm_pick_fwd with the given knobs (ck_norm_pick_fwd: the developer switches'). */
void ck_norm_pick_fwd_with(int64_t n, int vec, int64_t rows, int raw_ok, int clusters_ok,
                           const ck_norm_fwd_knobs *knobs, ck_norm_instance *in);
/* The knobs of a problem on ctx: the instance ck tune forces, else the tuning table's entry
 * (op: ck_norm_table_name) with the developer switches over it. */
void ck_norm_fwd_knobs_for(ck_context *ctx, const char *op, const char *problem,
                           ck_norm_fwd_knobs *k);

/* The forward's instance for d on ctx (checks included) and the tuning table's problem key;
 * in->grid = 0 when there is nothing to compute. ck_norm_tune times the candidates and stores
 * the fastest (`ck tune layernorm|rmsnorm`). */
ck_status ck_norm_forward_plan(ck_context *ctx, const ck_norm_forward_desc *d, ck_norm_instance *in,
                               char *problem, size_t problem_size);
typedef void (*ck_norm_tune_progress)(void *user, int i, int n, const char *instance, double ms);
ck_status ck_norm_tune(ck_context *ctx, const ck_norm_forward_desc *d, int reps,
                       ck_norm_tune_progress progress, void *user, char *best, size_t best_size,
                       double *best_ms);

/* ---- problem.c */

/* The forward's problem: the checked arguments (row views, dtype codes: ck_dtype, -1 for an
 * absent tensor), the vector width every tensor allows, and whether x's raw 16-bit codes may be
 * cached (raw_ok: 1 16-bit x read as 16-byte vectors without a residual, 2 bf16 besides). */
typedef struct ck_norm_fwd_problem {
    int kind; /* ck_norm_kind */
    const char *op;
    int64_t n, rows;
    ck_norm_rows x, y, r, o; /* x, y, residual, residual_out */
    int xt, yt, gt, bt, rt, ot, st;
    int want_mean, want_rstd;
    int vec, raw_ok;
} ck_norm_fwd_problem;

/* Check d and fill p (p->rows == 0: nothing to compute). */
ck_status ck_norm_fwd_problem_of(const ck_norm_forward_desc *d, ck_norm_fwd_problem *p);

/* Whether the instance's read stage can go through tile windows: the row in registers (not
 * looped, no cluster, every vector cached) and 16-byte vectors of x, the residual and
 * residual_out. */
int ck_norm_fwd_window_ok(const ck_norm_fwd_problem *p, const ck_norm_instance *in);

/* The window spec of the read stage's window `name` ("x", "r" or "ro": x, residual,
 * residual_out) of dtype `dtype` for the instance: a descriptor [rows, N] with row stride symbol
 * `stride` (a multiple of in->vec), over the block's row group tile [RPB, ITERS * G * VEC] of
 * the encoding P0 = (row, lane), Y = (round, element) - register it * VEC + k of thread
 * (row, lane) is column (it * G + lane) * VEC + k. Fills *w (desc and ctx owned by the caller:
 * release with ck_norm_window_spec_free). */
ck_status ck_norm_window_spec(int64_t n, const ck_norm_instance *in, const char *name,
                              int dtype, const char *stride, ck_dist_encoding *enc,
                              ck_tile_window_spec *w);
void ck_norm_window_spec_free(ck_tile_window_spec *w);

/* The windows x, r and ro of the instance's read stage as the forward's source holds them
 * (device C, malloc'd; NULL on failure, with the error recorded): each window's functions, its
 * storage type norm_win_<name>_t and norm_win_<name>_at(pointer, first row, row stride, rows). */
char *ck_norm_fwd_window_source(const ck_norm_fwd_problem *p, const ck_norm_instance *in);
/* The same, appended to b (window.c). */
ck_status ck_norm_fwd_windows(const ck_norm_fwd_problem *p, const ck_norm_instance *in, ck_sbuf *b);
/* The tuning table's problem key ("bf16>bf16/n=4096/rows=8/vec=8/t=4") and op name. */
void ck_norm_fwd_problem_key(const ck_norm_forward_desc *d, const ck_norm_fwd_problem *p, char *buf,
                             size_t size);
const char *ck_norm_table_name(int kind);

/* The backward's problem (dtype codes as above). */
typedef struct ck_norm_bwd_problem {
    int kind;
    const char *op;
    int64_t n, rows;
    ck_norm_rows x, dy, dx;
    int dyt, xt, gt, dxt, dgt, dbt;
    int vec, want_part; /* want_part: dgamma or dbeta asked */
} ck_norm_bwd_problem;

ck_status ck_norm_bwd_problem_of(const ck_norm_backward_desc *d, ck_norm_bwd_problem *p);
/* The backward's tuning-table problem key ("f16,f16>f16/n=512/rows=8/vec=8/t=1": dy, x > dx
 * types, hidden size, rows, vector width, dgamma / dbeta asked as bits) and op name. */
void ck_norm_bwd_problem_key(const ck_norm_bwd_problem *p, char *buf, size_t size);
const char *ck_norm_bwd_table_name(int kind);

/* The backward's instance on ctx (checks included; in->grid = 0 when there are no rows) and its
 * knobs' text; ck_norm_bwd_tune times the candidates and stores the fastest (`ck tune
 * layernorm|rmsnorm ... --bwd`). */
ck_status ck_norm_backward_plan(ck_context *ctx, const ck_norm_backward_desc *d,
                                ck_norm_instance *in, char *name, size_t name_size, char *problem,
                                size_t problem_size);
ck_status ck_norm_bwd_tune(ck_context *ctx, const ck_norm_backward_desc *d, int reps,
                           ck_norm_tune_progress progress, void *user, char *best, size_t best_size,
                           double *best_ms);

/* Shared checks. */
ck_status ck_norm_view_rows(const char *op, const char *name, const ck_tensor *t, ck_norm_rows *r);
ck_status ck_norm_check_vector(const char *op, const char *name, const ck_tensor *t, int64_t n,
                               int f32_only);
int ck_norm_row_check(const char *op, const char *name, const ck_tensor *t, const ck_norm_rows *x,
                      ck_norm_rows *r, ck_status *st);
int ck_norm_pick_vec(int64_t n, int x_esize, int count, const ck_tensor *const *ts,
                     const int64_t *strides);

/* ---- params.c */

/* The parameter table of the forward's / backward's source (CK_OP_MAX_PARAMS of room); its
 * count. */
int ck_norm_fwd_params(const ck_norm_fwd_problem *p, const ck_norm_instance *in, ck_op_param *t);
int ck_norm_bwd_params(const ck_norm_bwd_problem *p, const ck_norm_instance *in, ck_op_param *t);
/* The backward's dynamic shared memory (its ring) and the combine's threads per block. */
size_t ck_norm_bwd_ring_bytes(const ck_norm_bwd_problem *p, const ck_norm_instance *in);
unsigned ck_norm_bwd_combine_block(const ck_norm_instance *in);

/* The kernel `name` ("ck_norm_fwd"; "ck_norm_bwd" or "ck_norm_bwd_combine", one module) of the
 * problem's instance on ctx: built on a miss, keyed by the parameter table. */
ck_status ck_norm_fwd_kernel(ck_context *ctx, const ck_norm_fwd_problem *p,
                             const ck_norm_instance *in, ck_kernel **k);
ck_status ck_norm_bwd_kernel(ck_context *ctx, const ck_norm_bwd_problem *p,
                             const ck_norm_instance *in, const char *name, ck_kernel **k);

/* Full source of the forward kernel "ck_norm_fwd" for the given constants (malloc'd). The
 * dtype arguments are ck_dtype values, -1 for an absent tensor. */
char *ck_norm_fwd_source(int kind, int64_t n, const ck_norm_instance *in, int xt, int yt, int gt,
                         int bt, int rt, int ot, int st, int want_mean, int want_rstd);

/* Full source of the backward kernel "ck_norm_bwd" and of the combine kernel
 * "ck_norm_bwd_combine" (one module). */
char *ck_norm_bwd_source(int kind, int64_t n, const ck_norm_instance *in, int dyt, int xt, int gt,
                         int dxt, int dgt, int dbt);

/* ---- the CPU reference (reference.c), in double precision, one row of n values ---- */

/* The row's mean (layernorm; 0 for RMSNorm) and rstd = 1 / sqrt(var + eps), var the mean
 * squared deviation from the mean (layernorm) or the mean square (RMSNorm). */
void ck_norm_reference_stats(ck_norm_kind kind, int64_t n, const double *a, double eps,
                             double *mean, double *rstd);

/* y before quantization: layernorm (a - mean) rstd gamma + beta, RMSNorm a rstd gamma, none
 * (smooth quantization alone) a; times smooth. beta and smooth may be NULL (absent). */
void ck_norm_reference_y(ck_norm_kind kind, int64_t n, const double *a, double mean, double rstd,
                         const double *gamma, const double *beta, const double *smooth, double *y);

/* The quantized row's scale: max |y| / qmax (NaN when a y is NaN). */
double ck_norm_reference_scale(int64_t n, const double *y, double qmax);

/* The backward of one row given the forward's mean (layernorm) and rstd: xhat = (x - mean)
 * rstd, g = dy gamma, dx = rstd (g - mean(g) - xhat mean(g xhat)) (RMSNorm: no mean(g)); the
 * row's terms dy xhat and dy are added to dgamma and dbeta (each NULL: not wanted). */
void ck_norm_reference_bwd(ck_norm_kind kind, int64_t n, const double *dy, const double *x,
                           const double *gamma, double mean, double rstd, double *dx,
                           double *dgamma, double *dbeta);

#endif
