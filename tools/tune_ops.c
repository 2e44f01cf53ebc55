/* ck tune OP ARGS for the operations whose tuning runs inside `ck prof OP ARGS --tune` (same
 * options): gemm (tools/prof_gemm.c), softmax (tools/prof_softmax.c), layernorm and rmsnorm
 * (tools/prof_norm.c), permute (tools/prof_permute.c), copy, cast and elementwise
 * (tools/prof_elementwise.c), reduce (tools/prof_reduce.c), attention (tools/prof_attention.c),
 * conv (tools/prof_conv.c). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "prof.h"

static int tune_via_prof(const char *op, const char *shape, int (*prof)(int, char **), int argc,
                         char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            printf("Usage: ck tune %s %s [OPTIONS of ck prof %s]\n\n"
                   "Times every candidate instance of the problem (one progress line each),\n"
                   "stores the fastest in the tuning table (ck tune --list shows it) and then\n"
                   "runs and checks it like ck prof %s. Options: ck prof %s --help.\n",
                   op, shape, op, op, op);
            return CK_EXIT_OK;
        }
    char **args = malloc(sizeof *args * (size_t)(argc + 2));
    if (!args) {
        fprintf(stderr, "ck tune %s: out of memory\n", op);
        return CK_EXIT_FAILURE;
    }
    static char tune_flag[] = "--tune";
    for (int i = 0; i < argc; ++i)
        args[i] = argv[i];
    args[argc] = tune_flag;
    args[argc + 1] = NULL;
    int rc = prof(argc + 1, args);
    free(args);
    return rc;
}

int ck_tune_gemm(int argc, char **argv)
{
    return tune_via_prof("gemm", "--m M --n N --k K", prof_gemm, argc, argv);
}

int ck_tune_softmax(int argc, char **argv)
{
    return tune_via_prof("softmax", "--shape RxN", prof_softmax, argc, argv);
}

int ck_tune_layernorm(int argc, char **argv)
{
    return tune_via_prof("layernorm", "--shape RxN", prof_layernorm, argc, argv);
}

int ck_tune_rmsnorm(int argc, char **argv)
{
    return tune_via_prof("rmsnorm", "--shape RxN", prof_rmsnorm, argc, argv);
}

int ck_tune_permute(int argc, char **argv)
{
    return tune_via_prof("permute", "--shape AxB... [--perm P...]", prof_permute, argc, argv);
}

int ck_tune_copy(int argc, char **argv)
{
    return tune_via_prof("copy", "--shape RxN", prof_copy, argc, argv);
}

int ck_tune_cast(int argc, char **argv)
{
    return tune_via_prof("cast", "--shape RxN --from T --to T", prof_cast, argc, argv);
}

int ck_tune_elementwise(int argc, char **argv)
{
    return tune_via_prof("elementwise", "--shape RxN --expr E", prof_elementwise, argc, argv);
}

int ck_tune_reduce(int argc, char **argv)
{
    return tune_via_prof("reduce", "--shape AxB... [--op OP --axes A...]", prof_reduce, argc, argv);
}

int ck_tune_attention(int argc, char **argv)
{
    return tune_via_prof("attention", "--sq S --sk S", prof_attention, argc, argv);
}

int ck_tune_conv(int argc, char **argv)
{
    return tune_via_prof("conv", "--n N --g G --c C --k K --hw HxW --yx YxX [--dir D]", prof_conv,
                         argc, argv);
}
