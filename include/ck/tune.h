/*
 * ck/tune.h - tuning one call of an operation from a program (what `ck tune OP ...` does from
 * the command line): every candidate instance of the call's problem is run (two warm-up runs,
 * then `reps` timed runs, the median kept), and the fastest is stored in the tuning table
 * (ck/tuning.h) for the context's device and the call's problem, where the operation's policy
 * finds it for later calls of the same problem (in this context at once, in others when they
 * next read the table). The call's outputs are overwritten. The GEMM's is ck_gemm_tune
 * (ck/gemm.h).
 *
 * Each function takes the operation's own arguments, then:
 *   reps        timed runs per candidate (>= 1)
 *   progress    called after each candidate (may be NULL): its index i of n, its instance
 *               text, its median ms or -1 when it could not run (the reason is logged)
 *   best        receives the winner's instance text (best_size bytes; may be NULL)
 *   best_ms     receives its median time (may be NULL)
 * Errors: those of the operation's call; CK_ERROR_UNSUPPORTED where the call has nothing to
 * tune (ck_elementwise / ck_cast on strided or sub-byte layouts); CK_ERROR_LAUNCH when no
 * candidate could run; CK_ERROR_IO when the table cannot be written.
 */
#ifndef CK_TUNE_H
#define CK_TUNE_H

#include "ck/attention.h"
#include "ck/conv.h"
#include "ck/elementwise.h"
#include "ck/norm.h"
#include "ck/permute.h"
#include "ck/reduce.h"
#include "ck/softmax.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*ck_tune_progress)(void *user, int i, int n, const char *instance, double ms);

ck_status ck_softmax_tune(ck_context *ctx, const ck_tensor *x, ck_tensor *y,
                          const ck_softmax_options *options, int reps, ck_tune_progress progress,
                          void *user, char *best, size_t best_size, double *best_ms);

ck_status ck_norm_forward_tune(ck_context *ctx, const ck_norm_forward_desc *desc, int reps,
                               ck_tune_progress progress, void *user, char *best, size_t best_size,
                               double *best_ms);

ck_status ck_norm_backward_tune(ck_context *ctx, const ck_norm_backward_desc *desc, int reps,
                                ck_tune_progress progress, void *user, char *best, size_t best_size,
                                double *best_ms);

ck_status ck_reduce_tune(ck_context *ctx, ck_reduce_op op, const ck_tensor *x, const int *axes,
                         int naxes, ck_tensor *y, const ck_reduce_options *opt, int reps,
                         ck_tune_progress progress, void *user, char *best, size_t best_size,
                         double *best_ms);

ck_status ck_permute_tune(ck_context *ctx, const ck_tensor *src, const int *perm, ck_tensor *dst,
                          int reps, ck_tune_progress progress, void *user, char *best,
                          size_t best_size, double *best_ms);

ck_status ck_copy_tune(ck_context *ctx, const ck_tensor *src, ck_tensor *dst, int reps,
                       ck_tune_progress progress, void *user, char *best, size_t best_size,
                       double *best_ms);

ck_status ck_cast_tune(ck_context *ctx, const ck_tensor *src, ck_tensor *dst,
                       const ck_convert_options *opt, int reps, ck_tune_progress progress,
                       void *user, char *best, size_t best_size, double *best_ms);

/* The attention's candidates: the sm90 kernel's tiles (two or three consumer warpgroups), the
 * sm80 kernel's, and for s_q <= 16 the decode kernel's (keys per warp, warps, split-KV parts);
 * those the plan refuses are skipped. args: device buffers of the problem (O and LSE are
 * overwritten). The stored metric is GB/s of Q, K, V and O. */
ck_status ck_attention_tune(ck_context *ctx, const ck_attention_problem *problem,
                            const ck_attention_args *args, int reps, ck_tune_progress progress,
                            void *user, char *best, size_t best_size, double *best_ms);

ck_status ck_elementwise_tune(ck_context *ctx, const ck_ew_program *prog, const ck_tensor *inputs,
                              int input_count, ck_tensor *dst, int reps, ck_tune_progress progress,
                              void *user, char *best, size_t best_size, double *best_ms);

/* A convolution (ck/conv.h): args holds device pointers of the problem's tensors in its
 * layout; the direction's output is overwritten. Candidates: the policy's choice, the direct
 * depthwise kernel's strips of 1, 2, 4 or 8 outputs (backward weight: with 1, 4, 16 or 64 lane
 * blocks of partial sums) where G = C = K, and the implicit GEMM routes' instances (plain GEMM,
 * sm90, sm80) that take the problem; instance texts "depthwise:s4", "depthwise:s2.b16",
 * "sm90:<GEMM instance>", "sm80:...", "gemm:...". Stored as op "conv" (docs/ops-conv.md). */
ck_status ck_conv_tune(ck_context *ctx, const ck_conv_problem *problem, const ck_conv_args *args,
                       int reps, ck_tune_progress progress, void *user, char *best,
                       size_t best_size, double *best_ms);

#ifdef __cplusplus
}
#endif
#endif
