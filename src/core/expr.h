/*
 * Symbolic integer expressions (internal structure). Nodes are immutable and
 * owned by a ck_expr_arena arena; src/gen extends this with its own lowering.
 * The public face is ck_ival in ck/tile.h.
 */
#ifndef CK_SRC_CORE_EXPR_H
#define CK_SRC_CORE_EXPR_H

#include <stdint.h>

#include "ck/tile.h"

typedef enum ck_expr_op {
    CK_EXPR_CONST,
    CK_EXPR_SYM,
    CK_EXPR_ADD,
    CK_EXPR_SUB,
    CK_EXPR_MUL,
    CK_EXPR_DIV, /* floor division */
    CK_EXPR_MOD, /* floor modulo */
    CK_EXPR_XOR,
    CK_EXPR_MIN,
    CK_EXPR_MAX
} ck_expr_op;

struct ck_expr {
    ck_expr_op op;
    ck_expr_arena *ctx;
    int64_t value;    /* CK_EXPR_CONST */
    const char *name; /* CK_EXPR_SYM (arena copy) */
    int64_t min, max; /* known range (every node) */
    int64_t divisor;  /* known divisor >= 1 (every node); 0 for the constant 0 */
    const ck_expr *a, *b;
};

/* Accumulating helpers for library code: each returns a ck_ival and, on the
 * first failure, records it in *st (later calls do nothing useful). */
ck_ival ck_iv_add(ck_ival a, ck_ival b, ck_status *st);
ck_ival ck_iv_sub(ck_ival a, ck_ival b, ck_status *st);
ck_ival ck_iv_mul(ck_ival a, ck_ival b, ck_status *st);
ck_ival ck_iv_div(ck_ival a, ck_ival b, ck_status *st);
ck_ival ck_iv_mod(ck_ival a, ck_ival b, ck_status *st);

/* Floor division / modulo on int64 (b != 0). */
static inline int64_t ck_floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}
static inline int64_t ck_floormod64(int64_t a, int64_t b)
{
    return a - ck_floordiv64(a, b) * b;
}

static inline int64_t ck_gcd64(int64_t a, int64_t b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Substitute bound values for symbols, keeping unbound symbols. */
ck_status ck_ival_substitute(ck_ival x, const ck_binding *bindings, int nbindings, ck_ival *out);

/* The symbol `name` of ctx, if declared (returns 0 otherwise). */
int ck_expr_find_symbol(ck_expr_arena *ctx, const char *name, ck_ival *out);

/* Lower bound of x is >= lo (known). */
static inline int ck_ival_known_ge(ck_ival x, int64_t lo)
{
    int64_t mn, mx;
    ck_ival_range(x, &mn, &mx);
    return mn >= lo;
}

#endif
