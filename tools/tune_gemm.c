/* ck tune gemm ARGS: `ck prof gemm ARGS --tune` (same options; tools/prof_gemm.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "prof.h"

int ck_tune_gemm(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (cli_is_help(argv[i])) {
            printf("Usage: ck tune gemm --m M --n N --k K [OPTIONS of ck prof gemm]\n\n"
                   "Times every candidate instance of the problem (one progress line each),\n"
                   "stores the fastest in the tuning table (ck tune --list shows it) and then\n"
                   "runs and checks it like ck prof gemm. Options: ck prof gemm --help.\n");
            return CK_EXIT_OK;
        }
    char **args = malloc(sizeof *args * (size_t)(argc + 2));
    if (!args) {
        fprintf(stderr, "ck tune gemm: out of memory\n");
        return CK_EXIT_FAILURE;
    }
    static char tune_flag[] = "--tune";
    for (int i = 0; i < argc; ++i)
        args[i] = argv[i];
    args[argc] = tune_flag;
    args[argc + 1] = NULL;
    int rc = prof_gemm(argc + 1, args);
    free(args);
    return rc;
}
