/*
 * Hierarchical integer tuples (ck_int_tuple): construction, validation,
 * parsing and printing. The layout wrapper (layout.c) builds on these.
 */
#include "int_tuple.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

/* ------------------------------------------------------------ validation */

typedef struct check_ctx {
    const ck_int_tuple *t;
    const char *func;
    const char *arg;
} check_ctx;

static ck_status check_fail(const check_ctx *c, const char *fmt, int a, int b)
{
    char detail[256];
    snprintf(detail, sizeof detail, fmt, a, b);
    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                   "%s: argument '%s' is not a well-formed ck_int_tuple: %s; build tuples with "
                   "ck_int_tuple_parse, ck_int_tuple_flat or ck_int_tuple_join.",
                   c->func, c->arg, detail);
}

/* Check the subtree at node i (nesting level `level`, the root being 0). */
static ck_status check_node(const check_ctx *c, int i, int level)
{
    const ck_int_tuple *t = c->t;
    if (i >= t->count)
        return check_fail(c, "node %d is referenced but only %d nodes are in use", i, t->count);
    const ck_int_tuple_node *n = &t->node[i];
    if (n->kind == CK_INT_TUPLE_INT || n->kind == CK_INT_TUPLE_ALL ||
        n->kind == CK_INT_TUPLE_RANGE) {
        if (n->span != 1 || n->rank != 0)
            return check_fail(c, "leaf node %d has span %d (must be 1) or a non-zero rank", i,
                              n->span);
        return CK_SUCCESS;
    }
    if (n->kind != CK_INT_TUPLE_TUPLE)
        return check_fail(c, "node %d has kind %d, accepted kinds are 0 to 3", i, n->kind);
    if (level >= CK_INT_TUPLE_MAX_DEPTH)
        return check_fail(c, "a tuple is nested %d levels deep, at most %d are supported",
                          level + 1, CK_INT_TUPLE_MAX_DEPTH);
    if (n->rank < 0 || n->rank >= CK_INT_TUPLE_MAX_NODES)
        return check_fail(c, "tuple node %d has rank %d", i, n->rank);
    int next = i + 1;
    for (int k = 0; k < n->rank; ++k) {
        ck_status st = check_node(c, next, level + 1);
        if (st != CK_SUCCESS)
            return st;
        next += t->node[next].span;
    }
    if (n->span != next - i)
        return check_fail(c, "node %d has span %d but its subtree has a different node count", i,
                          n->span);
    return CK_SUCCESS;
}

ck_status ck_int_tuple_check(const ck_int_tuple *t, const char *func, const char *arg)
{
    check_ctx c = {t, func, arg};
    if (t == NULL)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: argument '%s' is NULL; a valid pointer is required.", func, arg);
    if (t->count < 1 || t->count > CK_INT_TUPLE_MAX_NODES)
        return check_fail(&c, "its node count is %d, accepted: 1 to %d", t->count,
                          CK_INT_TUPLE_MAX_NODES);
    ck_status st = check_node(&c, 0, 0);
    if (st != CK_SUCCESS)
        return st;
    if (t->node[0].span != t->count)
        return check_fail(&c, "the root spans %d nodes but %d are in use", t->node[0].span,
                          t->count);
    return CK_SUCCESS;
}

/* ---------------------------------------------------------- construction */

static ck_status make_leaf(ck_int_tuple *out, int kind, int64_t v, int64_t v2)
{
    memset(out, 0, sizeof *out);
    out->count = 1;
    out->node[0].kind = kind;
    out->node[0].span = 1;
    out->node[0].value = v;
    out->node[0].value2 = v2;
    return CK_SUCCESS;
}

ck_status ck_int_tuple_int(int64_t value, ck_int_tuple *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_int_tuple_int");
    return make_leaf(out, CK_INT_TUPLE_INT, value, 0);
}

