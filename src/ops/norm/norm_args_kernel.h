/*
 * The layernorm / RMSNorm kernels' argument structs, one definition for the host (kernel.c) and
 * the device pipelines (norm_fwd_kernel.h, norm_bwd_kernel.h): passed by value as the kernels'
 * parameter. Strides are in elements (rows of x, residual, y, residual_out, dy, dx).
 */
#ifndef CK_OPS_NORM_ARGS_KERNEL_H
#define CK_OPS_NORM_ARGS_KERNEL_H

typedef struct ck_norm_fwd_kargs {
    const void *x;
    long long sx;
    const void *residual; /* NULL: none */
    long long sr;
    void *y;
    long long sy;
    void *resout; /* residual_out, NULL: none */
    long long so;
    const void *gamma, *beta, *smooth;   /* NULL: absent */
    float *yscale, *mean_out, *rstd_out; /* f32 [rows], NULL: not asked */
    long long rows;
    float eps;
} ck_norm_fwd_kargs;

typedef struct ck_norm_bwd_kargs {
    const void *dy;
    long long sdy;
    const void *x;
    long long sx;
    const void *gamma;
    const float *mean, *rstd;
    void *dx;
    long long sdx;
    float *part; /* the partial dgamma/dbeta rows (workspace), NULL: not asked */
    long long rows;
} ck_norm_bwd_kargs;

typedef struct ck_norm_combine_kargs {
    const float *part;
    long long np; /* partial rows */
    void *dgamma, *dbeta;
} ck_norm_combine_kargs;

#endif
