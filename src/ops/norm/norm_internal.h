/* Internal interface of src/ops/norm (tests use it to compile the generated kernels). */
#ifndef CK_SRC_OPS_NORM_NORM_INTERNAL_H
#define CK_SRC_OPS_NORM_NORM_INTERNAL_H

#include <stdint.h>
#include <stddef.h>

#include "ck/norm.h"

/* A row tensor seen as rows x n with a row stride (elements). */
typedef struct ck_norm_rows {
    int64_t rows, n, stride;
} ck_norm_rows;

/* The chosen instance of a problem. */
typedef struct ck_norm_instance {
    int vec;     /* elements per vector access */
    int g;       /* threads per row (<= 32: several rows per block; else the block) */
    int block;   /* threads per block */
    int iters;   /* vectors per thread and row */
    int cache;   /* of which kept in registers */
    int raw;     /* forward: the cache holds x's raw 16-bit codes */
    int cluster; /* forward: blocks per row (a thread-block cluster, sm_90); 1: none */
    unsigned grid;
} ck_norm_instance;

/* Choose the instance for hidden size n, vector width vec, `rows` rows on `sms` multiprocessors
 * (cache_floats: register budget for the row cache per thread). */
void ck_norm_pick(int64_t n, int vec, int64_t rows, int sms, ck_norm_instance *in);

/* The forward's instance: one row group per block (grid = row groups), the row in registers.
 * raw_ok: 1 when x is 16-bit, read as 16-byte vectors, without a residual (its raw codes may
 * be cached where f32 values would not fit), 2 when x is bf16 besides (raw codes preferred
 * in every block instance); 0 otherwise. CK_NORM_FWD overrides (norm.c). */
void ck_norm_pick_fwd(int64_t n, int vec, int64_t rows, int raw_ok, int clusters_ok,
                      ck_norm_instance *in);

/* What steers the forward's policy beyond the problem: a tuning-table entry (`ck tune
 * layernorm|rmsnorm`), the instance ck tune times, or the developer switches (norm.c). */
typedef struct ck_norm_fwd_knobs {
    int g;        /* threads per row (0: the heuristic) */
    int vals;     /* f32 values per thread before a larger block (default 32) */
    int vals_set; /* vals given */
    int raw;      /* -1 heuristic, 0/1 forbid / force the raw 16-bit cache */
    int block;    /* threads per block of the lane-group instance (default 128) */
    int cc, cg;   /* cluster instance: blocks per row and threads per block (0: none) */
} ck_norm_fwd_knobs;

void ck_norm_fwd_knobs_none(ck_norm_fwd_knobs *k);
/* The developer switches CK_NORM_FWD and CK_NORM_CLUSTER over k. */
void ck_norm_fwd_knobs_env(ck_norm_fwd_knobs *k);
/* An instance's text in the tuning table's form "fwd,G,RAW,BLOCK,CLUSTER" (or "auto": no
 * knob); 0 when it does not parse. */
int ck_norm_fwd_knobs_parse(ck_norm_fwd_knobs *k, const char *text);
void ck_norm_fwd_instance_name(const ck_norm_instance *in, char *buf, size_t size);
/* ck_norm_pick_fwd with the given knobs (ck_norm_pick_fwd: the developer switches'). */
void ck_norm_pick_fwd_with(int64_t n, int vec, int64_t rows, int raw_ok, int clusters_ok,
                           const ck_norm_fwd_knobs *knobs, ck_norm_instance *in);

/* The forward's instance for d on ctx (checks included) and the tuning table's problem key;
 * in->grid = 0 when there is nothing to compute. ck_norm_tune times the candidates and stores
 * the fastest (`ck tune layernorm|rmsnorm`). */
ck_status ck_norm_forward_plan(ck_context *ctx, const ck_norm_forward_desc *d,
                               ck_norm_instance *in, char *problem, size_t problem_size);
typedef void (*ck_norm_tune_progress)(void *user, int i, int n, const char *instance, double ms);
ck_status ck_norm_tune(ck_context *ctx, const ck_norm_forward_desc *d, int reps,
                       ck_norm_tune_progress progress, void *user, char *best, size_t best_size,
                       double *best_ms);

/* Full source of the forward kernel "ck_norm_fwd" for the given constants (malloc'd). The
 * dtype arguments are ck_dtype values, -1 for an absent tensor. */
char *ck_norm_fwd_source(int kind, int64_t n, const ck_norm_instance *in, int xt, int yt, int gt,
                         int bt, int rt, int ot, int st, int want_mean, int want_rstd);

/* Full source of the backward kernel "ck_norm_bwd" and of the combine kernel
 * "ck_norm_bwd_combine" (one module). */
char *ck_norm_bwd_source(int kind, int64_t n, const ck_norm_instance *in, int dyt, int xt, int gt,
                         int dxt, int dgt, int dbt);

/* Shared by norm.c and norm_bwd.c. */
ck_status ck_norm_view_rows(const char *op, const char *name, const ck_tensor *t,
                            ck_norm_rows *r);
ck_status ck_norm_check_vector(const char *op, const char *name, const ck_tensor *t, int64_t n,
                               int f32_only);
int ck_norm_row_check(const char *op, const char *name, const ck_tensor *t, const ck_norm_rows *x,
                      ck_norm_rows *r, ck_status *st);
int ck_norm_pick_vec(int64_t n, int x_esize, int count, const ck_tensor *const *ts,
                     const int64_t *strides);
/* Kernel `name` of the module built from `src` (freed here; it is also the cache key). */
ck_status ck_norm_get_kernel(ck_context *ctx, char *src, const char *name, ck_kernel **k);

#endif
