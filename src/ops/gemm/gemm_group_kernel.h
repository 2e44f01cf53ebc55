/*
 * The lists of a grouped GEMM as the kernels read them from device memory, for the device
 * sources, which do not include the public headers: one group's description (the layout of the
 * public ck_gemm_group_desc) and the pointer arrays of a pointer-array batch (the layout of
 * ck_gemm_ptr_arrays); grouped.c and ptr_array.c check that each pair agrees field by field.
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

typedef struct ck_gemm_group_karrays {
    const void *const *a, *const *b, *const *c;
    void *const *d;
    const void *const *bias;
} ck_gemm_group_karrays;

#endif
