/* ck/tune.h: the public names of the operations' tuners (each op's tune.c holds the tuner;
 * ck_reduce_tune and ck_permute_tune are theirs directly). */
#include "ck/tune.h"
#include "ops/elementwise/ew_internal.h"
#include "ops/norm/norm_internal.h"
#include "ops/softmax/softmax_plan.h"

ck_status ck_softmax_tune(ck_context *ctx, const ck_tensor *x, ck_tensor *y,
                          const ck_softmax_options *options, int reps, ck_tune_progress progress,
                          void *user, char *best, size_t best_size, double *best_ms)
{
    return ck_smx_tune(ctx, x, y, options, reps, progress, user, best, best_size, best_ms);
}

ck_status ck_norm_forward_tune(ck_context *ctx, const ck_norm_forward_desc *desc, int reps,
                               ck_tune_progress progress, void *user, char *best, size_t best_size,
                               double *best_ms)
{
    return ck_norm_tune(ctx, desc, reps, progress, user, best, best_size, best_ms);
}

ck_status ck_norm_backward_tune(ck_context *ctx, const ck_norm_backward_desc *desc, int reps,
                                ck_tune_progress progress, void *user, char *best, size_t best_size,
                                double *best_ms)
{
    return ck_norm_bwd_tune(ctx, desc, reps, progress, user, best, best_size, best_ms);
}

ck_status ck_copy_tune(ck_context *ctx, const ck_tensor *src, ck_tensor *dst, int reps,
                       ck_tune_progress progress, void *user, char *best, size_t best_size,
                       double *best_ms)
{
    return ck_ew_tune(ctx, EW_CALL_COPY, dst, src, 1, NULL, NULL, reps, progress, user, best,
                      best_size, best_ms);
}

ck_status ck_cast_tune(ck_context *ctx, const ck_tensor *src, ck_tensor *dst,
                       const ck_convert_options *opt, int reps, ck_tune_progress progress,
                       void *user, char *best, size_t best_size, double *best_ms)
{
    return ck_ew_tune(ctx, EW_CALL_CAST, dst, src, 1, opt, NULL, reps, progress, user, best,
                      best_size, best_ms);
}

ck_status ck_elementwise_tune(ck_context *ctx, const ck_ew_program *prog, const ck_tensor *inputs,
                              int input_count, ck_tensor *dst, int reps, ck_tune_progress progress,
                              void *user, char *best, size_t best_size, double *best_ms)
{
    return ck_ew_tune(ctx, EW_CALL_EXPR, dst, inputs, input_count, NULL, prog, reps, progress, user,
                      best, best_size, best_ms);
}
