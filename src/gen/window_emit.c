/*
 * Tile window code generation, the writing half: from the analysed window (window_gen.c) the
 * device C text -- header comment, window struct, make/move, tile_x, sweep and the
 * load/store/update/atomic-add functions, one block per access of the space-filling curve.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/affine.h"
#include "gen/window_gen.h"

typedef ck_gen gen;

static ck_status oom(void)
{
    return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_tile_window_generate: out of memory.");
}

void ck_gen_access_regs(const ck_distribution *d, const ck_sfc *sfc, int vdim, int width,
                        long long a, long long *regs, int *y)
{
    if (d->enc.ndim_y == 0) {
        regs[0] = 0;
        return;
    }
    ck_sfc_get_index(sfc, a, y);
    int yy[CK_DIST_MAX_Y];
    memcpy(yy, y, sizeof yy);
    for (int j = 0; j < width; ++j) {
        ck_dist_ys_to_d(d, yy, &regs[j]);
        yy[vdim] += 1;
    }
}

/* Register indices of access a (vwidth of them). */
static void access_regs(const gen *g, long long a, long long *regs, int *y)
{
    ck_gen_access_regs(&g->dist, &g->sfc, g->vdim, g->vwidth, a, regs, y);
}

int ck_gen_value_delta(ck_ival vi, ck_ival vj, int64_t *delta)
{
    ck_affine a, b, d;
    if (ck_affine_from(vi, &a) || ck_affine_from(vj, &b) || ck_affine_axpy(&b, -1, &a, &d)) {
        ck_clear_error();
        return 0;
    }
    *delta = d.k;
    return d.n == 0;
}

/* Conditions of an access (all registers valid), joined with &&: a condition implied by
 * another of the same bound (v < H implied by v + c < H, c >= 0; likewise L <= v) is left out,
 * so a vector's bounds check tests its last element only. */
void ck_gen_access_cond(const gen *g, const long long *regs, int count, ck_sbuf *b)
{
    const ck_gen_cond *all[16 * CK_GEN_MAX_REG_CONDS];
    int n = 0;
    for (int j = 0; j < count; ++j)
        for (int k = 0; k < g->regs[regs[j]].ncond; ++k)
            all[n++] = &g->regs[regs[j]].cond[k];
    for (int i = 0; i < n; ++i) {
        int implied = 0;
        for (int j = 0; j < n && !implied; ++j) {
            int64_t d;
            if (j == i || all[j]->upper != all[i]->upper ||
                !ck_ival_equal(all[j]->bound, all[i]->bound) ||
                !ck_gen_value_delta(all[i]->value, all[j]->value, &d))
                continue;
            if (all[i]->upper ? d > 0 : d < 0)
                implied = 1;
            else if (d == 0 && j < i)
                implied = 1;
        }
        if (implied)
            continue;
        char *v = NULL, *bd = NULL;
        if (ck_gen_print_ival(all[i]->value, &v) || ck_gen_print_ival(all[i]->bound, &bd)) {
            ck_clear_error();
            b->oom = 1;
        } else if (all[i]->upper) {
            ck_sbuf_printf(b, "%s%s < %s", b->len ? " && " : "", v, bd);
        } else {
            ck_sbuf_printf(b, "%s%s <= %s", b->len ? " && " : "", bd, v);
        }
        free(v);
        free(bd);
    }
}

/* Whether x is a known multiple of w. */
static int multiple_of(ck_ival x, int64_t w)
{
    int64_t d = ck_ival_is_const(x) ? x.v : ck_ival_divisor(x);
    return d % w == 0;
}

/* Whether the registers of a run of `count` valid or invalid together although their conditions
 * differ: each condition of register j is register 0's with its value moved by some d in
 * [0, count), and where d > 0 both register 0's value and the bound are multiples of count - so
 * v < B holds exactly when v + d < B does (and B <= v exactly when B <= v + d): a vector of a
 * row whose length is a multiple of the vector never straddles its end. */
