/* ck demo: a small end-to-end demonstration (grows as operations land). */
#include <stdio.h>
#include <string.h>

#include "ck/ck.h"
#include "cli.h"

static const char usage[] =
    "Usage: ck demo\n\n"
    "Run a short demonstration of what this build of ck can do and check its result.\n"
    "Exit status 0 when every check passed.\n";

int ck_cmd_demo(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CK_EXIT_OK;
        }
        return cli_usage_error("demo", "unknown option '%s'", argv[i]);
    }
    int failures = 0;
    printf("ck demo (ck %s)\n", ck_version());

    /* 1. Errors are sentences, never crashes. */
    ck_status st = ck_query_system(NULL);
    printf("  error model: ck_query_system(NULL) -> %s: %s\n", ck_status_string(st),
           ck_last_error());
    failures += st != CK_ERROR_INVALID_ARGUMENT;

    /* 2. Backends found at run time. */
    ck_system_info s;
    st = ck_query_system(&s);
    failures += st != CK_SUCCESS;
    printf("  backend: %s\n", s.device_count > 0 ? "cuda" : "cpu emulator");

    printf("%s\n", failures ? "demo FAILED" : "demo passed");
    return failures ? CK_EXIT_FAILURE : CK_EXIT_OK;
}
