/*
 * One group of a grouped GEMM as the kernel reads it from device memory: the layout of the
 * public ck_gemm_group_desc (ck/gemm.h; grouped.c checks that the two agree field by field),
 * for the device sources, which do not include the public headers.
 */
#ifndef CK_OPS_GEMM_GROUP_KERNEL_H
#define CK_OPS_GEMM_GROUP_KERNEL_H

typedef struct ck_gemm_group_kdesc {
    long long m, n, k;
    const void *a, *b, *c;
    void *d;
    const void *bias;
    long long lda, ldb, ldc, ldd;
} ck_gemm_group_kdesc;

#endif
