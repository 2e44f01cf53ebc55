/* The ck command: dispatch to subcommands. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ck/ck.h"
#include "cli.h"

static const ck_command commands[] = {
    {"info", "version, build options, backends found at run time, cache directory", ck_cmd_info},
    {"demo", "a small end-to-end demonstration of the library", ck_cmd_demo},
    {"types", "table of numeric types (--json)", ck_cmd_types},
    {"convert", "encode values in a numeric type: ck convert TYPE VALUE...", ck_cmd_convert},
    {"desc", "build a tensor descriptor from text and print it", ck_cmd_desc},
    {"dist", "show and verify a tile distribution encoding", ck_cmd_dist},
    {"cache", "list or clear the kernel cache: ck cache list|clear", ck_cmd_cache},
    {"prof", "run, check and time an operation: ck prof OP ... (ck prof --help)", ck_cmd_prof},
    {"tune",
     "time the candidates of a problem and keep the fastest: ck tune OP ... | --list | --clear",
     ck_cmd_tune},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void print_help(FILE *f)
{
    fprintf(f,
            "ck %s - Composable Kernels in C\n\n"
            "Usage: ck [--version] [--help] COMMAND [ARGS...]\n\nCommands:\n",
            CK_VERSION_STRING);
    for (int i = 0; i < N_COMMANDS; ++i)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'ck COMMAND --help' for the options of a command.\n"
               "Environment: CK_LOG=error|warn|info|debug logs to stderr; CK_CACHE_DIR sets the\n"
               "kernel cache directory (default ~/.cache/ck).\n");
}

/* A command's output that could not be written (`ck ... > /dev/full`, a closed pipe) is a
 * failure: say why and exit non-zero. */
static int finish(const char *sub, int rc)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int err = errno ? errno : EIO;
        fprintf(stderr, "ck %s: cannot write the output: %s.\n", sub, strerror(err));
        return rc == CK_EXIT_OK ? CK_EXIT_FAILURE : rc;
    }
    return rc;
}

static int run_main(int argc, char **argv);

int main(int argc, char **argv)
{
    return finish(argc > 1 ? argv[1] : "", run_main(argc, argv));
}

static int run_main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return CK_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (cli_is_help(sub) || strcmp(sub, "help") == 0) {
        if (strcmp(sub, "help") == 0 && argc > 2) {
            for (int i = 0; i < N_COMMANDS; ++i)
                if (strcmp(commands[i].name, argv[2]) == 0) {
                    char help[] = "--help";
                    char *av[] = {argv[2], help, NULL};
                    return commands[i].run(2, av);
                }
            fprintf(stderr, "ck: unknown command '%s'\n", argv[2]);
            return CK_EXIT_USAGE;
        }
        print_help(stdout);
        return CK_EXIT_OK;
    }
    if (strcmp(sub, "--version") == 0 || strcmp(sub, "-V") == 0) {
        printf("ck %s\n", CK_VERSION_STRING);
        return CK_EXIT_OK;
    }
    for (int i = 0; i < N_COMMANDS; ++i)
        if (strcmp(commands[i].name, sub) == 0)
            return commands[i].run(argc - 1, argv + 1);
    if (sub[0] == '-')
        fprintf(stderr, "ck: unknown option '%s'\n\n", sub);
    else
        fprintf(stderr, "ck: unknown command '%s'\n\n", sub);
    print_help(stderr);
    return CK_EXIT_USAGE;
}
