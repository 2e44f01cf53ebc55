/*
 * ck_permute's gather pipeline (permute_kernel.h documents the constants): every item of the
 * index space copied from its source offset to its destination offset.
 */
#ifndef CK_OPS_PERMUTE_GATHER_KERNEL_H
#define CK_OPS_PERMUTE_GATHER_KERNEL_H
#include "ops/permute/permute_kernel.h"

typedef PERM_IDX_T perm_idx; /* unsigned int when PERM_IDX32, else long long */

CK_DEVICE void perm_gather(unsigned char *dst, const unsigned char *src, ck_perm_gather_args a)
{
    const perm_idx step = (perm_idx)ck_grid_dim_x() * ck_block_dim_x();
    for (perm_idx idx = (perm_idx)ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x();
         idx < (perm_idx)a.items; idx += step) {
        perm_idx rest = idx;
        long long so = 0, dof = 0;
        for (int d = (int)a.rank - 1; d >= 0; --d) {
            perm_idx i = rest % (perm_idx)a.len[d];
            rest /= (perm_idx)a.len[d];
            so += (long long)i * a.ss[d];
            dof += (long long)i * a.ds[d];
        }
        if (PERM_VEC > 1)
            ck_st16((PERM_T *)dst + dof * PERM_VEC,
                    ck_ld16_nc((const PERM_T *)src + so * PERM_VEC));
        else
            ((PERM_T *)dst)[dof] = ((const PERM_T *)src)[so];
    }
}

#endif