ck_status ck_int_tuple_all(ck_int_tuple *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_int_tuple_all");
    return make_leaf(out, CK_INT_TUPLE_ALL, 0, 0);
}

ck_status ck_int_tuple_range(int64_t from, int64_t to, ck_int_tuple *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_int_tuple_range");
    return make_leaf(out, CK_INT_TUPLE_RANGE, from, to);
}

ck_status ck_int_tuple_flat(const int64_t *values, int n, ck_int_tuple *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_int_tuple_flat");
    if (n < 0 || n >= CK_INT_TUPLE_MAX_NODES)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_int_tuple_flat: argument 'n' = %d is out of range; accepted: 0 to %d "
                       "(CK_INT_TUPLE_MAX_NODES - 1).",
                       n, CK_INT_TUPLE_MAX_NODES - 1);
    if (n > 0)
        CK_REQUIRE_NOT_NULL(values, "ck_int_tuple_flat");
    ck_int_tuple t;
    memset(&t, 0, sizeof t);
    t.count = n + 1;
    t.node[0].kind = CK_INT_TUPLE_TUPLE;
    t.node[0].rank = n;
    t.node[0].span = n + 1;
    for (int i = 0; i < n; ++i) {
        t.node[i + 1].kind = CK_INT_TUPLE_INT;
        t.node[i + 1].span = 1;
        t.node[i + 1].value = values[i];
    }
    *out = t;
    return CK_SUCCESS;
}

static int subtree_depth(const ck_int_tuple *t, int i)
{
    if (t->node[i].kind != CK_INT_TUPLE_TUPLE)
        return 0;
    int best = 0;
    int c = i + 1;
    for (int k = 0; k < t->node[i].rank; ++k) {
        int d = subtree_depth(t, c);
        if (d > best)
            best = d;
        c += t->node[c].span;
    }
    return best + 1;
}

ck_status ck_int_tuple_join(const ck_int_tuple *parts, int n, ck_int_tuple *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_int_tuple_join");
    if (n < 0 || n >= CK_INT_TUPLE_MAX_NODES)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_int_tuple_join: argument 'n' = %d is out of range; accepted: 0 to %d.",
                       n, CK_INT_TUPLE_MAX_NODES - 1);
    if (n > 0)
        CK_REQUIRE_NOT_NULL(parts, "ck_int_tuple_join");
    ck_int_tuple t;
    memset(&t, 0, sizeof t);
    t.node[0].kind = CK_INT_TUPLE_TUPLE;
    t.node[0].rank = n;
    int count = 1;
    for (int k = 0; k < n; ++k) {
        char name[32];
        snprintf(name, sizeof name, "parts[%d]", k);
        ck_status st = ck_int_tuple_check(&parts[k], "ck_int_tuple_join", name);
        if (st != CK_SUCCESS)
            return st;
        if (count + parts[k].count > CK_INT_TUPLE_MAX_NODES)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_int_tuple_join: the joined tuple would have more than %d nodes "
                           "(CK_INT_TUPLE_MAX_NODES) at parts[%d].",
                           CK_INT_TUPLE_MAX_NODES, k);
        if (subtree_depth(&parts[k], 0) + 1 > CK_INT_TUPLE_MAX_DEPTH)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_int_tuple_join: parts[%d] has depth %d, so the joined tuple would "
                           "be nested deeper than the %d levels supported.",
                           k, subtree_depth(&parts[k], 0), CK_INT_TUPLE_MAX_DEPTH);
        memcpy(&t.node[count], parts[k].node, (size_t)parts[k].count * sizeof t.node[0]);
        count += parts[k].count;
    }
    t.count = count;
    t.node[0].span = count;
    *out = t;
    return CK_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

ck_status ck_int_tuple_rank(const ck_int_tuple *t, int *rank)
{
    CK_REQUIRE_NOT_NULL(rank, "ck_int_tuple_rank");
    ck_status st = ck_int_tuple_check(t, "ck_int_tuple_rank", "t");
    if (st != CK_SUCCESS)
        return st;
    *rank = t->node[0].kind == CK_INT_TUPLE_TUPLE ? t->node[0].rank : 1;
    return CK_SUCCESS;
}

