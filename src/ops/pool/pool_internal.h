/*
 * The pooling op's parts (src/ops/pool), CK's names:
 *
 *   problem.c                 ck_pool_problem -> ck_pool_prob (checks, torch's output lengths,
 *                             the convolution geometry whose views the kernels read)
 *   policy.c                  the instance: vector width, tile, threads
 *   fwd_pipeline_kernel.h     forward: per tap, load the tile of the im2col view, combine (max
 *                             with its tap, or sum); divisor / index; store
 *   bwd_pipeline_kernel.h     max-pool backward per residue class: per tap, load dY and the
 *                             indices through backward data's view of dY, keep the matches
 *   kernel.c                  the parameter table (defines and cache key), windows, launches
 *   reference.c               the CPU references (direct loops)
 *
 * The views are ck_conv's (src/ops/conv/descriptor.c): pooling is a depthwise convolution
 * whose reduction is max or average, so the forward reads conv's im2col view (pad -> embed ->
 * merge, M = N * out, K = taps * C) one tap at a time, and the backward reads the view of dY
 * that conv's backward data builds for each class of input residues mod the stride (no tap
 * that cannot reach an input element is visited) and stores through conv's dX view.
 */
#ifndef CK_SRC_OPS_POOL_INTERNAL_H
#define CK_SRC_OPS_POOL_INTERNAL_H

#include "ck/pool.h"
#include "ops/conv/conv_internal.h"

typedef struct ck_pool_prob {
    ck_pool_problem p;
    /* spatial arrays padded to 3 dims at the front (length 1, stride 1, no padding) */
    int64_t in[3], ker[3], str[3], dil[3], pad[3], out[3];
    int64_t m;      /* N * prod(out): rows of the view */
    int64_t taps;   /* prod(kernel) */
    int es;         /* element bytes */
    int is;         /* index bytes (0: none) */
    ck_conv_prob q; /* the depthwise convolution (g 1, c = k = C) with the same windows */
} ck_pool_prob;

/* Check and derive; `backward` adds the backward's checks (max, indices). */
ck_status ck_pool_prob_make(const ck_pool_problem *problem, int backward, ck_pool_prob *prob);

/* How: vec elements per access along C, a tile of tm rows x tc channels (tc divides C),
 * threads per block. */
typedef struct ck_pool_instance {
    int vec, tm, tc, threads;
} ck_pool_instance;

/* align: the bytes every pointer of the launch is aligned to (16 or less); the vector moves at
 * most that many bytes of the widest element (the int64 indices count 8 per element). */
void ck_pool_policy(const ck_pool_prob *prob, int align, ck_pool_instance *inst);

/* The kernel source of the forward, or of the backward's first residue class, for the NVRTC
 * test (no device needed). *source: free with ck_tile_free. */
ck_status ck_pool_source(const ck_pool_problem *problem, int backward, char **source);

#endif
