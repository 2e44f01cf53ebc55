/* The convolution options shared by `ck prof conv` and `ck desc --conv` (tools/conv_cli.c). */
#ifndef CK_TOOLS_CONV_CLI_H
#define CK_TOOLS_CONV_CLI_H

#include "ck/conv.h"

/* Consume option argv[*i] (and its value) into *p when it is a convolution option: returns 1
 * consumed, 0 not a convolution option, -1 a usage error (printed). */
int conv_cli_option(const char *sub, int argc, char **argv, int *i, ck_conv_problem *p);

/* After the options: with 8-bit inputs (--dtype e4m3|e5m2|i8) --out-dtype (default the input
 * type, i32 for i8) is the type of the tensor the direction writes (Y, dX or dW); the tensors
 * it reads keep the input type. */
void conv_cli_finish(ck_conv_problem *p);

/* Help text of the options. */
extern const char conv_cli_help[];

/* One line naming the problem. */
void conv_cli_describe(const ck_conv_problem *p, char *buf, size_t size);

/* `ck desc --conv ...`: print the forward im2col descriptor of the problem. */
int ck_cmd_desc_conv(int argc, char **argv);

#endif
