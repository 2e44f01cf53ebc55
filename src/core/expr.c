/*
 * Symbolic integer expressions: arena, symbols, builders with constant
 * folding and simple canonicalisation, range/divisibility facts, evaluation
 * under a binding, printing as C.
 */
#include "core/expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

typedef struct arena_block {
    struct arena_block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} arena_block;

typedef struct sym_entry {
    struct sym_entry *next;
    const ck_expr *node;
} sym_entry;

struct ck_expr_arena {
    arena_block *blocks;
    sym_entry *symbols;
};

void ck_tile_free(void *p)
{
    free(p);
}

ck_status ck_expr_arena_create(ck_expr_arena **out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_expr_arena_create");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY,
                       "ck_expr_arena_create: out of memory allocating %zu bytes.", sizeof **out);
    return CK_SUCCESS;
}

void ck_expr_arena_destroy(ck_expr_arena *ctx)
{
    if (!ctx)
        return;
    arena_block *b = ctx->blocks;
    while (b) {
        arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(ctx);
}

static void *arena_alloc(ck_expr_arena *ctx, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    arena_block *b = ctx->blocks;
    if (!b || b->size - b->used < n) {
        size_t size = n > 8192 ? n : 8192;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->size = size;
        b->used = 0;
        b->next = ctx->blocks;
        ctx->blocks = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

/* ------------------------------------------------------------ saturating range helpers */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (a == INT64_MIN || b == INT64_MIN)
        return (a == INT64_MAX || b == INT64_MAX) ? 0 : INT64_MIN;
    if (a == INT64_MAX || b == INT64_MAX)
        return INT64_MAX;
    if (__builtin_add_overflow(a, b, &r))
        return a > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t sat_neg(int64_t a)
{
    if (a == INT64_MIN)
        return INT64_MAX;
    if (a == INT64_MAX)
        return INT64_MIN;
    return -a;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (a == 0 || b == 0)
        return 0;
    int neg = (a < 0) != (b < 0);
    if (a == INT64_MIN || a == INT64_MAX || b == INT64_MIN || b == INT64_MAX ||
        __builtin_mul_overflow(a, b, &r))
        return neg ? INT64_MIN : INT64_MAX;
    return r;
}

static int64_t min4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
}
static int64_t max4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
}

/* ------------------------------------------------------------ facts */

void ck_ival_range(ck_ival x, int64_t *min, int64_t *max)
{
    if (!x.e) {
        *min = *max = x.v;
        return;
    }
    *min = x.e->min;
    *max = x.e->max;
}

int64_t ck_ival_divisor(ck_ival x)
{
    if (!x.e)
        return x.v == 0 ? 0 : (x.v < 0 ? (x.v == INT64_MIN ? 1 : -x.v) : x.v);
    return x.e->divisor;
}

/* ------------------------------------------------------------ node creation */

static ck_status ctx_of(ck_ival a, ck_ival b, ck_expr_arena **ctx, const char *op)
{
    ck_expr_arena *ca = a.e ? a.e->ctx : NULL, *cb = b.e ? b.e->ctx : NULL;
    if (ca && cb && ca != cb)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_ival_%s: the operands belong to different expression contexts; "
                       "build every expression of one object in one ck_expr_arena.",
                       op);
    *ctx = ca ? ca : cb;
    return CK_SUCCESS;
}

static ck_expr *new_node(ck_expr_arena *ctx, ck_expr_op op)
{
    ck_expr *n = arena_alloc(ctx, sizeof *n);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->op = op;
    n->ctx = ctx;
    return n;
}

static const ck_expr *as_node(ck_expr_arena *ctx, ck_ival x)
{
    if (x.e)
        return x.e;
    ck_expr *n = new_node(ctx, CK_EXPR_CONST);
    if (!n)
        return NULL;
    n->value = n->min = n->max = x.v;
    n->divisor = ck_ival_divisor(x);
    return n;
}

static ck_ival node_ival(const ck_expr *e)
{
    ck_ival r = {0, e};
    if (e && e->op == CK_EXPR_CONST) {
        r.v = e->value;
        r.e = NULL;
    }
    return r;
}

