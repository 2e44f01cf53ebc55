/*
 * The permute kernels' argument structs, one definition for the host (kernel.c) and the device
 * (permute_kernel.h): passed by value after the destination and source pointers. All long long.
 */
#ifndef CK_OPS_PERMUTE_ARGS_KERNEL_H
#define CK_OPS_PERMUTE_ARGS_KERNEL_H

typedef struct ck_perm_tile_args {
    long long n, m; /* lengths of the destination's / the source's contiguous dimension */
    long long s_n;  /* source stride of n (elements) */
    long long d_m;  /* destination stride of m */
    long long tiles_m, tiles_n, tiles;
    long long nb;                    /* batch dimensions (0..6) */
    long long blen[6], bs[6], bd[6]; /* batch dimensions: lengths, source / destination strides */
} ck_perm_tile_args;

typedef struct ck_perm_gather_args {
    long long len[8]; /* the last in items (vectors of PERM_VEC elements) */
    long long ss[8], ds[8];
    long long items;
    long long rank;
} ck_perm_gather_args;

#endif
