/* ck convert: placeholder until its issue lands (see 'issues'). */
#include <stdio.h>

#include "cli.h"

int ck_cmd_convert(int argc, char **argv)
{
    if (argc > 1 && cli_is_help(argv[1])) {
        printf("Usage: ck convert ...\n\nNot available in this build yet.\n");
        return CK_EXIT_OK;
    }
    fprintf(stderr, "ck convert: not available in this build yet.\n");
    return CK_EXIT_FAILURE;
}