ck_status ck_int_tuple_depth(const ck_int_tuple *t, int *depth)
{
    CK_REQUIRE_NOT_NULL(depth, "ck_int_tuple_depth");
    ck_status st = ck_int_tuple_check(t, "ck_int_tuple_depth", "t");
    if (st != CK_SUCCESS)
        return st;
    *depth = subtree_depth(t, 0);
    return CK_SUCCESS;
}

ck_status ck_int_tuple_child(const ck_int_tuple *t, int i, ck_int_tuple *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_int_tuple_child");
    ck_status st = ck_int_tuple_check(t, "ck_int_tuple_child", "t");
    if (st != CK_SUCCESS)
        return st;
    int leaf_root = t->node[0].kind != CK_INT_TUPLE_TUPLE;
    int rank = leaf_root ? 1 : t->node[0].rank;
    if (i < 0 || i >= rank)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_int_tuple_child: argument 'i' = %d is out of range; the tuple has "
                       "rank %d, accepted: 0 to %d.",
                       i, rank, rank - 1);
    if (leaf_root) {
        *out = *t;
        return CK_SUCCESS;
    }
    int c = 1;
    for (int k = 0; k < i; ++k)
        c += t->node[c].span;
    ck_int_tuple r;
    memset(&r, 0, sizeof r);
    r.count = t->node[c].span;
    memcpy(r.node, &t->node[c], (size_t)r.count * sizeof r.node[0]);
    *out = r;
    return CK_SUCCESS;
}

ck_status ck_int_tuple_equal(const ck_int_tuple *a, const ck_int_tuple *b, int *equal)
{
    CK_REQUIRE_NOT_NULL(equal, "ck_int_tuple_equal");
    ck_status st = ck_int_tuple_check(a, "ck_int_tuple_equal", "a");
    if (st == CK_SUCCESS)
        st = ck_int_tuple_check(b, "ck_int_tuple_equal", "b");
    if (st != CK_SUCCESS)
        return st;
    int eq = a->count == b->count;
    for (int i = 0; eq && i < a->count; ++i) {
        const ck_int_tuple_node *x = &a->node[i], *y = &b->node[i];
        eq = x->kind == y->kind && x->rank == y->rank && x->span == y->span;
        if (eq && (x->kind == CK_INT_TUPLE_INT || x->kind == CK_INT_TUPLE_RANGE))
            eq = x->value == y->value;
        if (eq && x->kind == CK_INT_TUPLE_RANGE)
            eq = x->value2 == y->value2;
    }
    *equal = eq;
    return CK_SUCCESS;
}

/* ---------------------------------------------------------------- parsing */

typedef struct parser {
    const char *s;
    size_t n, pos;
    ck_int_tuple t;
    const char *func, *what;
} parser;

static ck_status parse_error(const parser *p, const char *expected)
{
    int shown = p->n > 60 ? 60 : (int)p->n;
    if (p->pos < p->n)
        return ck_fail(CK_ERROR_PARSE,
                       "%s: cannot parse %s \"%.*s%s\": at character %zu ('%c') expected %s.",
                       p->func, p->what, shown, p->s, p->n > 60 ? "..." : "", p->pos + 1,
                       p->s[p->pos], expected);
    return ck_fail(CK_ERROR_PARSE, "%s: cannot parse %s \"%.*s%s\": it ends where %s is expected.",
                   p->func, p->what, shown, p->s, p->n > 60 ? "..." : "", expected);
}

static void skip_space(parser *p)
{
    while (p->pos < p->n && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
                             p->s[p->pos] == '\r'))
        ++p->pos;
}

static int peek(parser *p)
{
    skip_space(p);
    return p->pos < p->n ? (unsigned char)p->s[p->pos] : -1;
}

