/*
 * Device code of ck_permute (src/ops/permute/params.c generates a source that #defines the
 * constants below and includes this file).
 *
 *   PERM_E        element bytes: 1, 2, 4 or 8
 *   PERM_T        the element's integer type (uint8_t ... uint64_t)
 *   PERM_GN, PERM_GM (tile kernel) the tile shape: GN x GM blocks of V x V elements (8, 16, 32)
 *   PERM_MIN_BLOCKS (tile kernel) blocks per SM of the launch bounds (ck_perm_blocks_per_sm)
 *
 * The generated source declares the kernel (the runtime finds kernels in the source it is
 * given), includes its pipeline and calls its body; branches on the constants are constant
 * conditions the compiler folds:
 *
 * perm_tile (permute_tile_kernel.h): dst[b][m][n] = src[b][n][m] in tiles through shared
 * memory (layout: permute_layout_kernel.h). PERM_LDVEC / PERM_STVEC: 1 when the source rows /
 * destination rows allow 16-byte vectors (pointer and strides aligned), else element accesses.
 * Each block walks tiles blockIdx.x,
 * blockIdx.x + gridDim.x, ...; full tiles use no masks.
 *
 * perm_gather (permute_gather_kernel.h): every element (or 16-byte vector along the last
 * dimension when PERM_VEC > 1) of an index space copied from its source
 * offset to its destination offset (rank a.rank, at most 8). PERM_IDX32: the item count fits 32
 * bits (PERM_IDX_T, from the generator, is the index type).
 */
#ifndef CK_OPS_PERMUTE_KERNEL_H
#define CK_OPS_PERMUTE_KERNEL_H
#include "ops/permute/permute_args_kernel.h"
#include "ops/permute/permute_layout_kernel.h"

#define PERM_V (16 / PERM_E)

#define PERM_WORDS_PER_ELEM (PERM_E == 8 ? 2 : 1)
/* sub-word elements (PERM_E < 4): elements per 32-bit word and bits per element */
#define PERM_EPW   (PERM_E < 4 ? 4 / PERM_E : 1)
#define PERM_EBITS (PERM_E < 4 ? 8 * PERM_E : 8)

/* Element k (k < V) of the 16 bytes w[0..3] / put it there (w zeroed first). */
CK_DEVICE PERM_T perm_get(const uint32_t *w, int k)
{
    if (PERM_E == 8)
        return (PERM_T)((uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32));
    if (PERM_E == 4)
        return (PERM_T)w[k];
    return (PERM_T)(w[k / PERM_EPW] >> (PERM_EBITS * (k % PERM_EPW)));
}

CK_DEVICE void perm_put(uint32_t *w, int k, PERM_T v)
{
    if (PERM_E == 8) {
        w[2 * k] = (uint32_t)v;
        w[2 * k + 1] = (uint32_t)((uint64_t)v >> 32);
    } else if (PERM_E == 4) {
        w[k] = (uint32_t)v;
    } else {
        w[k / PERM_EPW] |= (uint32_t)v << (PERM_EBITS * (k % PERM_EPW));
    }
}

#endif