static int uniform_validity(const gen *g, const long long *regs, int count)
{
    const reg_info *r0 = &g->regs[regs[0]];
    for (int j = 1; j < count; ++j) {
        const reg_info *rj = &g->regs[regs[j]];
        if (rj->ncond != r0->ncond)
            return 0;
        for (int m = 0; m < rj->ncond; ++m) {
            int ok = 0;
            for (int k = 0; k < r0->ncond && !ok; ++k) {
                const ck_gen_cond *a = &r0->cond[k], *b = &rj->cond[m];
                int64_t d;
                ok = a->upper == b->upper && ck_ival_equal(a->bound, b->bound) &&
                     ck_gen_value_delta(a->value, b->value, &d) && d >= 0 && d < count &&
                     (d == 0 || (multiple_of(a->value, count) && multiple_of(a->bound, count)));
            }
            if (!ok)
                return 0;
        }
    }
    return 1;
}

/* Whether every register of the access has the same conditions, or valid or invalid together. */
static int same_conditions(const gen *g, const long long *regs, int count)
{
    if (count > 1 && uniform_validity(g, regs, count))
        return 1;
    ck_sbuf first = {0};
    ck_gen_access_cond(g, regs, 1, &first);
    int same = 1;
    for (int j = 1; j < count && same; ++j) {
        ck_sbuf other = {0};
        ck_gen_access_cond(g, &regs[j], 1, &other);
        same = (!first.s && !other.s) || (first.s && other.s && !strcmp(first.s, other.s));
        free(other.s);
    }
    free(first.s);
    return same;
}

static int aligned16(const gen *g)
{
    if (g->vwidth * g->ebytes != 16)
        return 0;
    for (long long a = 0; a < g->sfc.num_access; ++a) {
        long long regs[16];
        int y[CK_DIST_MAX_Y];
        access_regs(g, a, regs, y);
        int64_t dv = ck_ival_is_const(g->regs[regs[0]].offset)
                         ? g->regs[regs[0]].offset.v
                         : ck_ival_divisor(g->regs[regs[0]].offset);
        if ((dv * g->ebytes) % 16)
            return 0;
    }
    return 1;
}

static const char *addr(const gen *g, long long r, char *buf, size_t n)
{
    if (g->regs[r].rel_const)
        snprintf(buf, n, "ck_base + %lld", (long long)g->regs[r].rel_value);
    else
        snprintf(buf, n, "ck_base + (%s)", g->regs[r].rel);
    return buf;
}

void ck_gen_emit_prologue(const gen *g, ck_sbuf *b, int is_load)
{
    const ck_distribution *d = &g->dist;
    const char *n = g->spec->name;
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, "    const long long %s = w->o%d;\n    (void)%s;\n", g->oname[i], i,
                       g->oname[i]);
    for (int i = 0; i < g->nsyms; ++i)
        ck_sbuf_printf(b, "    const long long %s = w->%s;\n    (void)%s;\n", g->syms[i],
                       g->syms[i], g->syms[i]);
    int np = d->enc.ndim_p;
    if (np == 1) {
        ck_sbuf_printf(b, "    const long long %s = ck_thread_linear();\n", g->pname[0]);
    } else if (np == 2) {
        ck_sbuf_printf(b, "    const long long %s = ck_warp_id();\n", g->pname[0]);
        ck_sbuf_printf(b, "    const long long %s = ck_lane_id();\n", g->pname[1]);
    } else if (np > 2) {
        ck_sbuf_printf(b, "    long long ck_t = ck_thread_linear();\n");
        for (int i = np - 1; i > 0; --i)
            ck_sbuf_printf(b, "    const long long %s = ck_t %% %d;\n    ck_t /= %d;\n",
                           g->pname[i], d->p_lengths[i], d->p_lengths[i]);
        ck_sbuf_printf(b, "    const long long %s = ck_t;\n", g->pname[0]);
    }
    if (np > 0) {
        ck_sbuf_printf(b, "    if (");
        for (int i = 0, k = 0; i < np; ++i) {
            if (np == 2 && i == 1 && d->p_lengths[1] >= 32)
                continue; /* a lane id is always below 32 */
            ck_sbuf_printf(b, "%s%s >= %d", k++ ? " || " : "", g->pname[i], d->p_lengths[i]);
        }
        if (is_load)
            ck_sbuf_printf(b,
                           ") {\n        for (int i = 0; i < CK_NREGS_%s; ++i)\n"
                           "            regs[i] = %s;\n        return;\n    }\n",
                           n, g->fill);
        else
            ck_sbuf_printf(b, ")\n        return;\n");
    }
    char *o0 = NULL;
    if (ck_gen_print_ival(g->regs[0].offset, &o0) == CK_SUCCESS) {
        ck_sbuf_printf(b, "    const long long ck_off0 = %s;\n    (void)ck_off0;\n", o0);
        ck_sbuf_printf(b, "    %s *ck_base = w->p + ck_off0;\n", g->ctype);
    } else {
        ck_clear_error();
        b->oom = 1;
    }
    free(o0);
}

