/* `ck prof OP ...`: the operation table and the options every operation shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "prof.h"

typedef struct prof_op {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} prof_op;

static const prof_op ops[] = {
    {"copy", "dst = src (any strides)", prof_copy},
    {"cast", "dst = convert(src) between two numeric types", prof_cast},
    {"elementwise", "a fused chain of unary/binary ops over up to 4 broadcast inputs",
     prof_elementwise},
    {"permute", "permute dimensions (NCHW<->NHWC, batched transpose)", prof_permute},
    {"reduce", "sum/mean/max/min/sumsq/norm2/argmax/argmin over axes", prof_reduce},
    {"softmax", "softmax or log-softmax along the last axis", prof_softmax},
    {"gemm", "D = epilogue(alpha A B + beta C) on tensor cores (TFLOP/s, % of peak)", prof_gemm},
    {"topk-softmax", "MoE gating: softmax over experts, top-k weights and indices",
     prof_topk_softmax},
    {"layernorm", "layernorm2d forward/backward, fused residual and quantization", prof_layernorm},
    {"rmsnorm", "rmsnorm2d forward/backward, fused residual and quantization", prof_rmsnorm},
    {"attention", "fused attention forward: softmax(scale Q K^T + mask) V (TFLOP/s)",
     prof_attention},
    {"conv", "grouped N-D convolution as implicit GEMM: fwd, bwd-data, bwd-weight (TFLOP/s)",
     prof_conv},
    {"pool", "max / average pooling 2-D/3-D (indices), max-pool backward (NHWC)", prof_pool},
    {"im2col", "the im2col matrix of a convolution's NHWGC input (CK's img2col)", prof_im2col},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ck prof OP [options]   (ck prof OP --help for OP's options)\n\n"
               "Runs OP on the GPU if one is usable (else on the CPU emulator), checks it against\n"
               "its CPU reference, and prints the median time, GB/s (each input byte read once,\n"
               "each output byte written once) and the ratio to the measured device-to-device\n"
               "copy bandwidth.\n\nOperations:\n");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
        fprintf(f, "  %-13s %s\n", ops[i].name, ops[i].summary);
    fprintf(f, "\nOptions of every operation:\n%s", prof_common_help);
}

int ck_cmd_prof(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CK_EXIT_USAGE : CK_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
        if (strcmp(argv[1], ops[i].name) == 0)
            return ops[i].run(argc - 1, argv + 1);
    return cli_usage_error("prof", "unknown operation '%s'; run 'ck prof --help' for the list.",
                           argv[1]);
}