static ck_status parse_int(parser *p, int64_t *v)
{
    skip_space(p);
    int neg = 0;
    if (p->pos < p->n && (p->s[p->pos] == '-' || p->s[p->pos] == '+'))
        neg = p->s[p->pos++] == '-';
    if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9')
        return parse_error(p, "a digit");
    uint64_t mag = 0;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        unsigned d = (unsigned)(p->s[p->pos] - '0');
        if (mag > (limit - d) / 10)
            return ck_fail(CK_ERROR_PARSE,
                           "%s: cannot parse %s: the integer at character %zu does not fit in "
                           "64 bits.",
                           p->func, p->what, p->pos + 1);
        mag = mag * 10 + d;
        ++p->pos;
    }
    *v = neg ? (mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    return CK_SUCCESS;
}

static ck_status new_node(parser *p, int *index)
{
    if (p->t.count >= CK_INT_TUPLE_MAX_NODES)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %s has more than %d nodes (tuples and integers together), the most "
                       "a ck_int_tuple holds (CK_INT_TUPLE_MAX_NODES).",
                       p->func, p->what, CK_INT_TUPLE_MAX_NODES);
    *index = p->t.count++;
    memset(&p->t.node[*index], 0, sizeof p->t.node[0]);
    p->t.node[*index].span = 1;
    return CK_SUCCESS;
}

static ck_status parse_elem(parser *p, int level);

/* Children separated by commas up to `close` (')' or end of text, -1). */
static ck_status parse_children(parser *p, int self, int level, int close)
{
    int rank = 0;
    if (peek(p) != close) {
        for (;;) {
            ck_status st = parse_elem(p, level + 1);
            if (st != CK_SUCCESS)
                return st;
            ++rank;
            int c = peek(p);
            if (c == ',') {
                ++p->pos;
                continue;
            }
            if (c == close)
                break;
            return parse_error(p, close == ')' ? "',' or ')'" : "',' or the end");
        }
    }
    if (close == ')')
        ++p->pos;
    p->t.node[self].kind = CK_INT_TUPLE_TUPLE;
    p->t.node[self].rank = rank;
    p->t.node[self].span = p->t.count - self;
    return CK_SUCCESS;
}

static ck_status parse_elem(parser *p, int level)
{
    int self = 0;
    int c = peek(p);
    if (c == '(') {
        if (level >= CK_INT_TUPLE_MAX_DEPTH)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: %s is nested deeper than the %d levels supported "
                           "(CK_INT_TUPLE_MAX_DEPTH), at character %zu.",
                           p->func, p->what, CK_INT_TUPLE_MAX_DEPTH, p->pos + 1);
        ++p->pos;
        ck_status st = new_node(p, &self);
        return st != CK_SUCCESS ? st : parse_children(p, self, level, ')');
    }
    if (c == '_') {
        ++p->pos;
        ck_status st = new_node(p, &self);
        if (st == CK_SUCCESS)
            p->t.node[self].kind = CK_INT_TUPLE_ALL;
        return st;
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
        int64_t v, v2 = 0;
        ck_status st = parse_int(p, &v);
        if (st != CK_SUCCESS)
            return st;
        int range = peek(p) == ':';
        if (range) {
            ++p->pos;
            st = parse_int(p, &v2);
            if (st != CK_SUCCESS)
                return st;
        }
        st = new_node(p, &self);
        if (st != CK_SUCCESS)
            return st;
        p->t.node[self].kind = range ? CK_INT_TUPLE_RANGE : CK_INT_TUPLE_INT;
        p->t.node[self].value = v;
        p->t.node[self].value2 = v2;
        return CK_SUCCESS;
    }
    return parse_error(p, "an integer, '_', a range 'a:b' or '('");
}