static ck_status make_binary(ck_expr_op op, ck_ival a, ck_ival b, ck_ival *out, const char *name)
{
    ck_expr_arena *ctx = NULL;
    ck_status st = ctx_of(a, b, &ctx, name);
    if (st)
        return st;
    const ck_expr *na = as_node(ctx, a), *nb = as_node(ctx, b);
    ck_expr *n = new_node(ctx, op);
    if (!na || !nb || !n)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_ival_%s: out of memory building an expression.",
                       name);
    n->a = na;
    n->b = nb;
    int64_t amin = na->min, amax = na->max, bmin = nb->min, bmax = nb->max;
    int64_t da = na->divisor, db = nb->divisor;
    n->divisor = 1;
    n->min = INT64_MIN;
    n->max = INT64_MAX;
    switch (op) {
    case CK_EXPR_ADD:
        n->min = sat_add(amin, bmin);
        n->max = sat_add(amax, bmax);
        n->divisor = ck_gcd64(da, db);
        break;
    case CK_EXPR_SUB:
        n->min = sat_add(amin, sat_neg(bmax));
        n->max = sat_add(amax, sat_neg(bmin));
        n->divisor = ck_gcd64(da, db);
        break;
    case CK_EXPR_MUL: {
        int64_t p1 = sat_mul(amin, bmin), p2 = sat_mul(amin, bmax), p3 = sat_mul(amax, bmin),
                p4 = sat_mul(amax, bmax);
        n->min = min4(p1, p2, p3, p4);
        n->max = max4(p1, p2, p3, p4);
        int64_t d;
        n->divisor = __builtin_mul_overflow(da, db, &d) ? 1 : d;
        break;
    }
    case CK_EXPR_DIV:
        if (bmin == bmax && bmin > 0) {
            int64_t c = bmin;
            n->min = amin == INT64_MIN ? INT64_MIN : ck_floordiv64(amin, c);
            n->max = amax == INT64_MAX ? INT64_MAX : ck_floordiv64(amax, c);
            n->divisor = (da != 0 && da % c == 0) ? da / c : 1;
        } else if (bmin >= 1 && amin >= 0) {
            n->min = 0;
            n->max = amax;
        }
        break;
    case CK_EXPR_MOD:
        if (bmin >= 1) {
            n->min = 0;
            n->max = bmax == INT64_MAX ? INT64_MAX : bmax - 1;
            if (amin >= 0 && amax < n->max)
                n->max = amax;
            if (bmin == bmax)
                n->divisor = ck_gcd64(da, bmin) ? ck_gcd64(da, bmin) : 1;
        }
        break;
    case CK_EXPR_XOR:
        if (amin >= 0 && bmin >= 0 && amax < INT64_MAX / 2 && bmax < INT64_MAX / 2) {
            int64_t m = amax > bmax ? amax : bmax, p = 1;
            while (p <= m)
                p <<= 1;
            n->min = 0;
            n->max = p - 1;
        }
        break;
    case CK_EXPR_MIN:
        n->min = amin < bmin ? amin : bmin;
        n->max = amax < bmax ? amax : bmax;
        n->divisor = ck_gcd64(da, db);
        break;
    case CK_EXPR_MAX:
        n->min = amin > bmin ? amin : bmin;
        n->max = amax > bmax ? amax : bmax;
        n->divisor = ck_gcd64(da, db);
        break;
    default:
        break;
    }
    if (n->divisor == 0)
        n->divisor = 1; /* only the constant 0 has divisor 0 */
    out->v = 0;
    out->e = n;
    return CK_SUCCESS;
}

