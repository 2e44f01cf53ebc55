/* Internal interface of src/ops/norm (tests use it to compile the generated kernels). */
#ifndef CK_SRC_OPS_NORM_NORM_INTERNAL_H
#define CK_SRC_OPS_NORM_NORM_INTERNAL_H

#include <stdint.h>

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