typedef enum { OP_LOAD, OP_STORE, OP_UPDATE, OP_ATOMIC } op_kind;

/* One access of `count` registers (contiguous in memory when count > 1) under one mask. */
static void emit_access(const gen *g, ck_sbuf *b, op_kind op, int use16, const long long *regs,
                        int count, int nomask)
{
    const char *n = g->spec->name, *T = g->ctype;
    ck_sbuf cond = {0};
    if (!nomask)
        ck_gen_access_cond(g, regs, count, &cond);
    const char *ind = cond.len ? "        " : "    ";
    if (cond.len)
        ck_sbuf_printf(b, "    if (%s) {\n", cond.s);
    char ab[4200];
    if (use16 && count * g->ebytes == 16 && (op == OP_LOAD || op == OP_STORE)) {
        ck_sbuf_printf(b, "%s{\n%s    union { ck_u32x4 v; %s t[%d]; } ck_u;\n", ind, ind, T, count);
        if (op == OP_LOAD) {
            ck_sbuf_printf(b, "%s    ck_u.v = %s(%s);\n", ind,
                           g->spec->read_only ? "ck_ld16_nc" : "ck_ld16",
                           addr(g, regs[0], ab, sizeof ab));
            for (int j = 0; j < count; ++j)
                ck_sbuf_printf(b, "%s    regs[%lld] = ck_u.t[%d];\n", ind, regs[j], j);
        } else {
            for (int j = 0; j < count; ++j)
                ck_sbuf_printf(b, "%s    ck_u.t[%d] = regs[%lld];\n", ind, j, regs[j]);
            ck_sbuf_printf(b, "%s    ck_st16(%s, ck_u.v);\n", ind, addr(g, regs[0], ab, sizeof ab));
        }
        ck_sbuf_printf(b, "%s}\n", ind);
    } else {
        for (int j = 0; j < count; ++j) {
            addr(g, regs[j], ab, sizeof ab);
            switch (op) {
            case OP_LOAD:
                ck_sbuf_printf(b, "%sregs[%lld] = *(%s);\n", ind, regs[j], ab);
                break;
            case OP_STORE:
                ck_sbuf_printf(b, "%s*(%s) = regs[%lld];\n", ind, ab, regs[j]);
                break;
            case OP_UPDATE:
                ck_sbuf_printf(b, "%s*(%s) = CK_UPDATE_%s(*(%s), regs[%lld]);\n", ind, ab, n, ab,
                               regs[j]);
                break;
            case OP_ATOMIC:
                ck_sbuf_printf(b, "%sck_atomic_add_%s(%s, regs[%lld]);\n", ind,
                               T[0] == 'f' ? "f32" : "i32", ab, regs[j]);
                break;
            }
        }
    }
    if (cond.len) {
        ck_sbuf_printf(b, "    }");
        if (op == OP_LOAD) {
            ck_sbuf_printf(b, " else {\n");
            for (int j = 0; j < count; ++j)
                ck_sbuf_printf(b, "        regs[%lld] = %s;\n", regs[j], g->fill);
            ck_sbuf_printf(b, "    }");
        }
        ck_sbuf_printf(b, "\n");
    }
    if (cond.oom)
        b->oom = 1;
    free(cond.s);
}

