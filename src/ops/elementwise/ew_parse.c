/* Elementwise programs: checking, parsing of expressions ("relu(x0 * x1 + x2)"), formatting. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/elementwise.h"
#include "core/error.h"

static int arity(ck_ew_opcode op)
{
    switch (op) {
    case CK_EW_INPUT:
    case CK_EW_CONST:
        return 0;
    case CK_EW_ADD:
    case CK_EW_SUB:
    case CK_EW_MUL:
    case CK_EW_DIV:
    case CK_EW_MAX:
    case CK_EW_MIN:
        return 2;
    default:
        return 1;
    }
}

ck_status ck_ew_check(const ck_ew_program *prog, int input_count)
{
    static const char op[] = "ck_ew_check";
    CK_REQUIRE_NOT_NULL(prog, op);
    if (prog->count < 1 || prog->count > CK_EW_MAX_STEPS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the program has %d steps; 1 to %d are supported.", op, prog->count,
                       CK_EW_MAX_STEPS);
    int depth = 0;
    for (int i = 0; i < prog->count; ++i) {
        const ck_ew_step *s = &prog->steps[i];
        if ((int)s->op < 0 || s->op >= CK_EW_OPCODE_COUNT_)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: step %d has opcode %d, which is not a ck_ew_opcode.", op, i,
                           (int)s->op);
        if (s->op == CK_EW_INPUT && (s->input < 0 || s->input >= input_count))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: step %d reads input %d, but %d input%s given (x0..x%d).", op, i,
                           s->input, input_count, input_count == 1 ? " is" : "s are",
                           input_count - 1);
        if ((s->op == CK_EW_CONST || s->op == CK_EW_SCALE) && !isfinite(s->value))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: step %d has the constant %g; constants must be finite.", op, i,
                           s->value);
        if (s->op == CK_EW_CAST) {
            const ck_dtype_info *info = ck_dtype_get(s->dtype);
            if (!info || !info->is_float)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: step %d casts to dtype %d (%s); cast takes a floating-point "
                               "type (f32 f64 f16 bf16 tf32 fp8*, fp6*, fp4e2m1).",
                               op, i, (int)s->dtype, ck_dtype_name(s->dtype));
        }
        int a = arity(s->op);
        if (depth < a)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: step %d needs %d operand%s but the stack holds %d.", op, i, a,
                           a == 1 ? "" : "s", depth);
        depth += 1 - a;
    }
    if (depth != 1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the program leaves %d values on the stack; it must leave exactly 1.",
                       op, depth);
    return CK_SUCCESS;
}

/* ---- parsing ---------------------------------------------------------------------------- */
typedef struct parser {
    const char *text, *p;
    ck_ew_program *prog;
    ck_status st;
    int depth; /* nesting of unary/primary: bounded so hostile text cannot exhaust the stack */
} parser;

/* Deeper nesting than any program of CK_EW_MAX_STEPS steps can need. */
enum { EW_MAX_NESTING = 256 };

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static int perr(parser *ps, const char *what)
{
    if (ps->st == CK_SUCCESS)
        ps->st = ck_fail(CK_ERROR_PARSE, "ck_ew_parse: at offset %d of \"%s\": %s (found '%.12s').",
                         (int)(ps->p - ps->text), ps->text, what, *ps->p ? ps->p : "end of text");
    return 0;
}

static int emit(parser *ps, ck_ew_step s)
{
    if (ps->prog->count >= CK_EW_MAX_STEPS) {
        if (ps->st == CK_SUCCESS)
            ps->st = ck_fail(CK_ERROR_UNSUPPORTED,
                             "ck_ew_parse: \"%s\" needs more than %d steps, the most a program "
                             "holds.",
                             ps->text, CK_EW_MAX_STEPS);
        return 0;
    }
    ps->prog->steps[ps->prog->count++] = s;
    return 1;
}

static ck_ew_step step(ck_ew_opcode op)
{
    ck_ew_step s;
    memset(&s, 0, sizeof s);
    s.op = op;
    return s;
}

static int expect(parser *ps, char c)
{
    skip(ps);
    if (*ps->p != c) {
        char msg[32];
        snprintf(msg, sizeof msg, "expected '%c'", c);
        return perr(ps, msg);
    }
    ps->p++;
    return 1;
}

static int parse_number(parser *ps, double *v)
{
    skip(ps);
    char *end;
    *v = strtod(ps->p, &end);
    if (end == ps->p || !isfinite(*v))
        return perr(ps, "expected a finite number");
    ps->p = end;
    return 1;
}

static int expr(parser *ps);

