/* ck tune: time an operation's candidate instances and store the fastest in the tuning table
 * (include/ck/tuning.h); list or clear the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck/ck.h"
#include "ck/tuning.h"
#include "cli.h"

static const char usage[] =
    "Usage: ck tune OP [options] | ck tune --list [--json] | ck tune --clear [OP]\n\n"
    "Times every candidate instance of one problem of OP (a progress line per candidate), stores\n"
    "the fastest in the tuning table, and the operation's policy uses it from then on for the\n"
    "same problem on the same device. The table is $CK_TUNING_FILE, else tuning.tsv in the\n"
    "kernel cache directory (ck cache dir).\n\n"
    "  OP            gemm, softmax, layernorm, rmsnorm, permute, copy, cast, elementwise,\n"
    "                reduce, attention (its sm90 / sm80 tiles and, for s_q <= 16, the\n"
    "                decode kernel's keys per warp, warps and split-KV parts), conv (its\n"
    "                routes, GEMM instances and depthwise strips)\n"
    "                (ck tune OP --help)\n"
    "  --list        one line per entry: op, device, problem, instance, ms, metric, date\n"
    "  --json        with --list: a JSON object instead of text\n"
    "  --clear [OP]  delete the entries of OP (default: every entry)\n";

static int list(int json)
{
    ck_tuning_entry *e = NULL;
    int n = 0;
    char path[CK_PATH_MAX];
    if (ck_tuning_path(path, sizeof path) != CK_SUCCESS || ck_tuning_list(&e, &n) != CK_SUCCESS)
        return cli_library_error("tune");
    if (json) {
        printf("{\"file\":");
        cli_json_string(stdout, path);
        printf(",\"entries\":[");
        for (int i = 0; i < n; ++i) {
            printf("%s{\"op\":", i ? "," : "");
            cli_json_string(stdout, e[i].op);
            printf(",\"device\":");
            cli_json_string(stdout, e[i].device);
            printf(",\"problem\":");
            cli_json_string(stdout, e[i].problem);
            printf(",\"instance\":");
            cli_json_string(stdout, e[i].instance);
            printf(",\"ms\":%.6g,\"metric\":%.6g,\"time\":%lld}", e[i].ms, e[i].metric, e[i].time);
        }
        printf("]}\n");
    } else {
        printf("tuning table: %s\n", path);
        for (int i = 0; i < n; ++i) {
            char when[32] = "?";
            time_t t = (time_t)e[i].time;
            struct tm tm;
            if (gmtime_r(&t, &tm))
                strftime(when, sizeof when, "%Y-%m-%d", &tm);
            printf("%-6s %-32s %-48s %-28s %9.4f ms %9.2f  %s\n", e[i].op, e[i].device,
                   e[i].problem, e[i].instance, e[i].ms, e[i].metric, when);
        }
        printf("%d entries\n", n);
    }
    free(e);
    return CK_EXIT_OK;
}

int ck_cmd_tune(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("tune", "missing OP, --list or --clear");
    if (cli_is_help(argv[1])) {
        printf("%s", usage);
        return CK_EXIT_OK;
    }
    if (strcmp(argv[1], "--list") == 0) {
        int json = 0;
        for (int i = 2; i < argc; ++i) {
            if (strcmp(argv[i], "--json") == 0)
                json = 1;
            else
                return cli_usage_error("tune", "unknown option '%s' after --list", argv[i]);
        }
        return list(json);
    }
    if (strcmp(argv[1], "--clear") == 0) {
        if (argc > 3)
            return cli_usage_error("tune", "--clear takes at most one OP");
        int removed = 0;
        if (ck_tuning_clear(argc == 3 ? argv[2] : NULL, &removed) != CK_SUCCESS)
            return cli_library_error("tune");
        printf("removed %d entries\n", removed);
        return CK_EXIT_OK;
    }
    if (strcmp(argv[1], "gemm") == 0)
        return ck_tune_gemm(argc - 1, argv + 1);
    if (strcmp(argv[1], "softmax") == 0)
        return ck_tune_softmax(argc - 1, argv + 1);
    if (strcmp(argv[1], "layernorm") == 0)
        return ck_tune_layernorm(argc - 1, argv + 1);
    if (strcmp(argv[1], "rmsnorm") == 0)
        return ck_tune_rmsnorm(argc - 1, argv + 1);
    if (strcmp(argv[1], "permute") == 0)
        return ck_tune_permute(argc - 1, argv + 1);
    if (strcmp(argv[1], "copy") == 0)
        return ck_tune_copy(argc - 1, argv + 1);
    if (strcmp(argv[1], "cast") == 0)
        return ck_tune_cast(argc - 1, argv + 1);
    if (strcmp(argv[1], "elementwise") == 0)
        return ck_tune_elementwise(argc - 1, argv + 1);
    if (strcmp(argv[1], "reduce") == 0)
        return ck_tune_reduce(argc - 1, argv + 1);
    if (strcmp(argv[1], "attention") == 0)
        return ck_tune_attention(argc - 1, argv + 1);
    if (strcmp(argv[1], "conv") == 0)
        return ck_tune_conv(argc - 1, argv + 1);
    return cli_usage_error("tune",
                           "unknown OP or option '%s' (OP: gemm, softmax, layernorm, rmsnorm, "
                           "permute, copy, cast, elementwise, reduce, attention, conv)",
                           argv[1]);
}
