/*
 * Placeholder of family 90 until the sm90 branch (TMA + wgmma) is merged: it supports
 * nothing. The sm90 family's own sm90.c replaces this file.
 */
#include <stdio.h>

#include "core/error.h"
#include "ops/gemm/gemm_internal.h"

static int stub_supports(const ck_gemm_prob *prob, const ck_device_props *props, char *reason,
                         size_t size)
{
    (void)prob;
    (void)props;
    snprintf(reason, size, "the sm90 family is not built yet");
    return 0;
}

static int stub_instances(const ck_gemm_prob *prob, const ck_device_props *props,
                          ck_gemm_instance *out, int max)
{
    (void)prob;
    (void)props;
    (void)out;
    (void)max;
    return 0;
}

static ck_status stub_source(const ck_gemm_prob *prob, const ck_gemm_instance *inst, char **src)
{
    (void)prob;
    (void)inst;
    *src = NULL;
    return ck_fail(CK_ERROR_UNSUPPORTED, "ck_gemm: the sm90 family is not built yet.");
}

static ck_status stub_prepare(ck_gemm_plan *plan)
{
    (void)plan;
    return ck_fail(CK_ERROR_UNSUPPORTED, "ck_gemm: the sm90 family is not built yet.");
}

static ck_status stub_launch(ck_gemm_plan *plan, const ck_gemm_args *args)
{
    (void)plan;
    (void)args;
    return ck_fail(CK_ERROR_UNSUPPORTED, "ck_gemm: the sm90 family is not built yet.");
}

const ck_gemm_family ck_gemm_family_sm90 = {
    CK_GEMM_FAMILY_SM90, "sm90",         stub_supports, stub_instances,
    stub_source,         "ck_gemm_sm90", stub_prepare,  stub_launch,
};