ck_status ck_expr_symbol(ck_expr_arena *ctx, const char *name, int64_t min, int64_t max,
                         int64_t divisor, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(ctx, "ck_expr_symbol");
    CK_REQUIRE_NOT_NULL(name, "ck_expr_symbol");
    CK_REQUIRE_NOT_NULL(out, "ck_expr_symbol");
    size_t len = strlen(name);
    int ok = len >= 1 && len <= CK_TILE_MAX_SYMBOL_NAME &&
             ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') ||
              name[0] == '_');
    for (size_t i = 1; ok && i < len; ++i) {
        char c = name[i];
        ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (!ok)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_expr_symbol: argument 'name' = \"%.80s\" is not a valid symbol name; "
                       "accepted: a C identifier of 1 to %d characters.",
                       name, CK_TILE_MAX_SYMBOL_NAME);
    if (divisor < 1 || min > max)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_expr_symbol: symbol '%s' has range [%lld, %lld] and divisor %lld; "
                       "accepted: min <= max and divisor >= 1.",
                       name, (long long)min, (long long)max, (long long)divisor);
    for (sym_entry *s = ctx->symbols; s; s = s->next) {
        if (strcmp(s->node->name, name) == 0) {
            const ck_expr *e = s->node;
            if (e->min != min || e->max != max || e->divisor != divisor)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "ck_expr_symbol: symbol '%s' already declared with range "
                               "[%lld, %lld] divisor %lld, redeclared with [%lld, %lld] "
                               "divisor %lld; a symbol has one set of facts.",
                               name, (long long)e->min, (long long)e->max, (long long)e->divisor,
                               (long long)min, (long long)max, (long long)divisor);
            out->v = 0;
            out->e = e;
            return CK_SUCCESS;
        }
    }
    ck_expr *n = new_node(ctx, CK_EXPR_SYM);
    char *copy = arena_alloc(ctx, len + 1);
    sym_entry *se = arena_alloc(ctx, sizeof *se);
    if (!n || !copy || !se)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_expr_symbol: out of memory declaring '%s'.",
                       name);
    memcpy(copy, name, len + 1);
    n->name = copy;
    n->min = min;
    n->max = max;
    n->divisor = divisor;
    se->node = n;
    se->next = ctx->symbols;
    ctx->symbols = se;
    out->v = 0;
    out->e = n;
    return CK_SUCCESS;
}

int ck_expr_find_symbol(ck_expr_arena *ctx, const char *name, ck_ival *out)
{
    if (!ctx || !name)
        return 0;
    for (sym_entry *s = ctx->symbols; s; s = s->next)
        if (strcmp(s->node->name, name) == 0) {
            out->v = 0;
            out->e = s->node;
            return 1;
        }
    return 0;
}

/* ------------------------------------------------------------ builders */

static ck_status overflow(const char *op, int64_t a, int64_t b)
{
    return ck_fail(CK_ERROR_OVERFLOW,
                   "ck_ival_%s: %lld %s %lld overflows a 64-bit integer; sizes and offsets must "
                   "fit int64.",
                   op, (long long)a, op, (long long)b);
}

static int is_op_const(ck_ival x, ck_expr_op op)
{
    return x.e && x.e->op == op && x.e->b->op == CK_EXPR_CONST;
}

ck_status ck_ival_add(ck_ival a, ck_ival b, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ival_add");
    if (!a.e && !b.e) {
        if (__builtin_add_overflow(a.v, b.v, &out->v))
            return overflow("add", a.v, b.v);
        out->e = NULL;
        return CK_SUCCESS;
    }
    if (!a.e) { /* constant to the right */
        ck_ival t = a;
        a = b;
        b = t;
    }
    if (!b.e && b.v == 0) {
        *out = a;
        return CK_SUCCESS;
    }
    if (!b.e && is_op_const(a, CK_EXPR_ADD)) {
        ck_ival c;
        ck_status st = ck_ival_add(ck_ival_int(a.e->b->value), b, &c);
        if (st)
            return st;
        return ck_ival_add(node_ival(a.e->a), c, out);
    }
    /* constants move outwards: a + (b + c) -> (a + b) + c, (a + c) + b -> (a + b) + c */
    if (b.e && is_op_const(b, CK_EXPR_ADD)) {
        ck_ival t;
        ck_status st = ck_ival_add(a, node_ival(b.e->a), &t);
        return st ? st : ck_ival_add(t, ck_ival_int(b.e->b->value), out);
    }
    if (b.e && is_op_const(a, CK_EXPR_ADD)) {
        ck_ival t;
        ck_status st = ck_ival_add(node_ival(a.e->a), b, &t);
        return st ? st : ck_ival_add(t, ck_ival_int(a.e->b->value), out);
    }
    return make_binary(CK_EXPR_ADD, a, b, out, "add");
}

