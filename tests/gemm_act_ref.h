/* The GEMM activations in double, written here independently of the library's
 * (ck_gemm_act_f64), for the random-problem tests' separate reference kernels. */
#ifndef CK_TESTS_GEMM_ACT_REF_H
#define CK_TESTS_GEMM_ACT_REF_H

#include <math.h>

#include "ck/gemm.h"

static double gemm_ref_act(ck_gemm_activation a, double x)
{
    switch (a) {
    case CK_GEMM_ACT_RELU:
        return x < 0 ? 0 : x;
    case CK_GEMM_ACT_GELU_TANH:
        return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case CK_GEMM_ACT_GELU_ERF:
        return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case CK_GEMM_ACT_SILU:
        return x / (1 + exp(-x));
    case CK_GEMM_ACT_SIGMOID:
        return 1 / (1 + exp(-x));
    default:
        return x;
    }
}

#endif
