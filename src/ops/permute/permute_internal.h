/*
 * Internals of ck_permute shared with its tests: the plan (collapsed problem and kernel choice)
 * and the shared-memory bank-conflict check of the tile kernel's layout. Not installed. The op
 * in CK's parts:
 *   problem.c   argument checks -> the collapsed problem and its kind (ck_perm_plan)
 *   policy.c    tile shape and grid (heuristic, tuning table, developer switch), bank check
 *   params.c    THE parameter table of the generated source: its #defines and the kernel cache
 *               key are printed from the same list
 *   kernel.c    the launch (argument structs shared with the device: permute_args_kernel.h)
 *   reference.c  the CPU reference (tests and `ck prof permute`)
 *   window.c    the tile kernel's global loads and stores as tile windows (opt-in: PERM_WINDOW)
 *   permute_kernel.h (shared), permute_tile/gather_kernel.h (the pipelines), permute_layout_kernel.h (the tile layout),
 *   permute_window_kernel.h (the tile's read and write stages over the windows)
 *   tune.c      `ck tune permute`
 */
#ifndef CK_SRC_OPS_PERMUTE_PERMUTE_INTERNAL_H
#define CK_SRC_OPS_PERMUTE_PERMUTE_INTERNAL_H

#include <stddef.h>

#include "ck/context.h"
#include "ck/permute.h"
#include "gen/sbuf.h"
#include "ops/common/op_window.h"

typedef enum ck_perm_kind {
    CK_PERM_NOTHING = 0, /* no elements */
    CK_PERM_TILE = 1,    /* transpose through shared memory */
    CK_PERM_GATHER = 2   /* element (or 16-byte vector) copy over an index space */
} ck_perm_kind;

typedef struct ck_perm_plan {
    ck_perm_kind kind;
    int elem_bytes; /* 1, 2, 4, 8 (sub-byte types become bytes) */
    /* the problem after dropping length-1 dimensions and merging dimensions that stay adjacent
     * and in order, in the destination's order: element i -> src + sum i_d ss[d],
     * dst + sum i_d ds[d] (elements) */
    int rank;
    long long len[CK_TENSOR_MAX_RANK], ss[CK_TENSOR_MAX_RANK], ds[CK_TENSOR_MAX_RANK];
    /* CK_PERM_TILE: n = rank - 1 (the destination's contiguous dim), m (the source's) */
    int dim_m;
    int ld_vec, st_vec;  /* 16-byte global loads / stores allowed */
    int gn, gm;          /* tile shape (permute_layout_kernel.h): (gn V) x (gm V) elements */
    int tiles_per_block; /* 0: automatic grid (at launch, from the SM count); else forced */
    int window; /* the tile's global loads and stores through generated tile windows
                 * (window.c, permute_window_kernel.h), PERM_WINDOW; 0: indexed by hand */
    /* CK_PERM_GATHER: elements per item (16 / elem_bytes when vectorized, else 1) */
    int vec;
    unsigned char *dst;
    const unsigned char *src;
} ck_perm_plan;

/* Check the arguments (as ck_permute) and fill *plan. */
ck_status ck_permute_plan(const ck_tensor *dst, const ck_tensor *src, const int *perm,
                          ck_perm_plan *plan);

/* Replay the tile kernel's shared-memory accesses of one tile (elem_bytes 1, 2, 4 or 8; shape
 * gn x gm, ck_perm_shape_ok) on the bank model of ck_access_hw_default: *pass1 / *pass2 receive
 * the worst number of bank-conflict ways of any quarter-warp phase of the 16-byte stores /
 * loads (1 = free). */
void ck_permute_smem_ways(int elem_bytes, int gn, int gm, int *pass1, int *pass2);

/* Tile shape and grid of a tile plan: automatic (ck_permute_plan calls it) unless the
 * environment variable CK_PERMUTE_INSTANCE="TN,TM,TPB[,W]" names a valid instance: TN x TM
 * elements per tile (TN along the destination's contiguous dimension, TM along the source's;
 * each 8, 16 or 32 times 16 / element bytes), TPB tiles per block (0: automatic grid), W 1:
 * global accesses through tile windows where the plan allows (ck_permute_window_ok). */
