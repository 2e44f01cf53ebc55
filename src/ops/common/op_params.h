/*
 * The parameter table of an operation's kernel: every quantity its generated source depends on,
 * as one list of (name, value). Both the source's #defines and the kernel cache key are printed
 * from the same list, so a key can never miss a field the source uses (as the GEMM's
 * src/ops/gemm/params.c). Not installed.
 */
#ifndef CK_SRC_OPS_COMMON_OP_PARAMS_H
#define CK_SRC_OPS_COMMON_OP_PARAMS_H

#include <stddef.h>

typedef struct ck_op_param {
    const char *name; /* the #define's name, e.g. "SMX_N" */
    long long value;
    int ll; /* 1: printed with the LL suffix (64-bit in the device code's arithmetic) */
} ck_op_param;

/* Room for any op's table. */
#define CK_OP_MAX_PARAMS 64

/* Appends one entry to t[*n] (at most CK_OP_MAX_PARAMS; the caller's table has that room). */
void ck_op_param_add(ck_op_param *t, int *n, const char *name, long long value);
void ck_op_param_add_ll(ck_op_param *t, int *n, const char *name, long long value);

/* "#define NAME value\n" for every entry (malloc'd; NULL when out of memory). */
char *ck_op_params_defines(const ck_op_param *t, int n);

/* "op/NAME=value/..." with `strip` leading characters of every name removed (the op's prefix,
 * e.g. 4 for "SMX_"), written into key (size bytes). Returns 0, or -1 when it does not fit. */
int ck_op_params_key(const char *op, const ck_op_param *t, int n, int strip, char *key,
                     size_t size);

#endif
