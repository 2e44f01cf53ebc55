/*
 * An operation's tile windows (op_window.h): descriptor from its textual form, the generated
 * window functions, and the op's typedef and constructor around them.
 */
#include <string.h>

#include "core/error.h"
#include "gen/window_gen.h"
#include "ops/common/op_window.h"

void ck_op_window_init(ck_op_window *w, const char *name, ck_dtype dtype, unsigned ops)
{
    memset(w, 0, sizeof *w);
    w->spec.name = name;
    w->spec.dtype = dtype;
    w->spec.ops = ops;
    w->spec.enc = &w->enc;
}

ck_status ck_op_window_desc(ck_op_window *w, const char *text, const ck_op_sym *syms, int nsyms)
{
    ck_status st = ck_expr_arena_create(&w->ctx);
    for (int i = 0; !st && i < nsyms; ++i) {
        ck_ival s;
        st = ck_expr_symbol(w->ctx, syms[i].name, syms[i].lo, syms[i].hi, syms[i].div, &s);
    }
    if (!st)
        st = ck_descriptor_parse(text, w->ctx, &w->desc);
    if (st)
        return ck_fail_context(st, "window '%s': descriptor '%s'", w->spec.name, text);
    w->spec.desc = w->desc;
    w->spec.ctx = w->ctx;
    w->spec.enc = &w->enc;
    return CK_SUCCESS;
}

void ck_op_window_free(ck_op_window *w)
{
    ck_descriptor_destroy(w->desc);
    ck_expr_arena_destroy(w->ctx);
    w->desc = NULL;
    w->ctx = NULL;
    w->spec.desc = NULL;
    w->spec.ctx = NULL;
}

/* Whether the generated struct ck_win_<name> (in text) has the member `m`. */
static int has_member(const char *text, const char *name, const char *m)
{
    char head[64], tail[64], field[80];
    snprintf(head, sizeof head, "typedef struct ck_win_%s {", name);
    snprintf(tail, sizeof tail, "} ck_win_%s;", name);
    snprintf(field, sizeof field, " %s;\n", m);
    const char *s = strstr(text, head), *e = s ? strstr(s, tail) : NULL, *f = s ? strstr(s, field) : NULL;
    return e && f && f < e;
}

ck_status ck_op_window_emit(ck_sbuf *b, const char *prefix, const ck_op_window *w,
                            const char *const *args, int nargs)
{
    const char *n = w->spec.name;
    char *text = NULL;
    int bytes = 0;
    const char *ctype = ck_gen_ctype(w->spec.dtype, &bytes);
    ck_status st = ck_tile_window_generate(&w->spec, &text);
    if (st)
        return ck_fail_context(st, "%s: window '%s'", prefix, n);
    ck_sbuf_printf(b, "%s\ntypedef %s %s_win_%s_t;\n", text, ctype, prefix, n);
    ck_sbuf_printf(b, "CK_DEVICE ck_win_%s %s_win_%s_at(const void *p", n, prefix, n);
    for (int i = 0; i < nargs; ++i)
        ck_sbuf_printf(b, ", long long %s", strchr(args[i], '=') + 1);
    ck_sbuf_printf(b, ")\n{\n    ck_win_%s w;\n    w.p = (%s_win_%s_t *)p;\n", n, prefix, n);
    for (int i = 0; i < w->enc.ndim_x; ++i) {
        char o[16];
        int named = 0;
        snprintf(o, sizeof o, "o%d=", i);
        for (int k = 0; k < nargs; ++k)
            named |= strncmp(args[k], o, strlen(o)) == 0;
        if (!named)
            ck_sbuf_printf(b, "    w.o%d = 0;\n", i);
    }
    for (int i = 0; i < nargs; ++i) {
        char member[48];
        const char *eq = strchr(args[i], '=');
        snprintf(member, sizeof member, "%.*s", (int)(eq - args[i]), args[i]);
        if (has_member(text, n, member))
            ck_sbuf_printf(b, "    w.%s = %s;\n", member, eq + 1);
        else
            ck_sbuf_printf(b, "    (void)%s;\n", eq + 1);
    }
    ck_sbuf_printf(b, "    return w;\n}\n");
    ck_tile_free(text);
    return CK_SUCCESS;
}