ck_status ck_ival_sub(ck_ival a, ck_ival b, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ival_sub");
    if (!a.e && !b.e) {
        if (__builtin_sub_overflow(a.v, b.v, &out->v))
            return overflow("sub", a.v, b.v);
        out->e = NULL;
        return CK_SUCCESS;
    }
    if (!b.e && b.v != INT64_MIN)
        return ck_ival_add(a, ck_ival_int(-b.v), out);
    if (ck_ival_equal(a, b)) {
        *out = ck_ival_int(0);
        return CK_SUCCESS;
    }
    /* (b + c) - b -> c */
    if (is_op_const(a, CK_EXPR_ADD) && ck_ival_equal(node_ival(a.e->a), b)) {
        *out = ck_ival_int(a.e->b->value);
        return CK_SUCCESS;
    }
    /* round-up remainder: ((b + c) / d) * d - b -> c - (b + c) mod d (its range is then
     * known: [c - d + 1, c]) */
    if (is_op_const(a, CK_EXPR_MUL) && a.e->a->op == CK_EXPR_DIV &&
        a.e->a->b->op == CK_EXPR_CONST && a.e->a->b->value == a.e->b->value && a.e->b->value > 0) {
        ck_ival x = node_ival(a.e->a->a), c, m;
        if (ck_ival_sub(x, b, &c) == CK_SUCCESS && ck_ival_is_const(c) &&
            ck_ival_mod(x, ck_ival_int(a.e->b->value), &m) == CK_SUCCESS)
            return ck_ival_sub(c, m, out);
    }
    return make_binary(CK_EXPR_SUB, a, b, out, "sub");
}

ck_status ck_ival_mul(ck_ival a, ck_ival b, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ival_mul");
    if (!a.e && !b.e) {
        if (__builtin_mul_overflow(a.v, b.v, &out->v))
            return overflow("mul", a.v, b.v);
        out->e = NULL;
        return CK_SUCCESS;
    }
    if (!a.e) {
        ck_ival t = a;
        a = b;
        b = t;
    }
    if (!b.e) {
        if (b.v == 0) {
            *out = ck_ival_int(0);
            return CK_SUCCESS;
        }
        if (b.v == 1) {
            *out = a;
            return CK_SUCCESS;
        }
        if (is_op_const(a, CK_EXPR_MUL)) {
            ck_ival c;
            ck_status st = ck_ival_mul(ck_ival_int(a.e->b->value), b, &c);
            if (st)
                return st;
            return ck_ival_mul(node_ival(a.e->a), c, out);
        }
        /* (x / c) * c -> x when x is known divisible by c */
        if (is_op_const(a, CK_EXPR_DIV) && a.e->b->value == b.v && b.v > 0 &&
            a.e->a->divisor % b.v == 0) {
            *out = node_ival(a.e->a);
            return CK_SUCCESS;
        }
    }
    return make_binary(CK_EXPR_MUL, a, b, out, "mul");
}

ck_status ck_ival_floordiv(ck_ival a, ck_ival b, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ival_floordiv");
    if (!b.e && b.v == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_ival_floordiv: division by the constant 0; a nonzero divisor is "
                       "required.");
    if (!a.e && !b.e) {
        if (a.v == INT64_MIN && b.v == -1)
            return overflow("div", a.v, b.v);
        *out = ck_ival_int(ck_floordiv64(a.v, b.v));
        return CK_SUCCESS;
    }
    if (!b.e && b.v == 1) {
        *out = a;
        return CK_SUCCESS;
    }
    if (!b.e && b.v > 0 && a.e) {
        if (a.e->min >= 0 && a.e->max < b.v) {
            *out = ck_ival_int(0);
            return CK_SUCCESS;
        }
        if (is_op_const(a, CK_EXPR_MUL) && a.e->b->value % b.v == 0)
            return ck_ival_mul(node_ival(a.e->a), ck_ival_int(a.e->b->value / b.v), out);
    }
    if (a.e && b.e && ck_ival_equal(a, b) && b.e->min >= 1) {
        *out = ck_ival_int(1);
        return CK_SUCCESS;
    }
    return make_binary(CK_EXPR_DIV, a, b, out, "floordiv");
}

