/* Finding kernel declarations in device C and generating the emulator's entry points. */
#include "rt/kernel_sig.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Copy of `src` with comments, string/char literals and preprocessor lines blanked out. */
static char *strip(const char *src)
{
    size_t n = strlen(src);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, src, n + 1);
    int line_start = 1;
    for (size_t i = 0; i < n;) {
        char ch = out[i];
        if (line_start && (ch == ' ' || ch == '\t')) {
            ++i;
            continue;
        }
        if (line_start && ch == '#') { /* directive, with continuation lines */
            while (i < n && out[i] != '\n') {
                if (out[i] == '\\' && i + 1 < n && out[i + 1] == '\n')
                    out[i++] = ' ';
                out[i++] = ' ';
            }
            continue;
        }
        line_start = 0;
        if (ch == '\n') {
            line_start = 1;
            ++i;
        } else if (ch == '/' && i + 1 < n && out[i + 1] == '/') {
            while (i < n && out[i] != '\n')
                out[i++] = ' ';
        } else if (ch == '/' && i + 1 < n && out[i + 1] == '*') {
            out[i++] = ' ';
            out[i++] = ' ';
            while (i < n && !(out[i] == '*' && i + 1 < n && out[i + 1] == '/')) {
                if (out[i] != '\n')
                    out[i] = ' ';
                ++i;
            }
            if (i < n)
                out[i++] = ' ';
            if (i < n)
                out[i++] = ' ';
        } else if (ch == '"' || ch == '\'') {
            out[i++] = ' ';
            while (i < n && out[i] != ch && out[i] != '\n') {
                if (out[i] == '\\' && i + 1 < n)
                    out[i++] = ' ';
                out[i++] = ' ';
            }
            if (i < n && out[i] == ch)
                out[i++] = ' ';
        } else {
            ++i;
        }
    }
    return out;
}

static int is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static void trim_copy(char *dst, size_t size, const char *b, const char *e)
{
    while (b < e && isspace((unsigned char)*b))
        ++b;
    while (e > b && isspace((unsigned char)e[-1]))
        --e;
    size_t len = (size_t)(e - b);
    if (len >= size)
        len = size - 1;
    /* collapse whitespace runs (declarations may span lines) */
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < size; ++i) {
        char ch = isspace((unsigned char)b[i]) ? ' ' : b[i];
        if (ch == ' ' && o && dst[o - 1] == ' ')
            continue;
        dst[o++] = ch;
    }
    dst[o] = '\0';
}

static ck_status parse_params(ck_kernel_sig *s, const char *b, const char *e)
{
    s->param_count = 0;
    char tmp[CK_SIG_PARAM_MAX];
    trim_copy(tmp, sizeof tmp, b, e);
    if (tmp[0] == '\0' || strcmp(tmp, "void") == 0)
        return CK_SUCCESS;
    const char *p = b;
    int depth = 0;
    for (const char *q = b; q <= e; ++q) {
        if (q < e && (*q == '(' || *q == '['))
            depth++;
        else if (q < e && (*q == ')' || *q == ']'))
            depth--;
        if (q == e || (*q == ',' && depth == 0)) {
            if (s->param_count == CK_SIG_MAX_PARAMS)
                return ck_fail(CK_ERROR_PARSE,
                               "kernel '%s' has more than %d parameters; at most %d are accepted.",
                               s->name, CK_SIG_MAX_PARAMS, CK_SIG_MAX_PARAMS);
            char *decl = s->params[s->param_count];
            trim_copy(decl, CK_SIG_PARAM_MAX, p, q);
            /* the parameter's name is its last identifier (before any array brackets) */
            const char *end = decl + strlen(decl);
            if (strchr(decl, '[') || strchr(decl, '('))
                return ck_fail(CK_ERROR_PARSE,
                               "kernel '%s': parameter '%s' is an array or function; pass a "
                               "pointer or a struct instead.",
                               s->name, decl);
            const char *ne = end;
            while (ne > decl && !is_ident(ne[-1]))
                --ne;
            const char *nb = ne;
            while (nb > decl && is_ident(nb[-1]))
                --nb;
            if (nb == ne || nb == decl)
                return ck_fail(CK_ERROR_PARSE,
                               "kernel '%s': parameter %d ('%s') has no name; every kernel "
                               "parameter must be named.",
                               s->name, s->param_count + 1, decl);
            trim_copy(s->param_names[s->param_count], CK_SIG_NAME_MAX, nb, ne);
            s->param_count++;
            p = q + 1;
        }
    }
    return CK_SUCCESS;
}

