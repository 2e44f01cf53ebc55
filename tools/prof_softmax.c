/* `ck prof` entry points of this family (placeholder until the operations land). */
#include "cli.h"
#include "prof.h"

int prof_softmax(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error("prof", "'%s' is not implemented yet.", argv[0]);
}

int prof_topk_softmax(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error("prof", "'%s' is not implemented yet.", argv[0]);
}
