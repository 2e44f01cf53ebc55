/* ck tune gemm: placeholder until the GEMM op lands (replaced by the real tuner). */
#include "cli.h"

int ck_tune_gemm(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_usage_error("tune", "gemm is not available in this build yet");
}