ck_status ck_ival_mod(ck_ival a, ck_ival b, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ival_mod");
    if (!b.e && b.v == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_ival_mod: modulo by the constant 0; a nonzero modulus is required.");
    if (!a.e && !b.e) {
        *out = ck_ival_int(b.v == -1 ? 0 : ck_floormod64(a.v, b.v));
        return CK_SUCCESS;
    }
    if (!b.e && b.v > 0 && a.e) {
        if (b.v == 1 || a.e->divisor % b.v == 0) {
            *out = ck_ival_int(0);
            return CK_SUCCESS;
        }
        if (a.e->min >= 0 && a.e->max < b.v) {
            *out = a;
            return CK_SUCCESS;
        }
    }
    if (a.e && b.e && ck_ival_equal(a, b)) {
        *out = ck_ival_int(0);
        return CK_SUCCESS;
    }
    return make_binary(CK_EXPR_MOD, a, b, out, "mod");
}

ck_status ck_ival_xor(ck_ival a, ck_ival b, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ival_xor");
    if (!a.e && !b.e) {
        *out = ck_ival_int(a.v ^ b.v);
        return CK_SUCCESS;
    }
    if (!a.e) {
        ck_ival t = a;
        a = b;
        b = t;
    }
    if (!b.e && b.v == 0) {
        *out = a;
        return CK_SUCCESS;
    }
    return make_binary(CK_EXPR_XOR, a, b, out, "xor");
}

static ck_status minmax(ck_ival a, ck_ival b, ck_ival *out, int is_max)
{
    CK_REQUIRE_NOT_NULL(out, is_max ? "ck_ival_max" : "ck_ival_min");
    int64_t amin, amax, bmin, bmax;
    ck_ival_range(a, &amin, &amax);
    ck_ival_range(b, &bmin, &bmax);
    if (amax <= bmin) { /* a <= b always */
        *out = is_max ? b : a;
        return CK_SUCCESS;
    }
    if (bmax <= amin) {
        *out = is_max ? a : b;
        return CK_SUCCESS;
    }
    if (ck_ival_equal(a, b)) {
        *out = a;
        return CK_SUCCESS;
    }
    return make_binary(is_max ? CK_EXPR_MAX : CK_EXPR_MIN, a, b, out, is_max ? "max" : "min");
}

ck_status ck_ival_min(ck_ival a, ck_ival b, ck_ival *out)
{
    return minmax(a, b, out, 0);
}
ck_status ck_ival_max(ck_ival a, ck_ival b, ck_ival *out)
{
    return minmax(a, b, out, 1);
}

/* Accumulating forms for library code. */
#define IV_ACC(fn, pub)                                                                            \
    ck_ival fn(ck_ival a, ck_ival b, ck_status *st)                                                \
    {                                                                                              \
        ck_ival r = ck_ival_int(0);                                                                \
        if (*st == CK_SUCCESS)                                                                     \
            *st = pub(a, b, &r);                                                                   \
        return r;                                                                                  \
    }
IV_ACC(ck_iv_add, ck_ival_add)
IV_ACC(ck_iv_sub, ck_ival_sub)
IV_ACC(ck_iv_mul, ck_ival_mul)
IV_ACC(ck_iv_div, ck_ival_floordiv)
IV_ACC(ck_iv_mod, ck_ival_mod)

/* ------------------------------------------------------------ equality */

static int node_equal(const ck_expr *a, const ck_expr *b)
{
    if (a == b)
        return 1;
    if (a->op != b->op)
        return 0;
    switch (a->op) {
    case CK_EXPR_CONST:
        return a->value == b->value;
    case CK_EXPR_SYM:
        return strcmp(a->name, b->name) == 0 && a->ctx == b->ctx;
    default:
        return node_equal(a->a, b->a) && node_equal(a->b, b->b);
    }
}

int ck_ival_equal(ck_ival a, ck_ival b)
{
    if (!a.e && !b.e)
        return a.v == b.v;
    if (!a.e || !b.e)
        return 0;
    return node_equal(a.e, b.e);
}

/* ------------------------------------------------------------ evaluation */

static ck_status eval_node(const ck_expr *e, const ck_binding *bd, int nb, int64_t *out)
{
    if (e->op == CK_EXPR_CONST) {
        *out = e->value;
        return CK_SUCCESS;
    }
    if (e->op == CK_EXPR_SYM) {
        for (int i = 0; i < nb; ++i) {
            if (bd[i].name && strcmp(bd[i].name, e->name) == 0) {
                int64_t v = bd[i].value;
                if (v < e->min || v > e->max || v % e->divisor != 0)
                    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                                   "ck_ival_eval: symbol '%s' bound to %lld, but it was declared "
                                   "with range [%lld, %lld] and divisor %lld.",
                                   e->name, (long long)v, (long long)e->min, (long long)e->max,
                                   (long long)e->divisor);
                *out = v;
                return CK_SUCCESS;
            }
        }
        return ck_fail(CK_ERROR_NOT_FOUND,
                       "ck_ival_eval: symbol '%s' has no value in the binding; bind every symbol "
                       "of the expression.",
                       e->name);
    }
    int64_t a, b;
    ck_status st = eval_node(e->a, bd, nb, &a);
    if (!st)
        st = eval_node(e->b, bd, nb, &b);
    if (st)
        return st;
    ck_ival r;
    switch (e->op) {
    case CK_EXPR_ADD:
        st = ck_ival_add(ck_ival_int(a), ck_ival_int(b), &r);
        break;
    case CK_EXPR_SUB:
        st = ck_ival_sub(ck_ival_int(a), ck_ival_int(b), &r);
        break;
    case CK_EXPR_MUL:
        st = ck_ival_mul(ck_ival_int(a), ck_ival_int(b), &r);
        break;
    case CK_EXPR_DIV:
        st = ck_ival_floordiv(ck_ival_int(a), ck_ival_int(b), &r);
        break;
    case CK_EXPR_MOD:
        st = ck_ival_mod(ck_ival_int(a), ck_ival_int(b), &r);
        break;
    case CK_EXPR_XOR:
        r = ck_ival_int(a ^ b);
        break;
    case CK_EXPR_MIN:
        r = ck_ival_int(a < b ? a : b);
        break;
    case CK_EXPR_MAX:
        r = ck_ival_int(a > b ? a : b);
        break;
    default:
        return ck_fail(CK_ERROR_INTERNAL, "ck_ival_eval: unknown expression operator %d.",
                       (int)e->op);
    }
    if (st)
        return st;
    *out = r.v;
    return CK_SUCCESS;
}

