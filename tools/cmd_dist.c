/* ck dist: placeholder until its issue lands (see 'issues'). */
#include <stdio.h>

#include "cli.h"

int ck_cmd_dist(int argc, char **argv)
{
    if (argc > 1 && cli_is_help(argv[1])) {
        printf("Usage: ck dist ...\n\nNot available in this build yet.\n");
        return CK_EXIT_OK;
    }
    fprintf(stderr, "ck dist: not available in this build yet.\n");
    return CK_EXIT_FAILURE;
}