static void emit_op(const gen *g, ck_sbuf *b, op_kind op, int use16)
{
    const char *n = g->spec->name, *T = g->ctype;
    static const char *names[] = {"load", "store", "update", "atomic_add"};
    ck_sbuf_printf(b, "CK_DEVICE void %s_%s(%s%s *regs, const ck_win_%s *w)\n{\n", names[op], n,
                   op == OP_LOAD ? "" : "const ", T, n);
    ck_gen_emit_prologue(g, b, op == OP_LOAD);
    for (long long a = 0; a < g->sfc.num_access; ++a) {
        long long regs[16];
        int y[CK_DIST_MAX_Y] = {0};
        access_regs(g, a, regs, y);
        ck_sbuf_printf(b, "    /* access %lld: Y = (", a);
        for (int j = 0; j < g->dist.enc.ndim_y; ++j)
            ck_sbuf_printf(b, "%s%d", j ? ", " : "", y[j]);
        ck_sbuf_printf(b, "), registers");
        for (int j = 0; j < g->vwidth; ++j)
            ck_sbuf_printf(b, " %lld", regs[j]);
        int same = same_conditions(g, regs, g->vwidth);
        ck_sbuf_printf(b, "%s */\n",
                       same ? "" : " (partly valid at the edges: element by element there)");
        if (same || g->vwidth == 1) {
            emit_access(g, b, op, use16, regs, g->vwidth, 0);
        } else {
            /* whole vector valid: one access; else element by element (indented once more) */
            ck_sbuf all = {0}, inner = {0};
            ck_gen_access_cond(g, regs, g->vwidth, &all);
            ck_sbuf_printf(b, "    if (%s) {\n", all.s ? all.s : "1");
            emit_access(g, &inner, op, use16, regs, g->vwidth, 1);
            ck_sbuf_printf(&inner, "} else {\n");
            for (int j = 0; j < g->vwidth; ++j)
                emit_access(g, &inner, op, 0, &regs[j], 1, 0);
            for (const char *l = inner.s; l && *l;) {
                const char *e = strchr(l, '\n');
                size_t len = e ? (size_t)(e - l) + 1 : strlen(l);
                ck_sbuf_printf(b, "    %.*s", (int)len, l);
                l += len;
            }
            ck_sbuf_printf(b, "    }\n");
            if (all.oom || inner.oom)
                b->oom = 1;
            free(all.s);
            free(inner.s);
        }
    }
    ck_sbuf_printf(b, "}\n\n");
}

void ck_gen_emit_comment_block(ck_sbuf *b, const char *text)
{
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        ck_sbuf_printf(b, " *   %.*s\n", (int)len, s);
        s += len;
        if (*s == '\n')
            ++s;
    }
}