static int span_is_empty_parens(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == ' ')
        ++i;
    if (i >= n || s[i++] != '(')
        return 0;
    while (i < n && s[i] == ' ')
        ++i;
    if (i >= n || s[i++] != ')')
        return 0;
    while (i < n && s[i] == ' ')
        ++i;
    return i == n;
}

ck_status ck_int_tuple_parse_span(const char *text, size_t n, int implicit_root, ck_int_tuple *out,
                                  const char *func, const char *what)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.n = n;
    p.func = func;
    p.what = what;
    ck_status st;
    if (implicit_root) {
        int root;
        st = new_node(&p, &root);
        if (st == CK_SUCCESS) {
            if (span_is_empty_parens(text, n)) {
                p.t.node[0].kind = CK_INT_TUPLE_TUPLE;
                p.pos = n;
            } else {
                st = parse_children(&p, root, 0, -1);
            }
        }
    } else {
        st = parse_elem(&p, 0);
        if (st == CK_SUCCESS && peek(&p) != -1)
            st = parse_error(&p, "the end of the text");
    }
    if (st != CK_SUCCESS)
        return st;
    *out = p.t;
    return CK_SUCCESS;
}

ck_status ck_int_tuple_parse(const char *text, ck_int_tuple *out)
{
    CK_REQUIRE_NOT_NULL(text, "ck_int_tuple_parse");
    CK_REQUIRE_NOT_NULL(out, "ck_int_tuple_parse");
    return ck_int_tuple_parse_span(text, strlen(text), 0, out, "ck_int_tuple_parse",
                                   "the tuple text");
}

/* --------------------------------------------------------------- printing */

void ck_text_init(ck_text *text, char *buf, size_t size)
{
    text->buf = buf;
    text->size = size;
    text->len = 0;
    if (size > 0)
        buf[0] = '\0';
}

static void text_printf(ck_text *text, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);

static void text_printf(ck_text *text, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = text->len < text->size ? text->size - text->len : 0;
    int k = vsnprintf(room ? text->buf + text->len : NULL, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        text->len += (size_t)k;
}

void ck_text_puts(ck_text *text, const char *s)
{
    text_printf(text, "%s", s);
}

void ck_int_tuple_write(ck_text *text, const ck_int_tuple *t, int node, int omit_parens)
{
    const ck_int_tuple_node *n = &t->node[node];
    switch (n->kind) {
    case CK_INT_TUPLE_INT:
        text_printf(text, "%lld", (long long)n->value);
        return;
    case CK_INT_TUPLE_ALL:
        ck_text_puts(text, "_");
        return;
    case CK_INT_TUPLE_RANGE:
        text_printf(text, "%lld:%lld", (long long)n->value, (long long)n->value2);
        return;
    default:
        break;
    }
    int parens = !omit_parens || n->rank == 0;
    if (parens)
        ck_text_puts(text, "(");
    int c = node + 1;
    for (int k = 0; k < n->rank; ++k) {
        if (k)
            ck_text_puts(text, ",");
        ck_int_tuple_write(text, t, c, 0);
        c += t->node[c].span;
    }
    if (parens)
        ck_text_puts(text, ")");
}

ck_status ck_text_finish(ck_text *text, const char *func)
{
    if (text->len < text->size)
        return CK_SUCCESS;
    if (text->size > 0)
        text->buf[0] = '\0';
    return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                   "%s: argument 'size' = %zu is too small; the text needs %zu bytes with its "
                   "terminating NUL.",
                   func, text->size, text->len + 1);
}

ck_status ck_int_tuple_format(const ck_int_tuple *t, char *buf, size_t size)
{
    CK_REQUIRE_NOT_NULL(buf, "ck_int_tuple_format");
    ck_status st = ck_int_tuple_check(t, "ck_int_tuple_format", "t");
    if (st != CK_SUCCESS)
        return st;
    ck_text text;
    ck_text_init(&text, buf, size);
    ck_int_tuple_write(&text, t, 0, 0);
    return ck_text_finish(&text, "ck_int_tuple_format");
}
