/*
 * The depthwise convolution kernel's argument struct (src/ops/conv/depthwise.c and
 * dw_pipeline_kernel.h), one definition for the host and the device, passed by value.
 */
#ifndef CK_OPS_CONV_DW_ARGS_KERNEL_H
#define CK_OPS_CONV_DW_ARGS_KERNEL_H

typedef struct ck_conv_dw_kargs {
    const void *x;        /* the gathered tensor: X (forward) or dY (backward data) */
    const void *w;        /* the filter, G x taps (GKYXC with one channel per group); written
                             by backward weight's dw_wgrad_sum */
    void *y;              /* the written tensor: Y (forward) or dX (backward data) */
    const void *bias;     /* G values (DW_BIAS) */
    const void *residual; /* like y (DW_RES) */
    float alpha;
    float *ws; /* backward weight: the blocks' partial sums, [lane block][tap][g] */
} ck_conv_dw_kargs;

#endif