static const struct {
    const char *name;
    ck_ew_opcode op;
} funcs[] = {
    {"relu", CK_EW_RELU},         {"gelu", CK_EW_GELU_TANH}, {"gelu_tanh", CK_EW_GELU_TANH},
    {"gelu_erf", CK_EW_GELU_ERF}, {"silu", CK_EW_SILU},      {"sigmoid", CK_EW_SIGMOID},
    {"exp", CK_EW_EXP},           {"neg", CK_EW_NEG},        {"max", CK_EW_MAX},
    {"min", CK_EW_MIN},           {"add", CK_EW_ADD},        {"sub", CK_EW_SUB},
    {"mul", CK_EW_MUL},           {"div", CK_EW_DIV},        {"scale", CK_EW_SCALE},
    {"cast", CK_EW_CAST}};

static int primary(parser *ps)
{
    skip(ps);
    const char *p = ps->p;
    if (*p == '(') {
        ps->p++;
        return expr(ps) && expect(ps, ')');
    }
    if (isdigit((unsigned char)*p) || *p == '.') {
        ck_ew_step s = step(CK_EW_CONST);
        return parse_number(ps, &s.value) && emit(ps, s);
    }
    if (!isalpha((unsigned char)*p) && *p != '_')
        return perr(ps, "expected a number, an input (x0..x3) or a function");
    const char *b = p;
    while (isalnum((unsigned char)*p) || *p == '_')
        ++p;
    size_t n = (size_t)(p - b);
    char name[32];
    if (n >= sizeof name)
        return perr(ps, "name too long");
    memcpy(name, b, n);
    name[n] = '\0';
    if ((n == 2 && name[0] == 'x' && name[1] >= '0' && name[1] <= '3') ||
        (n == 1 && name[0] >= 'a' && name[0] <= 'd')) {
        ck_ew_step s = step(CK_EW_INPUT);
        s.input = n == 2 ? name[1] - '0' : name[0] - 'a';
        ps->p = p;
        return emit(ps, s);
    }
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; ++i) {
        if (strcmp(name, funcs[i].name) != 0)
            continue;
        ps->p = p;
        ck_ew_step s = step(funcs[i].op);
        if (!expect(ps, '(') || !expr(ps))
            return 0;
        if (s.op == CK_EW_SCALE) {
            if (!expect(ps, ',') || !parse_number(ps, &s.value))
                return 0;
        } else if (s.op == CK_EW_CAST) {
            if (!expect(ps, ','))
                return 0;
            skip(ps);
            const char *t = ps->p;
            while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
                ps->p++;
            char tn[32];
            size_t tl = (size_t)(ps->p - t);
            if (tl == 0 || tl >= sizeof tn)
                return perr(ps, "expected a dtype name");
            memcpy(tn, t, tl);
            tn[tl] = '\0';
            const ck_dtype_info *info = NULL;
            if (ck_dtype_from_name(tn, &s.dtype) == CK_SUCCESS)
                info = ck_dtype_get(s.dtype);
            if (!info || !info->is_float) {
                ps->p = t;
                return perr(ps, "expected a floating-point dtype name (f32 f16 bf16 fp8e4m3 ...)");
            }
        } else if (arity(s.op) == 2) {
            if (!expect(ps, ',') || !expr(ps))
                return 0;
        }
        return expect(ps, ')') && emit(ps, s);
    }
    return perr(ps, "unknown name; inputs are x0..x3 (or a..d), functions relu gelu gelu_tanh "
                    "gelu_erf silu sigmoid exp neg max min add sub mul div scale cast");
}

static int unary(parser *ps);

static int unary_nested(parser *ps)
{
    skip(ps);
    if (*ps->p == '-') {
        ps->p++;
        return unary(ps) && emit(ps, step(CK_EW_NEG));
    }
    if (*ps->p == '+') {
        ps->p++;
        return unary(ps);
    }
    return primary(ps);
}

static int unary(parser *ps)
{
    if (ps->depth >= EW_MAX_NESTING) {
        if (ps->st == CK_SUCCESS)
            ps->st = ck_fail(CK_ERROR_PARSE,
                             "ck_ew_parse: at offset %d the expression nests deeper than %d "
                             "levels (parentheses, function calls or signs), the most accepted.",
                             (int)(ps->p - ps->text), EW_MAX_NESTING);
        return 0;
    }
    ps->depth++;
    int ok = unary_nested(ps);
    ps->depth--;
    return ok;
}

static int term(parser *ps)
{
    if (!unary(ps))
        return 0;
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (c != '*' && c != '/')
            return 1;
        ps->p++;
        if (!unary(ps) || !emit(ps, step(c == '*' ? CK_EW_MUL : CK_EW_DIV)))
            return 0;
    }
}

