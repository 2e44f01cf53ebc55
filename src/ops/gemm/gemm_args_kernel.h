/*
 * The GEMM kernels' argument struct, one definition for the host (src/ops/gemm/ .c files) and the
 * device sources (*_pipeline_kernel.h): passed by value as the first kernel parameter. Tensor
 * maps (sm90 family) follow as separate CK_GRID_CONSTANT parameters.
 */
#ifndef CK_OPS_GEMM_ARGS_KERNEL_H
#define CK_OPS_GEMM_ARGS_KERNEL_H

#include "ops/gemm/gemm_group_kernel.h"

typedef struct ck_gemm_kargs {
    const void *a, *b, *c;
    void *d;
    const void *bias;
    long long m, n, k;
    long long lda, ldb, ldc, ldd; /* elements, in each matrix's own order */
    float alpha;                  /* alpha * scale_a * scale_b */
    float beta;
    float inv_scale_d;    /* 1 / scale_d */
    int tiles_m, tiles_n; /* tile counts of the partitioner */
    int k_tiles;          /* ceil(k / tile_k) */
    int k_splits;         /* split-K: K ranges per tile (1: none; sm90 family) */
    float *ws;            /* split-K: partial sums, [tile][split][thread's registers] */
    unsigned *ws_flags;   /* split-K: per tile part, the splits that have arrived (0 between
                             launches: the last arriving split resets it) */
    int batch;            /* products of the batch (1: not batched) */
    long long batch_a, batch_b, batch_c, batch_d, batch_bias; /* batch strides, elements
                             (0: the same matrix or bias for every batch) */
    const void *extra[4];      /* multi-D extras (CK_GEMM_MAX_EXTRAS), NULL beyond the count */
    long long ld_extra[4];     /* full extras: leading dimension; vectors: 0 */
    long long batch_extra[4];  /* batch strides, elements */
    /* quantized operands (quant.c; GEMM_QUANT): scale tensors (NULL: per-tensor), element
     * strides along their MN blocks and K blocks (0 along K: one block), block extents along M
     * and N, packed B's zero points (in B's scale layout), the K block of the promotion */
    const float *sa, *sb;
    const unsigned char *zb;
    long long sa_mn, sa_k, sb_mn, sb_k;
    int sa_bmn, sb_bmn;
    int q_bk, q_kblocks;
    /* grouped GEMM (grouped.c, group_walk_kernel.h): group_count products, described by the
     * device list `groups`, or (pointer-array batches, GEMM_PTR_ARRAY) all of the sizes and
     * leading dimensions above with their matrices at the pointers of `arrays` */
    const ck_gemm_group_kdesc *groups;
    ck_gemm_group_karrays arrays;
    int group_count;
} ck_gemm_kargs;

#endif
