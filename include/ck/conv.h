/*
 * ck/conv.h - grouped N-D convolution (CK's grouped conv fwd / bwd data / bwd weight) as an
 * implicit GEMM over tensor descriptors: the im2col view of the input is a chain of ck's
 * coordinate transforms (pad -> embed -> merge), and the GEMM's operand tiles are read through
 * copy windows generated from that descriptor -- no im2col buffer is ever written.
 *
 * Layouts (CK's names; every tensor packed, the last dim contiguous):
 *   input  X: N Hi Wi G C    (1-D: N Wi G C, 3-D: N Di Hi Wi G C)      "NHWGC"
 *   weight W: G K Y X C      (1-D: G K X C,  3-D: G K Z Y X C)         "GKYXC"
 *   output Y: N Ho Wo G K    (1-D: N Wo G K, 3-D: N Do Ho Wo G K)      "NHWGK"
 * with C and K the channels of one group (the problem's c / g and k / g; c = k = g: depthwise).
 * Spatial dim i of the output: out_i = (in_i + pl_i + pr_i - d_i * (filter_i - 1) - 1) / s_i + 1
 * (pl, pr: padding, d: dilation, s: stride); spatial arrays are outermost first (D, H, W).
 *
 *   forward          Y[n, o, g, k]  = epi(sum_{c, f} X[n, o s + f d - pl, g, c] W[g, k, f, c])
 *   backward data    dX[n, i, g, c] = sum_{k, f, o: o s + f d - pl = i} dY[n, o, g, k] W[g,k,f,c]
 *   backward weight  dW[g, k, f, c] = sum_{n, o} dY[n, o, g, k] X[n, o s + f d - pl, g, c]
 * (X outside the input, in the padding, reads as zero.) The forward epilogue is the GEMM's:
 * act(alpha * acc + residual + bias[g, k]) then the output cast (ck/gemm.h), the residual an
 * NHWGK tensor like Y. Accumulation is f32 (i32 for i8 x i8).
 *
 * 8-bit tensors (fp8 e4m3 / e5m2, int8): the two tensors a direction reads are both fp8 (e4m3
 * and e5m2 may mix) or both i8, each with a per-tensor f32 scale (ck_conv_args.scale_x /
 * scale_w / scale_y: a tensor's value is its code times its scale). The written tensor is f32,
 * f16, bf16 or fp8 (i8 inputs: also i32, the exact integer sum when every scale and alpha are
 * 1); its scale divides the value before the cast (code = cast(value / scale)). So the forward
 * is Y = cast(act(alpha * sx * sw * sum(X W) + residual + bias) / sy), as the GEMM's per-tensor
 * fp8 scales. The three directions run on the sm80 pipeline (mma.sync of 8-bit types: fp8 needs
 * sm_89 or later); fp8 forward also on the sm90 route (wgmma). docs/ops-conv.md describes the
 * descriptors, the kernels and what is left to do.
 */
#ifndef CK_CONV_H
#define CK_CONV_H

#include <stdint.h>

#include "ck/context.h"
#include "ck/gemm.h"
#include "ck/tile.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CK_CONV_MAX_DIMS = 3 };

/* The tensors' layouts. NCHW is taken through ck_permute: the plan's execution permutes the
 * inputs into the context's workspace in CK's layouts, runs the kernels there and permutes the
 * written tensor back (the bias stays G x K; a residual is NCHW like Y). */
typedef enum ck_conv_layout {
    CK_CONV_LAYOUT_NHWGC = 0, /* CK's: X NHWGC, W GKYXC, Y NHWGK (the default) */
    CK_CONV_LAYOUT_NCHW = 1   /* PyTorch's: X N C Hi Wi, W K C/G Y X ("KCRS"), Y N K Ho Wo
                                 (1-D / 3-D likewise: NCW / NCDHW, K C/G X / K C/G Z Y X) */
} ck_conv_layout;

typedef enum ck_conv_direction {
    CK_CONV_FWD = 0,       /* Y from X and W */
    CK_CONV_BWD_DATA = 1,  /* dX from dY and W */
    CK_CONV_BWD_WEIGHT = 2 /* dW from X and dY */
} ck_conv_direction;

/* What to compute. Channel counts are totals over the groups (as PyTorch / cuDNN), each
 * divisible by g. */