static int expr(parser *ps)
{
    if (!term(ps))
        return 0;
    for (;;) {
        skip(ps);
        char c = *ps->p;
        if (c != '+' && c != '-')
            return 1;
        ps->p++;
        if (!term(ps) || !emit(ps, step(c == '+' ? CK_EW_ADD : CK_EW_SUB)))
            return 0;
    }
}

ck_status ck_ew_parse(const char *text, ck_ew_program *prog)
{
    CK_REQUIRE_NOT_NULL(text, "ck_ew_parse");
    CK_REQUIRE_NOT_NULL(prog, "ck_ew_parse");
    ck_ew_program out;
    memset(&out, 0, sizeof out);
    parser ps = {text, text, &out, CK_SUCCESS, 0};
    if (expr(&ps)) {
        skip(&ps);
        if (*ps.p)
            perr(&ps, "expected an operator or the end of the expression");
    }
    if (ps.st != CK_SUCCESS)
        return ps.st;
    *prog = out;
    return CK_SUCCESS;
}

/* ---- formatting ------------------------------------------------------------------------- */
ck_status ck_ew_format(const ck_ew_program *prog, char *buf, size_t size)
{
    CK_REQUIRE_NOT_NULL(buf, "ck_ew_format");
    ck_status st = ck_ew_check(prog, CK_EW_MAX_INPUTS);
    if (st != CK_SUCCESS)
        return st;
    /* each stack entry is the text of a subexpression (fully parenthesized) */
    enum { CAP = 4096 };
    char *stack[CK_EW_MAX_STEPS];
    int sp = 0;
    st = CK_SUCCESS;
    for (int i = 0; i < prog->count && st == CK_SUCCESS; ++i) {
        const ck_ew_step *s = &prog->steps[i];
        char *t = malloc(CAP);
        if (!t) {
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_ew_format: out of host memory.");
            break;
        }
        int a = arity(s->op), n = 0;
        char *x = a >= 1 ? stack[sp - a] : NULL, *y = a == 2 ? stack[sp - 1] : NULL;
        const char *fname = "";
        for (size_t f = 0; f < sizeof funcs / sizeof funcs[0]; ++f)
            if (funcs[f].op == s->op)
                fname = funcs[f].name;
        switch (s->op) {
        case CK_EW_INPUT:
            n = snprintf(t, CAP, "x%d", s->input);
            break;
        case CK_EW_CONST:
            n = snprintf(t, CAP, "%.17g", s->value);
            break;
        case CK_EW_ADD:
        case CK_EW_SUB:
        case CK_EW_MUL:
        case CK_EW_DIV:
            n = snprintf(t, CAP, "(%s %c %s)", x, "+-*/"[s->op - CK_EW_ADD], y);
            break;
        case CK_EW_MAX:
        case CK_EW_MIN:
            n = snprintf(t, CAP, "%s(%s, %s)", fname, x, y);
            break;
        case CK_EW_SCALE:
            n = snprintf(t, CAP, "scale(%s, %.17g)", x, s->value);
            break;
        case CK_EW_CAST:
            n = snprintf(t, CAP, "cast(%s, %s)", x, ck_dtype_name(s->dtype));
            break;
        case CK_EW_GELU_TANH:
            n = snprintf(t, CAP, "gelu_tanh(%s)", x);
            break;
        default:
            n = snprintf(t, CAP, "%s(%s)", fname, x);
            break;
        }
        for (int k = 0; k < a; ++k)
            free(stack[--sp]);
        stack[sp++] = t;
        if (n < 0 || n >= CAP)
            st = ck_fail(CK_ERROR_OVERFLOW,
                         "ck_ew_format: the expression is longer than %d "
                         "characters.",
                         CAP - 1);
    }
    if (st == CK_SUCCESS) {
        size_t len = strlen(stack[0]);
        const char *txt = stack[0];
        if (len >= 2 && txt[0] == '(' && txt[len - 1] == ')' &&
            prog->steps[prog->count - 1].op >= CK_EW_ADD &&
            prog->steps[prog->count - 1].op <= CK_EW_DIV) { /* drop the outermost parentheses */
            txt++;
            len -= 2;
        }
        if (len + 1 > size)
            st = ck_fail(CK_ERROR_OVERFLOW,
                         "ck_ew_format: the expression needs %zu bytes; the buffer has %zu.",
                         len + 1, size);
        else {
            memcpy(buf, txt, len);
            buf[len] = '\0';
        }
    }
    while (sp > 0)
        free(stack[--sp]);
    return st;
}
