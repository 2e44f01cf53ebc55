/*
 * Affine forms of symbolic expressions and the simplifier built on them.
 */
#include "gen/affine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static ck_status add_term(ck_affine *a, ck_ival atom, int64_t coef)
{
    if (coef == 0)
        return CK_SUCCESS;
    for (int i = 0; i < a->n; ++i) {
        if (ck_ival_equal(a->atom[i], atom)) {
            int64_t c;
            if (__builtin_add_overflow(a->coef[i], coef, &c))
                return ck_fail(CK_ERROR_OVERFLOW, "affine form: a coefficient overflows int64.");
            if (c == 0) {
                a->atom[i] = a->atom[a->n - 1];
                a->coef[i] = a->coef[a->n - 1];
                --a->n;
            } else {
                a->coef[i] = c;
            }
            return CK_SUCCESS;
        }
    }
    if (a->n == CK_AFFINE_MAX_TERMS)
        return ck_fail(CK_ERROR_UNSUPPORTED, "affine form: more than %d distinct terms.",
                       CK_AFFINE_MAX_TERMS);
    a->atom[a->n] = atom;
    a->coef[a->n] = coef;
    ++a->n;
    return CK_SUCCESS;
}

static ck_status walk(ck_affine *a, const ck_expr *e, int64_t scale);

static int single_atom(const ck_affine *f)
{
    return f->n == 1 && f->k == 0 && f->coef[0] == 1;
}

static int text_cmp(ck_ival x, ck_ival y)
{
    char a[512], b[512];
    ck_ival_print(x, a, sizeof a);
    ck_ival_print(y, b, sizeof b);
    return strcmp(a, b);
}

/* A product of two non-constant factors: distributed over the factors' affine forms (so
 * (i + 1) * ld becomes i*ld + ld) when that gives at most 32 terms; the factors of each
 * product of atoms are ordered by their printed text. */
static ck_status walk_product(ck_affine *a, const ck_expr *e, int64_t scale)
{
    ck_affine fa, fb;
    ck_ival xa = {0, e->a}, xb = {0, e->b};
    ck_status st = ck_affine_from(xa, &fa);
    if (!st)
        st = ck_affine_from(xb, &fb);
    if (st)
        return st;
    int na = fa.n + (fa.k != 0), nb = fb.n + (fb.k != 0);
    if ((single_atom(&fa) && single_atom(&fb)) || na * nb > 32) {
        if (single_atom(&fa) && single_atom(&fb) && text_cmp(fa.atom[0], fb.atom[0]) > 0) {
            ck_ival r;
            if ((st = ck_ival_mul(fb.atom[0], fa.atom[0], &r)))
                return st;
            if (r.e && r.e->op == CK_EXPR_MUL)
                return add_term(a, r, scale);
        }
        ck_ival atom = {0, e};
        return add_term(a, atom, scale);
    }
    for (int i = -1; i < fa.n; ++i)
        for (int j = -1; j < fb.n; ++j) {
            int64_t ca = i < 0 ? fa.k : fa.coef[i], cb = j < 0 ? fb.k : fb.coef[j], c;
            if (ca == 0 || cb == 0)
                continue;
            if (__builtin_mul_overflow(ca, cb, &c) || __builtin_mul_overflow(c, scale, &c))
                return ck_fail(CK_ERROR_OVERFLOW, "affine form: a coefficient overflows int64.");
            if (i < 0 && j < 0) {
                if (__builtin_add_overflow(a->k, c, &a->k))
                    return ck_fail(CK_ERROR_OVERFLOW, "affine form: the constant overflows int64.");
                continue;
            }
            ck_ival atom;
            if (i < 0)
                atom = fb.atom[j];
            else if (j < 0)
                atom = fa.atom[i];
            else {
                ck_ival x = fa.atom[i], y = fb.atom[j];
                if (text_cmp(x, y) > 0) {
                    ck_ival t = x;
                    x = y;
                    y = t;
                }
                if ((st = ck_ival_mul(x, y, &atom)))
                    return st;
                if (!atom.e) { /* folded to a constant */
                    int64_t t;
                    if (__builtin_mul_overflow(atom.v, c, &t) ||
                        __builtin_add_overflow(a->k, t, &a->k))
                        return ck_fail(CK_ERROR_OVERFLOW,
                                       "affine form: the constant overflows int64.");
                    continue;
                }
            }
            if ((st = add_term(a, atom, c)))
                return st;
        }
    return CK_SUCCESS;
}