ck_status ck_kernel_sigs_parse(const char *source, ck_kernel_sig **sigs, int *count)
{
    CK_REQUIRE_NOT_NULL(source, "ck_kernel_sigs_parse");
    *sigs = NULL;
    *count = 0;
    char *text = strip(source);
    if (!text)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "no memory to parse a kernel source.");
    ck_kernel_sig *out = NULL;
    int n = 0;
    ck_status st = CK_SUCCESS;
    const char *key = "CK_KERNEL";
    size_t klen = strlen(key);
    for (const char *p = strstr(text, key); p; p = strstr(p + klen, key)) {
        if ((p > text && is_ident(p[-1])) || is_ident(p[klen]))
            continue;
        const char *q = p + klen;
        const char *open = strchr(q, '(');
        const char *semi = strpbrk(q, ";{}");
        if (!open || (semi && semi < open)) {
            st = ck_fail(CK_ERROR_PARSE,
                         "a CK_KERNEL declaration has no parameter list; write 'CK_KERNEL void "
                         "name(parameters)'.");
            break;
        }
        const char *ne = open;
        while (ne > q && isspace((unsigned char)ne[-1]))
            --ne;
        const char *nb = ne;
        while (nb > q && is_ident(nb[-1]))
            --nb;
        /* CK_LAUNCH_BOUNDS(...) may stand between the return type and the name: skip it */
        if ((size_t)(ne - nb) == strlen("CK_LAUNCH_BOUNDS") &&
            strncmp(nb, "CK_LAUNCH_BOUNDS", (size_t)(ne - nb)) == 0) {
            int d = 0;
            const char *r = open;
            for (; *r; ++r) {
                if (*r == '(')
                    d++;
                else if (*r == ')' && --d == 0)
                    break;
            }
            q = *r ? r + 1 : r;
            open = strchr(q, '(');
            if (!open) {
                st = ck_fail(CK_ERROR_PARSE, "a CK_KERNEL declaration has no parameter list.");
                break;
            }
            ne = open;
            while (ne > q && isspace((unsigned char)ne[-1]))
                --ne;
            nb = ne;
            while (nb > q && is_ident(nb[-1]))
                --nb;
        }
        int depth = 0;
        const char *close = open;
        for (; *close; ++close) {
            if (*close == '(')
                depth++;
            else if (*close == ')' && --depth == 0)
                break;
        }
        if (nb == ne || !*close) {
            st = ck_fail(CK_ERROR_PARSE,
                         "a CK_KERNEL declaration could not be read; write 'CK_KERNEL void "
                         "name(parameters)'.");
            break;
        }
        ck_kernel_sig *grown = realloc(out, (size_t)(n + 1) * sizeof *out);
        if (!grown) {
            st = ck_fail(CK_ERROR_OUT_OF_MEMORY, "no memory to parse a kernel source.");
            break;
        }
        out = grown;
        ck_kernel_sig *s = &out[n];
        memset(s, 0, sizeof *s);
        trim_copy(s->name, sizeof s->name, nb, ne);
        /* a prototype followed later by the definition is one kernel */
        int dup = 0;
        for (int i = 0; i < n; ++i)
            dup |= strcmp(out[i].name, s->name) == 0;
        if ((st = parse_params(s, open + 1, close)) != CK_SUCCESS)
            break;
        if (!dup)
            n++;
    }
    free(text);
    if (st != CK_SUCCESS) {
        free(out);
        return st;
    }
    *sigs = out;
    *count = n;
    return CK_SUCCESS;
}

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);
static void sb_add(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *g = realloc(b->p, cap);
        if (!g) {
            b->oom = 1;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
}

char *ck_kernel_emu_unit(const char *source, const ck_kernel_sig *sigs, int count)
{
    sbuf b = {malloc(4096), 0, 4096, 0};
    if (!b.p) {
        ck_fail(CK_ERROR_OUT_OF_MEMORY, "no memory for the emulator's kernel unit.");
        return NULL;
    }
    b.p[0] = '\0';
    sb_add(&b, "%s\n\n/* ---- entry points generated by ck for the emulator ---- */\n", source);
    sb_add(&b, "#include <stddef.h>\n");
    for (int k = 0; k < count; ++k) {
        const ck_kernel_sig *s = &sigs[k];
        const char *nm = s->name;
        if (s->param_count == 0) {
            sb_add(&b,
                   "__attribute__((visibility(\"default\"))) const size_t ck_emu_layout_%s[] = "
                   "{0, 0, 1};\n"
                   "__attribute__((visibility(\"default\"))) void ck_emu_run_%s(const void *a);\n"
                   "void ck_emu_run_%s(const void *a) { (void)a; %s(); }\n",
                   nm, nm, nm, nm);
            continue;
        }
        sb_add(&b, "struct ck_emu_args_%s {\n", nm);
        for (int i = 0; i < s->param_count; ++i)
            sb_add(&b, "    %s;\n", s->params[i]);
        sb_add(&b,
               "};\n__attribute__((visibility(\"default\"))) const size_t ck_emu_layout_%s[] "
               "= {%d, sizeof(struct ck_emu_args_%s), _Alignof(struct ck_emu_args_%s)",
               nm, s->param_count, nm, nm);
        for (int i = 0; i < s->param_count; ++i)
            sb_add(&b,
                   ",\n    offsetof(struct ck_emu_args_%s, %s), sizeof(((struct "
                   "ck_emu_args_%s *)0)->%s)",
                   nm, s->param_names[i], nm, s->param_names[i]);
        sb_add(&b,
               "};\n__attribute__((visibility(\"default\"))) void ck_emu_run_%s(const void "
               "*a);\nvoid ck_emu_run_%s(const void *a)\n{\n    const struct ck_emu_args_%s "
               "*p = (const struct ck_emu_args_%s *)a;\n    %s(",
               nm, nm, nm, nm, nm);
        for (int i = 0; i < s->param_count; ++i)
            sb_add(&b, "%sp->%s", i ? ", " : "", s->param_names[i]);
        sb_add(&b, ");\n}\n");
    }
    if (b.oom) {
        free(b.p);
        ck_fail(CK_ERROR_OUT_OF_MEMORY, "no memory for the emulator's kernel unit.");
        return NULL;
    }
    return b.p;
}
