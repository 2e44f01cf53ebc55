/* libFuzzer target: command-line parsing of `ck desc`, `ck convert`, `ck types` and the option
 * parsers of `ck prof` (common options, --shape, lists, numbers), on argument vectors made
 * from the input (one argument per line; the first line picks the command). Nothing runs a
 * kernel. Output goes to /dev/null. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz_util.h"
#include "prof.h"

enum { MAX_ARGS = 24 };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!freopen("/dev/null", "w", stdout))
        return 0;
    return 0;
}

static void prof_options(int argc, char **argv)
{
    prof_common c;
    if (prof_parse_common("prof fuzz", &argc, argv, &c) != CK_EXIT_OK)
        return;
    for (int i = 1; i + 1 < argc; i += 2) {
        long long dims[CK_TENSOR_MAX_RANK], vals[9];
        int rank;
        double d;
        if (!strcmp(argv[i], "--shape"))
            (void)prof_shape_option("prof fuzz", argv[i + 1], dims, 1, CK_TENSOR_MAX_RANK, &rank);
        else if (!strcmp(argv[i], "--perm"))
            (void)prof_parse_list(argv[i + 1], vals, 9, 0, 8);
        else if (!strcmp(argv[i], "--scale"))
            (void)prof_parse_double("prof fuzz", argv[i], argv[i + 1], &d);
        else
            (void)prof_unknown_argument("prof fuzz", argv[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (char *p = text; p && argc < MAX_ARGS;) {
        argv[argc++] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = '\0';
    }
    argv[argc] = NULL;
    if (!strcmp(argv[0], "desc"))
        (void)ck_cmd_desc(argc, argv);
    else if (!strcmp(argv[0], "convert"))
        (void)ck_cmd_convert(argc, argv);
    else if (!strcmp(argv[0], "types"))
        (void)ck_cmd_types(argc, argv);
    else
        prof_options(argc, argv);
    fflush(stdout);
    free(text);
    return 0;
}