static ck_status walk(ck_affine *a, const ck_expr *e, int64_t scale)
{
    int64_t t;
    switch (e->op) {
    case CK_EXPR_CONST:
        if (__builtin_mul_overflow(e->value, scale, &t) || __builtin_add_overflow(a->k, t, &a->k))
            return ck_fail(CK_ERROR_OVERFLOW, "affine form: the constant overflows int64.");
        return CK_SUCCESS;
    case CK_EXPR_ADD: {
        ck_status st = walk(a, e->a, scale);
        return st ? st : walk(a, e->b, scale);
    }
    case CK_EXPR_SUB: {
        ck_status st = walk(a, e->a, scale);
        if (st)
            return st;
        if (scale == INT64_MIN)
            return ck_fail(CK_ERROR_OVERFLOW, "affine form: a coefficient overflows int64.");
        return walk(a, e->b, -scale);
    }
    case CK_EXPR_MUL:
        if (e->b->op == CK_EXPR_CONST || e->a->op == CK_EXPR_CONST) {
            const ck_expr *c = e->b->op == CK_EXPR_CONST ? e->b : e->a;
            const ck_expr *x = c == e->b ? e->a : e->b;
            if (__builtin_mul_overflow(scale, c->value, &t))
                return ck_fail(CK_ERROR_OVERFLOW, "affine form: a coefficient overflows int64.");
            return walk(a, x, t);
        }
        return walk_product(a, e, scale);
    default:
        break;
    }
    ck_ival atom = {0, e};
    return add_term(a, atom, scale);
}

ck_status ck_affine_from(ck_ival x, ck_affine *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_affine_from");
    memset(out, 0, sizeof *out);
    if (!x.e) {
        out->k = x.v;
        return CK_SUCCESS;
    }
    return walk(out, x.e, 1);
}

ck_status ck_affine_axpy(const ck_affine *a, int64_t scale, const ck_affine *b, ck_affine *out)
{
    ck_affine r = *a;
    int64_t t;
    if (__builtin_mul_overflow(scale, b->k, &t) || __builtin_add_overflow(r.k, t, &r.k))
        return ck_fail(CK_ERROR_OVERFLOW, "affine form: the constant overflows int64.");
    for (int i = 0; i < b->n; ++i) {
        if (__builtin_mul_overflow(scale, b->coef[i], &t))
            return ck_fail(CK_ERROR_OVERFLOW, "affine form: a coefficient overflows int64.");
        ck_status st = add_term(&r, b->atom[i], t);
        if (st)
            return st;
    }
    *out = r;
    return CK_SUCCESS;
}

ck_status ck_affine_to_ival(const ck_affine *a, ck_ival *out)
{
    ck_ival r = ck_ival_int(0);
    ck_status st = CK_SUCCESS;
    for (int i = 0; i < a->n && !st; ++i) {
        ck_ival t;
        st = ck_ival_mul(a->atom[i], ck_ival_int(a->coef[i]), &t);
        if (!st)
            st = ck_ival_add(r, t, &r);
    }
    if (!st)
        st = ck_ival_add(r, ck_ival_int(a->k), &r);
    if (!st)
        *out = r;
    return st;
}

size_t ck_affine_print(const ck_affine *a, char *buf, size_t size)
{
    size_t len = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int n_ =                                                                                   \
            snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, __VA_ARGS__);     \
        if (n_ > 0)                                                                                \
            len += (size_t)n_;                                                                     \
    } while (0)
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < a->n; ++i) {
        char atom[1024];
        ck_ival_print(a->atom[i], atom, sizeof atom);
        int64_t c = a->coef[i];
        const char *sign = i == 0 ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ");
        uint64_t m = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
        int simple = a->atom[i].e->op == CK_EXPR_SYM || a->atom[i].e->op == CK_EXPR_CONST;
        if (m == 1)
            PUT(simple ? "%s%s" : "%s(%s)", sign, atom);
        else
            PUT(simple ? "%s%llu * %s" : "%s%llu * (%s)", sign, (unsigned long long)m, atom);
    }
    if (a->n == 0)
        PUT("%lld", (long long)a->k);
    else if (a->k)
        PUT(" %s %llu", a->k < 0 ? "-" : "+",
            (unsigned long long)(a->k < 0 ? (uint64_t)0 - (uint64_t)a->k : (uint64_t)a->k));
#undef PUT
    return len;
}

static int cmp_text(const ck_ival *x, const ck_ival *y)
{
    char a[512], b[512];
    ck_ival_print(*x, a, sizeof a);
    ck_ival_print(*y, b, sizeof b);
    return strcmp(a, b);
}

void ck_affine_sort(ck_affine *a)
{
    for (int i = 1; i < a->n; ++i)
        for (int j = i; j > 0 && cmp_text(&a->atom[j - 1], &a->atom[j]) > 0; --j) {
            ck_ival t = a->atom[j];
            a->atom[j] = a->atom[j - 1];
            a->atom[j - 1] = t;
            int64_t c = a->coef[j];
            a->coef[j] = a->coef[j - 1];
            a->coef[j - 1] = c;
        }
}