ck_status ck_ival_eval(ck_ival x, const ck_binding *bindings, int nbindings, int64_t *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_ival_eval");
    if (!x.e) {
        *out = x.v;
        return CK_SUCCESS;
    }
    if (nbindings > 0 && !bindings)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_ival_eval: argument 'bindings' is NULL with nbindings = %d.", nbindings);
    return eval_node(x.e, bindings, nbindings, out);
}

static ck_status subst_node(const ck_expr *e, const ck_binding *bd, int nb, ck_ival *out)
{
    if (e->op == CK_EXPR_CONST || e->op == CK_EXPR_SYM) {
        if (e->op == CK_EXPR_SYM) {
            for (int i = 0; i < nb; ++i)
                if (bd[i].name && strcmp(bd[i].name, e->name) == 0) {
                    int64_t v;
                    ck_status st = eval_node(e, bd, nb, &v);
                    if (st)
                        return st;
                    *out = ck_ival_int(v);
                    return CK_SUCCESS;
                }
        }
        *out = node_ival(e);
        return CK_SUCCESS;
    }
    ck_ival a, b;
    ck_status st = subst_node(e->a, bd, nb, &a);
    if (!st)
        st = subst_node(e->b, bd, nb, &b);
    if (st)
        return st;
    switch (e->op) {
    case CK_EXPR_ADD:
        return ck_ival_add(a, b, out);
    case CK_EXPR_SUB:
        return ck_ival_sub(a, b, out);
    case CK_EXPR_MUL:
        return ck_ival_mul(a, b, out);
    case CK_EXPR_DIV:
        return ck_ival_floordiv(a, b, out);
    case CK_EXPR_MOD:
        return ck_ival_mod(a, b, out);
    case CK_EXPR_XOR:
        return ck_ival_xor(a, b, out);
    case CK_EXPR_MIN:
        return ck_ival_min(a, b, out);
    case CK_EXPR_MAX:
        return ck_ival_max(a, b, out);
    default:
        return ck_fail(CK_ERROR_INTERNAL, "ck_ival_substitute: unknown operator %d.", (int)e->op);
    }
}

ck_status ck_ival_substitute(ck_ival x, const ck_binding *bindings, int nbindings, ck_ival *out)
{
    if (!x.e) {
        *out = x;
        return CK_SUCCESS;
    }
    return subst_node(x.e, bindings, nbindings, out);
}
