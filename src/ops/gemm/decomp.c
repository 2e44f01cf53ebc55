/*
 * How a GEMM plan shares out K (ck_gemm_plan_create_opt): whole tiles, the deterministic split-K,
 * split-K with f32 atomics, or stream-K. The policy ranks whole tiles, its best split and
 * stream-K among the sm90 family's instances (sm90.c); this file builds a plan with one forced:
 * the sm90 family's 128 x 128 instance (or the one asked for) with the decomposition set. The
 * kernels: sm90_pipeline_kernel.h (split-K reductions) and sm90_stream_k_kernel.h.
 */
#include <string.h>

#include "core/error.h"
#include "ops/common/op_common.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm_plan_create_opt"

enum { MAX_SPLIT = 16, MAX_INSTANCES = 64 };

void ck_gemm_plan_options_init(ck_gemm_plan_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->instance = -1;
    options->decomp = CK_GEMM_DECOMP_AUTO;
}

static const char *decomp_name(ck_gemm_decomposition d)
{
    switch (d) {
    case CK_GEMM_DECOMP_TILES:
        return "whole tiles";
    case CK_GEMM_DECOMP_SPLIT_K:
        return "split-K";
    case CK_GEMM_DECOMP_SPLIT_K_ATOMIC:
        return "atomic split-K";
    case CK_GEMM_DECOMP_STREAM_K:
        return "stream-K";
    default:
        return "auto";
    }
}

/* The instance the forced decomposition starts from: the given id (family 90 without
 * clusters), or the family's first 128 x 128 instance without clusters. */
static ck_status base_instance(const ck_gemm_prob *prob, const ck_device_props *props, int instance,
                               ck_gemm_instance *out)
{
    ck_gemm_instance ins[MAX_INSTANCES];
    int n = ck_gemm_family_sm90.instances(prob, props, ins, MAX_INSTANCES);
    for (int i = 0; i < n; ++i) {
        int ok = instance >= 0 ? ck_gemm_instance_id(&ins[i]) == instance
                               : ins[i].tile_m == 128 && ins[i].tile_n == 128 &&
                                     ins[i].split_k <= 1 && ins[i].decomp == 0;
        if (ok && ins[i].cluster <= 1) {
            *out = ins[i];
            return CK_SUCCESS;
        }
    }
    if (instance >= 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": instance %d is not an sm90 candidate without clusters for this "
                          "problem; a forced decomposition needs one (ck_gemm_candidates lists "
                          "them).",
                       instance);
    return ck_fail(CK_ERROR_UNSUPPORTED,
                   OP ": the sm90 family offers no 128 x 128 instance for this problem (shared "
                      "memory too small?).");
}

ck_status ck_gemm_plan_create_opt(ck_context *ctx, const ck_gemm_problem *problem,
                                  const ck_gemm_plan_options *options, ck_gemm_plan **plan)
{
    if (!ctx || !problem || !plan)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": ctx, problem and plan must not be NULL.");
    *plan = NULL;
    ck_gemm_plan_options def;
    if (!options) {
        ck_gemm_plan_options_init(&def);
        options = &def;
    }
    ck_gemm_decomposition d = options->decomp;
    if (d < CK_GEMM_DECOMP_AUTO || d > CK_GEMM_DECOMP_STREAM_K)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": decomp = %d; accepted: CK_GEMM_DECOMP_AUTO .. CK_GEMM_DECOMP_STREAM_K "
                          "(0 .. 4).",
                       (int)d);
    int split = d == CK_GEMM_DECOMP_SPLIT_K || d == CK_GEMM_DECOMP_SPLIT_K_ATOMIC;
    if (split && (options->split_k < 2 || options->split_k > MAX_SPLIT))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": split_k = %d with %s; accepted: 2 .. %d.",
                       options->split_k, decomp_name(d), MAX_SPLIT);
    if (!split && options->split_k > 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": split_k = %d with %s; a split count goes with CK_GEMM_DECOMP_SPLIT_K "
                          "or CK_GEMM_DECOMP_SPLIT_K_ATOMIC.",
                       options->split_k, decomp_name(d));
    ck_gemm_prob prob;
    ck_status st = ck_gemm_prob_make(problem, &prob);
    if (st)
        return st;
    if (d == CK_GEMM_DECOMP_AUTO)
        return ck_gemm_plan_create_prob(ctx, &prob, options->instance, plan);
    if (prob.quant) /* K blocks are promoted per whole tile (quant.c) */
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": %s is not available with scale tensors or packed B; use "
                          "CK_GEMM_DECOMP_AUTO (whole tiles).",
                       decomp_name(d));
    const ck_device_props *props = ck_op_props(ctx);
    char reason[256] = "";
    if (!ck_gemm_family_sm90.supports(&prob, props, reason, sizeof reason))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": %s runs in the sm90 family, which refuses this problem: %s",
                       decomp_name(d), reason);
    ck_gemm_instance in;
    if ((st = base_instance(&prob, props, options->instance, &in)))
        return st;
    in.split_k = split ? options->split_k : 1;
    in.decomp = d == CK_GEMM_DECOMP_SPLIT_K_ATOMIC ? CK_GEMM_DECOMP_SPLIT_K_ATOMIC
                : d == CK_GEMM_DECOMP_STREAM_K     ? CK_GEMM_DECOMP_STREAM_K
                                                   : 0;
    return ck_gemm_plan_build(ctx, &prob, &in, plan);
}
