/* ck cache: placeholder until its issue lands (see 'issues'). */
#include <stdio.h>

#include "cli.h"

int ck_cmd_cache(int argc, char **argv)
{
    if (argc > 1 && cli_is_help(argv[1])) {
        printf("Usage: ck cache ...\n\nNot available in this build yet.\n");
        return CK_EXIT_OK;
    }
    fprintf(stderr, "ck cache: not available in this build yet.\n");
    return CK_EXIT_FAILURE;
}
