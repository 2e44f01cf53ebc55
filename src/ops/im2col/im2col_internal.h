/*
 * ck_im2col's parts (src/ops/im2col), CK's names:
 *
 *   problem.c                    ck_conv_problem -> ck_im2col_prob (checks, matrix lengths)
 *   policy.c                     the instance: vector width, tile, threads
 *   im2col_pipeline_kernel.h     device: load the tile through the im2col view, store it
 *   kernel.c                     the parameter table (defines and cache key), the windows, launch
 *   reference.c                  the CPU reference (direct index arithmetic)
 */
#ifndef CK_SRC_OPS_IM2COL_INTERNAL_H
#define CK_SRC_OPS_IM2COL_INTERNAL_H

#include "ck/im2col.h"
#include "ops/conv/conv_internal.h"

typedef struct ck_im2col_prob {
    ck_conv_prob q; /* the convolution's checked geometry (c per group) */
    int64_t m, k;   /* the matrix of one group: N * prod(out) x prod(filter) * C */
    int es;         /* element bytes */
} ck_im2col_prob;

/* How: vec elements per access along K, a tile of tm x tk elements, threads per block. */
typedef struct ck_im2col_instance {
    int vec, tm, tk, threads;
} ck_im2col_instance;

ck_status ck_im2col_prob_make(const ck_conv_problem *problem, ck_im2col_prob *prob);

/* The instance; align: the bytes both pointers are aligned to (16 or less: the vector is at
 * most that wide, the windows' accesses being as wide as the vector). */
void ck_im2col_policy(const ck_im2col_prob *prob, int align, ck_im2col_instance *inst);

/* The kernel source of the problem, for the NVRTC test. *source: free with ck_tile_free. */
ck_status ck_im2col_source(const ck_conv_problem *problem, char **source);

#endif