typedef struct ck_conv_problem {
    ck_conv_direction direction;
    int ndim;                           /* spatial dims: 1, 2 or 3 */
    int64_t n, g, c, k;                 /* batch, groups, input and output channels (totals) */
    int64_t in[CK_CONV_MAX_DIMS];       /* input spatial lengths (D, H, W order) */
    int64_t filter[CK_CONV_MAX_DIMS];   /* filter lengths (Z, Y, X) */
    int64_t out[CK_CONV_MAX_DIMS];      /* output lengths; 0: computed by the formula */
    int64_t stride[CK_CONV_MAX_DIMS];   /* >= 1 */
    int64_t dilation[CK_CONV_MAX_DIMS]; /* >= 1 */
    int64_t pad_left[CK_CONV_MAX_DIMS], pad_right[CK_CONV_MAX_DIMS]; /* >= 0 */
    /* Types. 16-bit and f32: in_dtype = wei_dtype (f32, f16, bf16); the forward's out_dtype
     * f32, f16 or bf16, the backward directions' out_dtype (dY) = in_dtype. 8-bit: the two
     * tensors the direction reads (forward X and W, backward data dY and W, backward weight X
     * and dY) fp8 e4m3 / e5m2 (any mix) or both i8; the written one (Y, dX, dW) f32, f16,
     * bf16, e4m3, e5m2, or i32 with i8 inputs. */
    ck_dtype in_dtype;       /* X (fwd, bwd weight) / dX (bwd data) */
    ck_dtype wei_dtype;      /* W / dW */
    ck_dtype out_dtype;      /* Y / dY */
    ck_gemm_compute compute; /* f32 inputs: TF32 (default) or 3xTF32 (CK_GEMM_COMPUTE_F32) */
    /* Forward epilogue (refused in the backward directions). */
    int bias;            /* 1: one value per output channel, G x K, added before act */
    ck_dtype bias_dtype; /* f32, f16, bf16 */
    ck_gemm_activation activation;
    int residual;            /* 1: an NHWGK tensor added before the activation */
    ck_dtype residual_dtype; /* f32, f16, bf16 */
    ck_conv_layout layout;   /* CK_CONV_LAYOUT_NHWGC (default) or CK_CONV_LAYOUT_NCHW */
} ck_conv_problem;

/* Fill *p: forward 2-D, every length 1, strides and dilations 1, no padding, bf16 everywhere,
 * no epilogue. */
void ck_conv_problem_init(ck_conv_problem *p);

/* The output lengths of the problem (p->out where given, else the formula) after the same
 * checks as a plan: CK_ERROR_INVALID_ARGUMENT with a sentence naming the field. */
ck_status ck_conv_output_lengths(const ck_conv_problem *p, int64_t out[CK_CONV_MAX_DIMS]);

/* Elements of each tensor of the problem (after the checks): X, W, Y. */
ck_status ck_conv_tensor_elements(const ck_conv_problem *p, int64_t *x, int64_t *w, int64_t *y);

/* Pointers of one execution (device memory). Forward reads x and w and writes y; backward data
 * reads y (dY) and w and writes x (dX); backward weight reads x and y (dY) and writes w (dW). */
typedef struct ck_conv_args {
    void *x, *w, *y;
    const void *bias;     /* forward with bias: G x K values */
    const void *residual; /* forward with residual: like y; must not overlap y */
    float alpha;          /* the product's scale (1) */
    /* Per-tensor scales of a problem with 8-bit inputs (1; other problems must keep 1): a read
     * tensor's value is code * scale, the written tensor's code is cast(value / scale) in its
     * type (i32 included). Finite and nonzero. */
    float scale_x, scale_w, scale_y;
} ck_conv_args;

/* alpha 1, scales 1, pointers NULL. */
void ck_conv_args_init(ck_conv_args *args);

typedef struct ck_conv_plan ck_conv_plan;

/* Check the problem (every refusal a sentence), build the im2col descriptors, choose the GEMM
 * instance and generate and build the kernel(s). Free with ck_conv_plan_destroy. */
ck_status ck_conv_plan_create(ck_context *ctx, const ck_conv_problem *problem, ck_conv_plan **plan);

/* Run on the context's stream (pointers checked: non-NULL and aligned to the element; scales
 * finite and nonzero, 1 for tensors that are not 8-bit). With
 * layout CK_CONV_LAYOUT_NCHW the run uses the context's workspace (ck/context.h) for the
 * tensors in CK's layouts: ck_permute in, the kernels, ck_permute of the written tensor out. */
ck_status ck_conv_plan_execute(ck_conv_plan *plan, const ck_conv_args *args);

/* A sentence naming the kernel(s): the GEMM instance, its M x N x K, groups. */
ck_status ck_conv_plan_describe(const ck_conv_plan *plan, char *buf, size_t size);

void ck_conv_plan_destroy(ck_conv_plan *plan);

/* The im2col view of the forward problem's input for one group as a ck descriptor (ck/tile.h):
 * a naive descriptor of X's N, spatial and C dims (G fixed by the group's base pointer), then pad
 * of every spatial dim, embed of (filter, output) onto each padded spatial dim with coefficients
 * (dilation, stride), and merge of (N, out...) into the GEMM's M and of (filter..., C) into its K.
 * The visible dims are (M, K) = (N * prod out, prod filter * C). The caller owns *out
 * (ck_descriptor_destroy). */
ck_status ck_conv_im2col_descriptor(const ck_conv_problem *p, ck_descriptor **out);

/* The CPU reference of the problem's direction from host copies (f64 sums of the decoded
 * codes, seven nested loops), writing the output tensor of the direction in its layout and type
 * (the scales as ck_conv_args says: 8-bit codes decoded, products scaled, the written value
 * divided by its tensor's scale before the cast). The reference reads and writes CK's layouts
 * (NHWGC / GKYXC / NHWGK) whatever p->layout says. */
ck_status ck_conv_reference(const ck_conv_problem *p, const ck_conv_args *host);

/* The reference's value of output element `index` (in the written tensor's layout) before the
 * activation (forward), the written tensor's scale and the output cast -- the input scales and
 * alpha applied --, and the sum of the magnitudes of its terms (*abs_terms, may be NULL). */
double ck_conv_reference_value(const ck_conv_problem *p, const ck_conv_args *host, int64_t index,
                               double *abs_terms);

#ifdef __cplusplus
}
#endif
#endif /* CK_CONV_H */
