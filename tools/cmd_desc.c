/* ck desc: placeholder until its issue lands (see 'issues'). */
#include <stdio.h>

#include "cli.h"

int ck_cmd_desc(int argc, char **argv)
{
    if (argc > 1 && cli_is_help(argv[1])) {
        printf("Usage: ck desc ...\n\nNot available in this build yet.\n");
        return CK_EXIT_OK;
    }
    fprintf(stderr, "ck desc: not available in this build yet.\n");
    return CK_EXIT_FAILURE;
}