void ck_permute_choose_tile(ck_perm_plan *plan, const char *env);

/* The tile shape and grid of a tile plan without a context: the heuristic's, or the developer
 * switch CK_PERMUTE_INSTANCE's (ck_permute_choose_tile; ck_permute_plan calls it). */
void ck_permute_default_tile(ck_perm_plan *plan);

/* ck_permute_plan with the tuning table's tile shape for a tiled transpose (ck tune permute;
 * the instance ck tune forces, else the table's entry unless CK_PERMUTE_INSTANCE is set);
 * problem (size bytes, may be NULL) receives the table's problem key ("" for a gather). */
ck_status ck_permute_plan_on(ck_context *ctx, const ck_tensor *dst, const ck_tensor *src,
                             const int *perm, ck_perm_plan *plan, char *problem, size_t size);

/* The developer switch CK_PERMUTE_WINDOW=0|1 over the plan's window field. */
void ck_permute_window_env(ck_perm_plan *plan);

/* A tile shape's text in the table's form "TN,TM,TPB[,1]" (elements, tiles per block, through
 * windows). */
void ck_permute_instance_name(const ck_perm_plan *plan, char *buf, size_t size);

/* `ck tune permute`: times every tile shape and grid of the transpose and stores the fastest
 * (CK_ERROR_UNSUPPORTED for a permutation that is not a tiled transpose). */
typedef void (*ck_permute_tune_progress)(void *user, int i, int n, const char *instance, double ms);
ck_status ck_permute_tune(ck_context *ctx, const ck_tensor *src, const int *perm, ck_tensor *dst,
                          int reps, ck_permute_tune_progress progress, void *user, char *best,
                          size_t best_size, double *best_ms);

/* Blocks of the tile kernel's launch for a plan on a GPU with `sms` multiprocessors. */
long long ck_permute_tile_blocks(const ck_perm_plan *plan, long long tiles, int sms);

/* The device source of a plan's kernel (malloc'd) and its kernel name. */
ck_status ck_permute_source(const ck_perm_plan *plan, char **source, const char **kernel_name);

/* The kernel of a plan on ctx (built on a miss; keyed by the parameter table). */
ck_status ck_permute_kernel(ck_context *ctx, const ck_perm_plan *plan, ck_kernel **kernel);

/* ---- window.c: the tile kernel's global loads (s: full tiles, se: edge tiles) and stores (d,
 * de) as generated tile windows */

/* Whether the plan's tile kernel can go through windows (every tile plan). */
int ck_permute_window_ok(const ck_perm_plan *plan);
/* Whether window NAME of the plan views its rows as 4-byte words (1- and 2-byte elements, the
 * full-tile windows s / d where the plan's 16-byte accesses are): permute_window_kernel.h's
 * PERM_WORDS_S / PERM_WORDS_D are the same condition. */
int ck_permute_window_words(const ck_perm_plan *plan, const char *name);
/* Whether load window NAME holds one chunk (pass 1 calls it per chunk q at row n0 + q * GN):
 * the edge loads se, and the element-register loads s of 1- and 2-byte elements. */
int ck_permute_window_by_chunk(const ck_perm_plan *plan, const char *name);
/* The windows s, se, d and de of the plan's source, appended to b. */
ck_status ck_permute_windows(const ck_perm_plan *plan, ck_sbuf *b);
/* One of them (for the tests; release with ck_op_window_free). */
ck_status ck_permute_window_spec(const ck_perm_plan *plan, const char *name, ck_op_window *w);

/* CPU reference (reference.c; test_permute and `ck prof permute` share it): dst = src with
 * dimension d of dst taken from dimension perm[d] of src, on host memory (the tensors' data are
 * host pointers; strides in elements). Packed sub-byte types: packed row-major tensors whose last
 * dimension stays, copied by rows of bytes. Errors: NULL arguments, ranks or shapes that do not
 * match perm. */
ck_status ck_permute_reference(ck_tensor *dst, const ck_tensor *src, const int *perm);

#endif
