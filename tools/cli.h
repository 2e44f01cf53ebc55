/* Shared helpers of the ck command: the subcommand table, usage errors, JSON output. */
#ifndef CK_TOOLS_CLI_H
#define CK_TOOLS_CLI_H

#include <stdio.h>

/* Exit statuses of the ck command. */
enum { CK_EXIT_OK = 0, CK_EXIT_FAILURE = 1, CK_EXIT_USAGE = 2 };

typedef struct ck_command {
    const char *name;
    const char *summary;               /* one line for `ck --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} ck_command;

/* Each subcommand lives in tools/cmd_<name>.c and defines one of these. */
int ck_cmd_info(int argc, char **argv);
int ck_cmd_demo(int argc, char **argv);
int ck_cmd_types(int argc, char **argv);
int ck_cmd_convert(int argc, char **argv);
int ck_cmd_desc(int argc, char **argv);
int ck_cmd_dist(int argc, char **argv);
int ck_cmd_cache(int argc, char **argv);
int ck_cmd_prof(int argc, char **argv);
int ck_cmd_tune(int argc, char **argv);

/* `ck tune gemm|softmax|layernorm|rmsnorm|permute|...|attention ...` (tools/tune_ops.c). */
int ck_tune_gemm(int argc, char **argv);
int ck_tune_softmax(int argc, char **argv);
int ck_tune_layernorm(int argc, char **argv);
int ck_tune_rmsnorm(int argc, char **argv);
int ck_tune_permute(int argc, char **argv);
int ck_tune_copy(int argc, char **argv);
int ck_tune_cast(int argc, char **argv);
int ck_tune_elementwise(int argc, char **argv);
int ck_tune_reduce(int argc, char **argv);
int ck_tune_attention(int argc, char **argv);
int ck_tune_conv(int argc, char **argv);

/* True when arg is -h or --help. */
int cli_is_help(const char *arg);

/* Print "ck SUB: MESSAGE" and a pointer to --help on stderr; returns CK_EXIT_USAGE. */
int cli_usage_error(const char *sub, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Print "ck SUB: <ck_last_error()>" on stderr; returns CK_EXIT_FAILURE. */
int cli_library_error(const char *sub);

/* Write s as a JSON string literal (with quotes and escapes). */
void cli_json_string(FILE *f, const char *s);

#endif
