/*
 * Attention policy (how): the sm90 kernel (sm90.c) on sm_90a devices and the emulator where it
 * supports the problem (CK_ATTN_KERNEL=sm80 keeps the sm80 kernel), else the block tile of the
 * sm80 kernel for a problem on a device. Each warp owns 16 or 32 query rows; the key tile is 64
 * rows (32 where the head dims are large, so that the S and O fragments fit in registers); short
 * query sequences take the 64-row tile so that fewer rows of the block are padding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ops/attention/attn_internal.h"

#define OP "ck_attention"

size_t ck_attn_shared_bytes(const ck_attn_prob *prob, const ck_attn_instance *in)
{
    const ck_attention_problem *p = &prob->p;
    return (size_t)in->tile_m * (size_t)p->d * 2 +
           2 * (size_t)in->tile_n * (size_t)(p->d + p->d_v) * 2;
}

ck_status ck_attn_policy(const ck_attn_prob *prob, const ck_device_props *props,
                         ck_attn_instance *out)
{
    const ck_attention_problem *p = &prob->p;
    int cc = props->cc_major * 10 + props->cc_minor;
    if (props->backend == CK_BACKEND_CUDA && cc < 80)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": the attention kernel needs compute capability 8.0 or later (device "
                          "has %d.%d).",
                       props->cc_major, props->cc_minor);
    /* CK_ATTN_KERNEL=sm80 keeps the sm80 kernel everywhere (its tests on the emulator) */
    const char *force = getenv("CK_ATTN_KERNEL");
    char why[256];
    if (force && strcmp(force, "sm80") == 0)
        snprintf(why, sizeof why, "CK_ATTN_KERNEL=sm80 asks for it.");
    else if (ck_attn_sm90_supports(prob, props, why, sizeof why))
        return ck_attn_sm90_instance(prob, props, out);
    if (p->dtype == CK_DTYPE_FP8_E4M3)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": fp8e4m3 inputs run on the sm90 kernel only, and %s", why);
    if (cc >= 90)
        CK_LOG(CK_LOG_INFO, OP ": the sm80 kernel, as %s", why);
    int64_t dmax = p->d > p->d_v ? p->d : p->d_v;
    ck_attn_instance cand[3] = {
        {dmax <= 128 && p->s_q > 64 ? 128 : 64, dmax <= 128 ? 64 : 32, 4, 0, 1, 0},
        {64, 32, 4, 0, 1, 0},
        {64, 16, 4, 0, 1, 0},
    };
    for (int i = 0; i < 3; ++i) {
        if (ck_attn_shared_bytes(prob, &cand[i]) <= props->max_shared_per_block) {
            *out = cand[i];
            return CK_SUCCESS;
        }
    }
    return ck_fail(CK_ERROR_UNSUPPORTED,
                   OP ": d = %lld, d_v = %lld needs %zu bytes of shared memory for its smallest "
                      "tile; the device allows %zu per block.",
                   (long long)p->d, (long long)p->d_v, ck_attn_shared_bytes(prob, &cand[2]),
                   props->max_shared_per_block);
}