ck_status ck_gen_emit(const gen *g, ck_sbuf *b)
{
    const ck_tile_window_spec *s = g->spec;
    const ck_distribution *d = &g->dist;
    const char *n = s->name, *T = g->ctype;
    char enc[4096];
    char *desc = NULL;
    ck_status st = ck_dist_encoding_format(&d->enc, enc, sizeof enc);
    if (!st)
        st = ck_descriptor_to_string(s->desc, &desc);
    if (st)
        return st;
    ck_sbuf_printf(b, "/* ---- tile window \"%s\" (generated by ck's window generator) ----\n", n);
    ck_sbuf_printf(b, " * element type: %s (%s), window lengths:", ck_dtype_name(s->dtype), T);
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, " %d", d->x_lengths[i]);
    ck_sbuf_printf(b, ", %lld threads, %lld registers per thread\n", d->threads,
                   d->elements_per_thread);
    ck_sbuf_printf(b, " * encoding: %s\n * descriptor:\n", enc);
    ck_gen_emit_comment_block(b, desc);
    ck_tile_free(desc);
    ck_sbuf_printf(b, " * accesses per thread: %lld of %d element(s) along Y%d%s (%s)\n */\n",
                   g->sfc.num_access, g->vwidth, g->vdim, aligned16(g) ? ", 16-byte vectors" : "",
                   g->from_traits ? "CK's load/store traits"
                                  : "vector proven on the symbolic offsets");
    ck_sbuf_printf(b, "#define CK_NREGS_%s %lld\n", n, g->nregs);
    ck_sbuf_printf(b, "#ifndef CK_UPDATE_%s\n#define CK_UPDATE_%s(old, v) ((old) + (v))\n#endif\n",
                   n, n);
    ck_sbuf_printf(b, "typedef struct ck_win_%s {\n    %s *p;\n", n, T);
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, "    long long o%d;\n", i);
    for (int i = 0; i < g->nsyms; ++i)
        ck_sbuf_printf(b, "    long long %s;\n", g->syms[i]);
    ck_sbuf_printf(b, "} ck_win_%s;\n\n", n);
    ck_sbuf_printf(b, "CK_DEVICE ck_win_%s make_win_%s(%s *p", n, n, T);
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, ", long long o%d", i);
    for (int i = 0; i < g->nsyms; ++i)
        ck_sbuf_printf(b, ", long long %s", g->syms[i]);
    ck_sbuf_printf(b, ")\n{\n    ck_win_%s w;\n    w.p = p;\n", n);
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, "    w.o%d = o%d;\n", i, i);
    for (int i = 0; i < g->nsyms; ++i)
        ck_sbuf_printf(b, "    w.%s = %s;\n", g->syms[i], g->syms[i]);
    ck_sbuf_printf(b, "    return w;\n}\n\n");
    ck_sbuf_printf(b, "CK_DEVICE void move_%s(ck_win_%s *w", n, n);
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, ", long long d%d", i);
    ck_sbuf_printf(b, ")\n{\n");
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, "    w->o%d += d%d;\n", i, i);
    ck_sbuf_printf(b, "}\n\n");
    /* tile_x: X of each register for this thread */
    ck_sbuf_printf(b, "CK_DEVICE void tile_x_%s(int d, long long *x)\n{\n", n);
    int np = d->enc.ndim_p;
    if (np == 1)
        ck_sbuf_printf(b, "    const long long %s = ck_thread_linear();\n", g->pname[0]);
    else if (np == 2)
        ck_sbuf_printf(b,
                       "    const long long %s = ck_warp_id();\n    const long long %s = "
                       "ck_lane_id();\n",
                       g->pname[0], g->pname[1]);
    else if (np > 2) {
        ck_sbuf_printf(b, "    long long ck_t = ck_thread_linear();\n");
        for (int i = np - 1; i > 0; --i)
            ck_sbuf_printf(b, "    const long long %s = ck_t %% %d;\n    ck_t /= %d;\n",
                           g->pname[i], d->p_lengths[i], d->p_lengths[i]);
        ck_sbuf_printf(b, "    const long long %s = ck_t;\n", g->pname[0]);
    }
    for (int i = 0; i < np; ++i)
        ck_sbuf_printf(b, "    (void)%s;\n", g->pname[i]);
    ck_sbuf_printf(b, "    switch (d) {\n");
    for (long long r = 0; r < g->nregs; ++r) {
        ck_sbuf_printf(b, "    case %lld:\n", r);
        for (int i = 0; i < d->enc.ndim_x; ++i) {
            char *t = NULL;
            if ((st = ck_gen_print_ival(g->regs[r].x[i], &t)))
                return st;
            ck_sbuf_printf(b, "        x[%d] = %s;\n", i, t);
            free(t);
        }
        ck_sbuf_printf(b, "        break;\n");
    }
    ck_sbuf_printf(b, "    default:\n        break;\n    }\n}\n\n");
    /* sweep: register index of the i-th element of CK's sweep_tile order */
    ck_sbuf_printf(b,
                   "/* CK's sweep_tile order: the span of X0 outermost, then X1, ... */\n"
                   "CK_DEVICE int sweep_%s(int i)\n{\n    switch (i) {\n",
                   n);
    for (long long i = 0; i < g->nregs; ++i) {
        int y[CK_DIST_MAX_Y] = {0};
        long long r = 0;
        if (d->enc.ndim_y > 0 &&
            ((st = ck_dist_sweep_index(d, i, y)) || (st = ck_dist_ys_to_d(d, y, &r))))
            return st;
        ck_sbuf_printf(b, "    case %lld:\n        return %lld;\n", i, r);
    }
    ck_sbuf_printf(b, "    default:\n        return -1;\n    }\n}\n\n");
    unsigned ops = s->ops ? s->ops : CK_WIN_ALL;
    int use16 = aligned16(g);
    if ((ops & CK_WIN_LOAD) && g->ldm)
        ck_gen_ldmatrix_emit_load(g, b);
    else if (ops & CK_WIN_LOAD)
        emit_op(g, b, OP_LOAD, use16);
    if (ops & CK_WIN_STORE)
        emit_op(g, b, OP_STORE, use16);
    if (ops & CK_WIN_UPDATE)
        emit_op(g, b, OP_UPDATE, use16);
    if ((ops & CK_WIN_ATOMIC_ADD) && (s->dtype == CK_DTYPE_F32 || s->dtype == CK_DTYPE_I32))
        emit_op(g, b, OP_ATOMIC, use16);
    return b->oom ? oom() : CK_SUCCESS;
}