static int64_t gcd64(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* x / c and x mod c (c > 0) of a simplified x through its affine form. */
static ck_status divmod(ck_ival x, int64_t c, int is_mod, ck_ival *out)
{
    ck_affine f, q, r1, r2;
    ck_status st = ck_affine_from(x, &f);
    if (st)
        return st;
    /* x = c*Q + R1 + R2: Q from coefficients that are multiples of c, R1 the terms known to be
     * multiples of c through their atoms' divisors, R2 the rest */
    memset(&q, 0, sizeof q);
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    for (int i = 0; i < f.n; ++i) {
        int64_t qi = ck_floordiv64(f.coef[i], c), ri = f.coef[i] - qi * c, m;
        if ((st = add_term(&q, f.atom[i], qi)))
            return st;
        if (ri == 0)
            continue;
        int divisible = !__builtin_mul_overflow(ri, ck_ival_divisor(f.atom[i]), &m) && m % c == 0;
        if ((st = add_term(divisible ? &r1 : &r2, f.atom[i], ri)))
            return st;
    }
    q.k = ck_floordiv64(f.k, c);
    r2.k = f.k - q.k * c;
    ck_ival rv, r1v, r1q;
    if ((st = ck_affine_to_ival(&r2, &rv)))
        return st;
    int64_t mn, mx;
    ck_ival_range(rv, &mn, &mx);
    if (mn >= 0 && mx < c) {
        if (is_mod) {
            *out = rv;
            return CK_SUCCESS;
        }
        ck_affine_sort(&q);
        ck_affine_sort(&r1);
        ck_ival qv;
        if ((st = ck_affine_to_ival(&q, &qv)))
            return st;
        if (r1.n == 0) {
            *out = qv;
            return CK_SUCCESS;
        }
        /* R1 / c is exact */
        if ((st = ck_affine_to_ival(&r1, &r1v)) ||
            (st = ck_ival_floordiv(r1v, ck_ival_int(c), &r1q)))
            return st;
        return ck_ival_add(qv, r1q, out);
    }
    /* x = (x - j) + j with x - j a multiple of d, d dividing c, 0 < j < d (an aligned run:
     * (o + 8 t + 3) / 16 with o, 8 t multiples of 8): x / c = (x - j) / c and
     * x mod c = (x - j) mod c + j, so consecutive elements of a run share their quotients */
    int64_t d = c;
    for (int i = 0; i < r2.n && d > 1; ++i) {
        int64_t m;
        if (__builtin_mul_overflow(r2.coef[i], ck_ival_divisor(r2.atom[i]), &m))
            d = 1;
        else
            d = gcd64(d, m);
    }
    int64_t j = d > 1 ? ck_floormod64(f.k, d) : 0;
    if (j > 0) {
        ck_ival base, bs, part;
        if ((st = ck_ival_sub(x, ck_ival_int(j), &base)) || (st = ck_gen_simplify(base, &bs)) ||
            (st = divmod(bs, c, is_mod, &part)))
            return st;
        return is_mod ? ck_ival_add(part, ck_ival_int(j), out) : (*out = part, CK_SUCCESS);
    }
    return is_mod ? ck_ival_mod(x, ck_ival_int(c), out) : ck_ival_floordiv(x, ck_ival_int(c), out);
}

static ck_status canonical(ck_ival x, ck_ival *out)
{
    ck_affine f;
    ck_status st = ck_affine_from(x, &f);
    if (st == CK_ERROR_UNSUPPORTED) {
        *out = x;
        return CK_SUCCESS;
    }
    if (st)
        return st;
    ck_affine_sort(&f);
    return ck_affine_to_ival(&f, out);
}

ck_status ck_gen_simplify(ck_ival x, ck_ival *out)
{
    CK_REQUIRE_NOT_NULL(out, "ck_gen_simplify");
    if (x.e && x.e->op == CK_EXPR_CONST) {
        *out = ck_ival_int(x.e->value);
        return CK_SUCCESS;
    }
    if (!x.e || x.e->op == CK_EXPR_SYM) {
        *out = x;
        return CK_SUCCESS;
    }
    const ck_expr *e = x.e;
    ck_ival a, b;
    ck_ival ea = {0, e->a}, eb = {0, e->b};
    ck_status st = ck_gen_simplify(ea, &a);
    if (!st)
        st = ck_gen_simplify(eb, &b);
    if (st)
        return st;
    ck_ival r;
    switch (e->op) {
    case CK_EXPR_ADD:
        st = ck_ival_add(a, b, &r);
        break;
    case CK_EXPR_SUB:
        st = ck_ival_sub(a, b, &r);
        break;
    case CK_EXPR_MUL:
        st = ck_ival_mul(a, b, &r);
        break;
    case CK_EXPR_DIV:
    case CK_EXPR_MOD:
        if (!b.e && b.v > 0)
            return divmod(a, b.v, e->op == CK_EXPR_MOD, out);
        st = e->op == CK_EXPR_DIV ? ck_ival_floordiv(a, b, &r) : ck_ival_mod(a, b, &r);
        if (!st)
            *out = r;
        return st;
    case CK_EXPR_XOR:
        st = ck_ival_xor(a, b, out);
        return st;
    case CK_EXPR_MIN:
        return ck_ival_min(a, b, out);
    case CK_EXPR_MAX:
        return ck_ival_max(a, b, out);
    default:
        *out = x;
        return CK_SUCCESS;
    }
    if (st)
        return st;
    return canonical(r, out);
}
