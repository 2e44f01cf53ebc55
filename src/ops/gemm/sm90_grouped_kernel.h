/*
 * Grouped GEMM on the sm90 pipeline (grouped.c): the operand path of a group. The pipeline's
 * TMA boxes need tensor maps, made on the host from each tensor's address and shape; a group
 * list in device memory has neither on the host. So the producer warpgroup copies A and B
 * itself, through the pipeline's loader hooks (GEMM_A_LOADER / GEMM_B_LOADER, as convolution's
 * im2col): all 128 threads write each stage's operand tiles in the layout TMA would give them
 * (K-major: rows of 128 bytes; MN-major: boxes of 128 bytes of M or N by TILE_K rows; 16-byte
 * chunks swizzled by row % 8, gemm_swz), zero outside the group's matrix, from the pointers and
 * leading dimensions of the unit's group (the pipeline's walk, GEMM_GROUPED, hands the loaders
 * the group's arguments).
 *
 * Each group's operands are copied in 16-byte cp.async pieces where its pointer and leading
 * dimension are 16-byte multiples (GEMM_A_VEC_AT / GEMM_B_VEC_AT, defined by the source), else
 * element by element with plain loads and stores. The stage's full barrier then counts the
 * thread in: when its cp.async copies land (arrive.noinc), or, after plain stores, with a
 * release arrive once its own copies have landed (cp.async.mbarrier.arrive does not order plain
 * stores).
 */
#ifndef CK_OPS_GEMM_SM90_GROUPED_KERNEL_H
#define CK_OPS_GEMM_SM90_GROUPED_KERNEL_H

#include "ck_block.h"
#include "ops/gemm/gemm_copy_kernel.h"
#include "ops/gemm/group_walk_kernel.h"

#define GEMM_GROUPED 1

/* The tile of `rows` rows of M or N from mn0 and TILE_K of K from k0 of a matrix (p, ld, es
 * bytes per element; mn x k valid), into a stage's operand tile s. */
CK_DEVICE void sm90_group_load(unsigned char *s, const void *p, long long ld, int es, int kmajor,
                               int vec, int rows, long long mn0, long long mn, long long k0,
                               long long k)
{
    int tid = (int)ck_warpgroup_thread();
    if (kmajor) { /* rows of 128 bytes of K */
        gemm_tile_src t = {(const unsigned char *)p, ld * es, mn0, mn, k0 * es, k * es};
        if (vec)
            gemm_copy_vec(s, t, rows, 128, tid, CK_WARPGROUP_THREADS);
        else
            gemm_copy_scalar(s, t, rows, 128, es, tid, CK_WARPGROUP_THREADS);
        return;
    }
    int box = 128 / es; /* MN-major: boxes of 128 bytes of M or N by TILE_K rows of k */
    for (int j = 0; j < rows / box; ++j) {
        gemm_tile_src t = {(const unsigned char *)p, ld * es, k0, k, (mn0 + j * box) * es, mn * es};
        unsigned char *sj = s + j * GEMM_TILE_K * 128;
        if (vec)
            gemm_copy_vec(sj, t, GEMM_TILE_K, 128, tid, CK_WARPGROUP_THREADS);
        else
            gemm_copy_scalar(sj, t, GEMM_TILE_K, 128, es, tid, CK_WARPGROUP_THREADS);
    }
}

CK_DEVICE void sm90_group_load_a(unsigned char *s, const ck_gemm_kargs *ka, int batch, long long m0,
                                 long long k0)
{
    (void)batch;
    sm90_group_load(s, ka->a, ka->lda, GEMM_ES(GEMM_A_TYPE), GEMM_A_KMAJOR, GEMM_A_VEC_AT(ka),
                    GEMM_TILE_M, m0, ka->m, k0, ka->k);
}

CK_DEVICE void sm90_group_load_b(unsigned char *s, const ck_gemm_kargs *ka, int batch, long long n0,
                                 long long k0)
{
    (void)batch;
    sm90_group_load(s, ka->b, ka->ldb, GEMM_ES(GEMM_B_TYPE), GEMM_B_KMAJOR, GEMM_B_VEC_AT(ka),
                    GEMM_TILE_N, n0, ka->n, k0, ka->k);
}

/* The thread's arrival on a stage's full barrier (see above). */
CK_DEVICE void sm90_group_arrive(unsigned long long *full, const ck_gemm_kargs *ka)
{
    if (GEMM_A_VEC_AT(ka) && GEMM_B_VEC_AT(ka)) {
        ck_cp_async_mbar_arrive_noinc(full);
    } else {
        ck_cp_async_wait_all();
        (void)ck_mbar_arrive(full);
    }
}

#define GEMM_A_LOADER                sm90_group_load_a
#define GEMM_B_LOADER                sm90_group_load_b
#define GEMM_LOADER_ARRIVE(full, ka) sm90_group_arrive(full, ka)

#endif
