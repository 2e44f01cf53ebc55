/*
 * Printing of symbolic expressions as C: precedence-aware parentheses, floor
 * division/modulo as '/' and '%' when both operands are known non-negative,
 * else CK_FLOORDIV / CK_FLOORMOD (the device C prelude defines them).
 */
#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"
#include "core/expr.h"

/* ------------------------------------------------------------ printing */

typedef struct pbuf {
    char *buf;
    size_t size, len;
} pbuf;

static void put(pbuf *p, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);
static void put(pbuf *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = p->len < p->size ? p->size - p->len : 0;
    int n = vsnprintf(room ? p->buf + p->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        p->len += (size_t)n;
}

/* C precedence of the printed form: 3 for atoms and calls, 2 for * / %, 1 for
 * + -, 0 for ^ (always parenthesised inside another operator). */
static int prec(const ck_expr *e)
{
    switch (e->op) {
    case CK_EXPR_ADD:
    case CK_EXPR_SUB:
        return 1;
    case CK_EXPR_MUL:
        return 2;
    case CK_EXPR_DIV:
    case CK_EXPR_MOD:
        return (e->a->min >= 0 && e->b->min >= 1) ? 2 : 3;
    case CK_EXPR_XOR:
        return 0;
    case CK_EXPR_CONST:
        return e->value < 0 ? 1 : 3;
    default:
        return 3;
    }
}

static void print_node(pbuf *p, const ck_expr *e, int need_parens);

static void print_child(pbuf *p, const ck_expr *parent, const ck_expr *child, int right)
{
    int pp = prec(parent), pc = prec(child);
    int parens =
        pc < pp || (right && pc == pp && parent->op != CK_EXPR_ADD && parent->op != CK_EXPR_MUL) ||
        (pc == 0 && pp == 0) || (parent->op == CK_EXPR_MUL && pc == 2 && child->op != CK_EXPR_MUL);
    print_node(p, child, parens);
}

static void print_node(pbuf *p, const ck_expr *e, int need_parens)
{
    const char *infix = NULL;
    switch (e->op) {
    case CK_EXPR_CONST:
        put(p, need_parens ? "(%lld)" : "%lld", (long long)e->value);
        return;
    case CK_EXPR_SYM:
        put(p, "%s", e->name);
        return;
    case CK_EXPR_ADD:
        if (e->b->op == CK_EXPR_CONST && e->b->value < 0 && e->b->value != INT64_MIN) {
            put(p, "%s", need_parens ? "(" : "");
            print_child(p, e, e->a, 0);
            put(p, " - %lld%s", (long long)-e->b->value, need_parens ? ")" : "");
            return;
        }
        infix = " + ";
        break;
    case CK_EXPR_SUB:
        infix = " - ";
        break;
    case CK_EXPR_MUL:
        infix = " * ";
        break;
    case CK_EXPR_XOR:
        infix = " ^ ";
        break;
    case CK_EXPR_DIV:
    case CK_EXPR_MOD:
        if (prec(e) == 2)
            infix = e->op == CK_EXPR_DIV ? " / " : " % ";
        break;
    default:
        break;
    }
    if (infix) {
        put(p, "%s", need_parens ? "(" : "");
        print_child(p, e, e->a, 0);
        put(p, "%s", infix);
        print_child(p, e, e->b, 1);
        put(p, "%s", need_parens ? ")" : "");
        return;
    }
    const char *fn = e->op == CK_EXPR_DIV   ? "CK_FLOORDIV"
                     : e->op == CK_EXPR_MOD ? "CK_FLOORMOD"
                     : e->op == CK_EXPR_MIN ? "CK_MIN"
                                            : "CK_MAX";
    put(p, "%s(", fn);
    print_node(p, e->a, 0);
    put(p, ", ");
    print_node(p, e->b, 0);
    put(p, ")");
}

size_t ck_ival_print(ck_ival x, char *buf, size_t size)
{
    pbuf p = {buf, buf ? size : 0, 0};
    if (p.size)
        buf[0] = '\0';
    if (!x.e)
        put(&p, "%lld", (long long)x.v);
    else
        print_node(&p, x.e, 0);
    if (p.size && p.len >= p.size)
        buf[p.size - 1] = '\0';
    return p.len;
}
