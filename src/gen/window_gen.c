/*
 * Tile window code generation: from a tensor descriptor, a tile distribution and an element
 * type, device C that loads a tile into per-thread registers (ys_to_d order), stores,
 * updates or atomically adds it back, and moves the window (see ck/tile_kernel.h).
 *
 * Every register d of a thread holds tile element X(P, Y(d)); its memory element is
 * desc(origin + X). The offsets are symbolic expressions over the thread's partition index
 * symbols, the origin symbols and the descriptor's run-time symbols, simplified
 * (ck_gen_simplify) and folded against the offset of register 0 (one base pointer plus a
 * constant or constant x symbol terms per access).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/expr.h"
#include "gen/affine.h"
#include "gen/sbuf.h"
#include "gen/window_gen.h"

enum { MAX_REGS = 4096, MAX_SYMS = 32, MAX_CONDS = 16 };

const char *ck_gen_ctype(ck_dtype dtype, int *bytes)
{
    switch (dtype) {
    case CK_DTYPE_F32:
    case CK_DTYPE_TF32:
        *bytes = 4;
        return "float";
    case CK_DTYPE_F64:
        *bytes = 8;
        return "double";
    case CK_DTYPE_I32:
        *bytes = 4;
        return "int";
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        *bytes = 2;
        return "unsigned short";
    case CK_DTYPE_I8:
        *bytes = 1;
        return "signed char";
    case CK_DTYPE_U8:
    case CK_DTYPE_FP8_E4M3:
    case CK_DTYPE_FP8_E5M2:
    case CK_DTYPE_FP8_E4M3_FNUZ:
    case CK_DTYPE_FP8_E5M2_FNUZ:
        *bytes = 1;
        return "unsigned char";
    default:
        return NULL;
    }
}

/* One register's access. */
typedef struct reg_info {
    ck_ival offset;     /* simplified element offset */
    char *cond;         /* validity as C ("" when always valid) */
    char *rel;          /* offset relative to the base, as C */
    int rel_const;      /* rel is a constant (rel_value) */
    int64_t rel_value;
    ck_ival x[CK_DIST_MAX_X];
} reg_info;

typedef struct gen {
    const ck_tile_window_spec *spec;
    ck_distribution dist;
    ck_expr_ctx *ctx, *own_ctx;
    ck_adaptor *adaptor;
    const char *ctype;
    int ebytes;
    ck_ival p[CK_DIST_MAX_P], o[CK_DIST_MAX_X];
    char pname[CK_DIST_MAX_P][64], oname[CK_DIST_MAX_X][64];
    long long nregs;
    reg_info *regs;
    char *syms[MAX_SYMS];
    int nsyms;
    int vdim, vwidth; /* vector Y dim and elements per access */
    ck_sfc sfc;
} gen;

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}

static ck_status oom(void)
{
    return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_tile_window_generate: out of memory.");
}

/* Collect run-time symbols of x (other than this window's own), sorted. */
static void collect_syms(gen *g, const ck_expr *e)
{
    if (!e)
        return;
    if (e->op == CK_EXPR_SYM) {
        if (strncmp(e->name, "ck_", 3) == 0)
            return;
        for (int i = 0; i < g->nsyms; ++i)
            if (strcmp(g->syms[i], e->name) == 0)
                return;
        if (g->nsyms < MAX_SYMS) {
            int i = g->nsyms++;
            g->syms[i] = (char *)e->name;
            for (; i > 0 && strcmp(g->syms[i - 1], g->syms[i]) > 0; --i) {
                char *t = g->syms[i];
                g->syms[i] = g->syms[i - 1];
                g->syms[i - 1] = t;
            }
        }
        return;
    }
    collect_syms(g, e->a);
    collect_syms(g, e->b);
}

static ck_status print_ival(ck_ival x, char **out)
{
    size_t n = ck_ival_print(x, NULL, 0) + 1;
    *out = malloc(n);
    if (!*out)
        return oom();
    ck_ival_print(x, *out, n);
    return CK_SUCCESS;
}

static ck_status check_spec(const ck_tile_window_spec *s)
{
    if (!s->name || !s->name[0] || strlen(s->name) > 40 ||
        !(isalpha((unsigned char)s->name[0]) || s->name[0] == '_'))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: spec->name must be a C identifier of 1 to 40 "
                       "characters.");
    for (const char *c = s->name; *c; ++c)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_tile_window_generate: spec->name \"%s\" is not a C identifier.",
                           s->name);
    if (!s->desc || !s->enc)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: spec->desc and spec->enc must not be NULL.");
    if (!ck_descriptor_is_concrete(s->desc) && !s->ctx)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\" has a symbolic descriptor; "
                       "spec->ctx must be the context of its symbols.",
                       s->name);
    return CK_SUCCESS;
}

static ck_status declare(gen *g)
{
    const ck_tile_window_spec *s = g->spec;
    const ck_distribution *d = &g->dist;
    for (int i = 0; i < d->enc.ndim_p; ++i) {
        snprintf(g->pname[i], sizeof g->pname[i], "ck_%s_p%d", s->name, i);
        ck_status st = ck_expr_symbol(g->ctx, g->pname[i], 0, d->p_lengths[i] - 1, 1, &g->p[i]);
        if (st)
            return st;
    }
    for (int i = 0; i < d->enc.ndim_x; ++i) {
        int64_t mn, mx;
        ck_ival_range(ck_descriptor_length(s->desc, i), &mn, &mx);
        long long al = s->origin_align[i] > 0 ? s->origin_align[i] : 1;
        snprintf(g->oname[i], sizeof g->oname[i], "ck_%s_o%d", s->name, i);
        ck_status st = ck_expr_symbol(g->ctx, g->oname[i], 0, mx - 1, al, &g->o[i]);
        if (st)
            return st;
    }
    return CK_SUCCESS;
}

/* Does dim i need a bounds mask? */
static int needs_bound(const gen *g, int i)
{
    ck_ival len = ck_descriptor_length(g->spec->desc, i);
    long long w = g->dist.x_lengths[i];
    long long al = g->spec->origin_align[i] > 0 ? g->spec->origin_align[i] : 1;
    int64_t div = ck_ival_is_const(len) ? len.v : ck_ival_divisor(len);
    return !(div % w == 0 && al % w == 0);
}

/* Conditions of a register: one per line. */
static void cat_cond(ck_sbuf *b, const char *c)
{
    ck_sbuf_printf(b, "%s\n", c);
}

/* Offsets, conditions and X indices of every register. */
static ck_status analyse(gen *g)
{
    const ck_distribution *d = &g->dist;
    int np = d->enc.ndim_p, ny = d->enc.ndim_y, nx = d->enc.ndim_x;
    g->nregs = d->elements_per_thread;
    if (g->nregs > MAX_REGS)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "ck_tile_window_generate: %lld registers per thread (at most %d).",
                       g->nregs, MAX_REGS);
    g->regs = calloc((size_t)g->nregs, sizeof *g->regs);
    if (!g->regs)
        return oom();
    ck_status st = ck_dist_make_ps_ys_to_xs_adaptor(d, &g->adaptor);
    if (st)
        return st;
    for (long long r = 0; r < g->nregs; ++r) {
        int y[CK_DIST_MAX_Y] = {0};
        if ((st = ck_dist_d_to_ys(d, r, y)))
            return st;
        ck_ival top[CK_DIST_MAX_P + CK_DIST_MAX_Y], x[CK_DIST_MAX_X], idx[CK_DIST_MAX_X];
        for (int i = 0; i < np; ++i)
            top[i] = g->p[i];
        for (int j = 0; j < ny; ++j)
            top[np + j] = ck_ival_int(y[j]);
        int nc = 0;
        if ((st = ck_adaptor_calculate_bottom_expr(g->adaptor, top, x, NULL, 0, &nc)))
            return st;
        ck_sbuf cond = {0};
        for (int i = 0; i < nx; ++i) {
            if ((st = ck_gen_simplify(x[i], &g->regs[r].x[i])))
                return st;
            if ((st = ck_ival_add(g->o[i], g->regs[r].x[i], &idx[i])) ||
                (st = ck_gen_simplify(idx[i], &idx[i])))
                return st;
            if (needs_bound(g, i)) {
                ck_ival len = ck_descriptor_length(g->spec->desc, i), gap;
                char *t;
                if ((st = ck_ival_sub(len, idx[i], &gap)) || (st = ck_gen_simplify(gap, &gap)))
                    return st;
                int64_t mn, mx;
                ck_ival_range(gap, &mn, &mx);
                if (mn >= 1)
                    continue; /* proven in bounds */
                collect_syms(g, gap.e);
                char *l;
                if ((st = print_ival(idx[i], &t)) || (st = print_ival(len, &l))) {
                    free(cond.s);
                    return st;
                }
                char c[2048];
                snprintf(c, sizeof c, "%s < %s", t, l);
                cat_cond(&cond, c);
                free(t);
                free(l);
            }
        }
        ck_index_condition conds[MAX_CONDS];
        ck_ival off;
        st = ck_descriptor_calculate_offset_expr(g->spec->desc, idx, &off, conds, MAX_CONDS, &nc);
        if (!st)
            st = ck_gen_simplify(off, &g->regs[r].offset);
        for (int c = 0; c < nc && !st; ++c) {
            ck_ival v;
            char *vt = NULL, *lt = NULL, *ht = NULL;
            if ((st = ck_gen_simplify(conds[c].value, &v)))
                break;
            collect_syms(g, v.e);
            collect_syms(g, conds[c].lo.e);
            collect_syms(g, conds[c].hi.e);
            st = print_ival(v, &vt);
            int has_lo = !(ck_ival_is_const(conds[c].lo) && conds[c].lo.v == INT64_MIN);
            int has_hi = !(ck_ival_is_const(conds[c].hi) && conds[c].hi.v == INT64_MAX);
            if (!st && has_lo)
                st = print_ival(conds[c].lo, &lt);
            if (!st && has_hi)
                st = print_ival(conds[c].hi, &ht);
            if (!st) {
                char t[4096];
                if (has_lo) {
                    snprintf(t, sizeof t, "%s <= %s", lt, vt);
                    cat_cond(&cond, t);
                }
                if (has_hi) {
                    snprintf(t, sizeof t, "%s < %s", vt, ht);
                    cat_cond(&cond, t);
                }
            }
            free(vt);
            free(lt);
            free(ht);
        }
        if (cond.oom) {
            free(cond.s);
            return oom();
        }
        g->regs[r].cond = cond.s ? cond.s : dup_text("");
        if (!st && !g->regs[r].cond)
            st = oom();
        if (st)
            return st;
        collect_syms(g, g->regs[r].offset.e);
    }
    /* fold against register 0 */
    ck_affine base;
    int affine_ok = ck_affine_from(g->regs[0].offset, &base) == CK_SUCCESS;
    for (long long r = 0; r < g->nregs; ++r) {
        ck_affine f, diff;
        char text[4096];
        reg_info *ri = &g->regs[r];
        if (affine_ok && ck_affine_from(ri->offset, &f) == CK_SUCCESS &&
            ck_affine_axpy(&f, -1, &base, &diff) == CK_SUCCESS) {
            ck_affine_sort(&diff);
            ri->rel_const = diff.n == 0;
            ri->rel_value = diff.k;
            ck_affine_print(&diff, text, sizeof text);
            ri->rel = dup_text(text);
        } else {
            char *t;
            ck_clear_error();
            if ((st = print_ival(ri->offset, &t)))
                return st;
            size_t n = strlen(t) + 32;
            ri->rel = malloc(n);
            if (ri->rel)
                snprintf(ri->rel, n, "(%s) - ck_off0", t);
            free(t);
        }
        if (!ri->rel)
            return oom();
    }
    return CK_SUCCESS;
}

/* offset(r2) - offset(r1) when it is a known constant. */
static int offset_delta(const gen *g, long long r1, long long r2, int64_t *delta)
{
    ck_affine a, b, d;
    if (ck_affine_from(g->regs[r1].offset, &a) || ck_affine_from(g->regs[r2].offset, &b) ||
        ck_affine_axpy(&b, -1, &a, &d)) {
        ck_clear_error();
        return 0;
    }
    *delta = d.k;
    return d.n == 0;
}

/* Widest vector: Y dim v and width w (power of two dividing the Y length, w * bytes <= 16)
 * with every run of w registers along v contiguous in memory; the last Y dim among equals. */
static ck_status choose_vector(gen *g)
{
    const ck_distribution *d = &g->dist;
    int ny = d->enc.ndim_y;
    g->vdim = ny > 0 ? ny - 1 : -1;
    g->vwidth = 1;
    for (int v = ny - 1; v >= 0; --v) {
        int w = 1;
        while (d->y_lengths[v] % (2 * w) == 0 && 2 * w * g->ebytes <= 16)
            w *= 2;
        for (; w > g->vwidth; w /= 2) {
            int ok = 1;
            for (long long r = 0; r < g->nregs && ok; ++r) {
                int y[CK_DIST_MAX_Y];
                ck_dist_d_to_ys(d, r, y);
                if (y[v] % w)
                    continue;
                for (int j = 1; j < w && ok; ++j) {
                    long long r2;
                    int64_t delta;
                    y[v] += 1;
                    ck_dist_ys_to_d(d, y, &r2);
                    ok = offset_delta(g, r, r2, &delta) && delta == j;
                }
            }
            if (ok) {
                g->vdim = v;
                g->vwidth = w;
                break;
            }
        }
    }
    int order[CK_SFC_MAX_DIMS], spa[CK_SFC_MAX_DIMS], lens[CK_SFC_MAX_DIMS], k = 0;
    if (ny == 0) {
        lens[0] = 1;
        order[0] = 0;
        spa[0] = 1;
        return ck_sfc_init(&g->sfc, 1, lens, order, spa, 1);
    }
    for (int j = 0; j < ny; ++j) {
        lens[j] = d->y_lengths[j];
        spa[j] = j == g->vdim ? g->vwidth : 1;
        if (j != g->vdim)
            order[k++] = j;
    }
    order[k] = g->vdim;
    return ck_sfc_init(&g->sfc, ny, lens, order, spa, 1);
}

/* Register indices of access a (vwidth of them). */
static void access_regs(const gen *g, long long a, long long *regs, int *y)
{
    const ck_distribution *d = &g->dist;
    if (d->enc.ndim_y == 0) {
        regs[0] = 0;
        return;
    }
    ck_sfc_get_index(&g->sfc, a, y);
    int yy[CK_DIST_MAX_Y];
    memcpy(yy, y, sizeof yy);
    for (int j = 0; j < g->vwidth; ++j) {
        ck_dist_ys_to_d(d, yy, &regs[j]);
        yy[g->vdim] += 1;
    }
}

/* Conditions of an access: the distinct conditions of its registers, joined with &&. */
static void access_cond(const gen *g, const long long *regs, int count, ck_sbuf *b)
{
    const char *seen[256];
    size_t seen_len[256];
    int nseen = 0;
    for (int j = 0; j < count; ++j) {
        const char *c = g->regs[regs[j]].cond;
        while (*c) {
            const char *e = strchr(c, '\n');
            size_t len = e ? (size_t)(e - c) : strlen(c);
            int dup = 0;
            for (int k = 0; k < nseen && !dup; ++k)
                dup = seen_len[k] == len && !strncmp(seen[k], c, len);
            if (!dup) {
                if (nseen < 256) {
                    seen[nseen] = c;
                    seen_len[nseen++] = len;
                }
                ck_sbuf_printf(b, "%s%.*s", b->len ? " && " : "", (int)len, c);
            }
            c += len;
            if (*c)
                ++c;
        }
    }
}

static int aligned16(const gen *g)
{
    if (g->vwidth * g->ebytes != 16)
        return 0;
    for (long long a = 0; a < g->sfc.num_access; ++a) {
        long long regs[16];
        int y[CK_DIST_MAX_Y];
        access_regs(g, a, regs, y);
        int64_t dv = ck_ival_is_const(g->regs[regs[0]].offset) ? g->regs[regs[0]].offset.v
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

static void emit_prologue(const gen *g, ck_sbuf *b, int is_load)
{
    const ck_distribution *d = &g->dist;
    const char *n = g->spec->name;
    for (int i = 0; i < d->enc.ndim_x; ++i)
        ck_sbuf_printf(b, "    const long long %s = w->o%d;\n", g->oname[i], i);
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
        for (int i = 0; i < np; ++i)
            ck_sbuf_printf(b, "%s%s >= %d", i ? " || " : "", g->pname[i], d->p_lengths[i]);
        if (is_load)
            ck_sbuf_printf(b, ") {\n        for (int i = 0; i < CK_NREGS_%s; ++i)\n"
                              "            regs[i] = (%s)(%.17g);\n        return;\n    }\n",
                           n, g->ctype, g->spec->fill);
        else
            ck_sbuf_printf(b, ")\n        return;\n");
    }
    char *o0 = NULL;
    if (print_ival(g->regs[0].offset, &o0) == CK_SUCCESS) {
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
                        int count)
{
    const char *n = g->spec->name, *T = g->ctype;
    ck_sbuf cond = {0};
    access_cond(g, regs, count, &cond);
    const char *ind = cond.len ? "        " : "    ";
    if (cond.len)
        ck_sbuf_printf(b, "    if (%s) {\n", cond.s);
    char ab[4200];
    if (use16 && count * g->ebytes == 16 && (op == OP_LOAD || op == OP_STORE)) {
        ck_sbuf_printf(b, "%s{\n%s    %s ck_t[%d];\n", ind, ind, T, count);
        if (op == OP_LOAD) {
            ck_sbuf_printf(b, "%s    ck_u32x4 ck_v = ck_ld16(%s);\n", ind,
                           addr(g, regs[0], ab, sizeof ab));
            ck_sbuf_printf(b, "%s    __builtin_memcpy(ck_t, &ck_v, 16);\n", ind);
            for (int j = 0; j < count; ++j)
                ck_sbuf_printf(b, "%s    regs[%lld] = ck_t[%d];\n", ind, regs[j], j);
        } else {
            for (int j = 0; j < count; ++j)
                ck_sbuf_printf(b, "%s    ck_t[%d] = regs[%lld];\n", ind, j, regs[j]);
            ck_sbuf_printf(b, "%s    ck_u32x4 ck_v;\n%s    __builtin_memcpy(&ck_v, ck_t, 16);\n",
                           ind, ind);
            ck_sbuf_printf(b, "%s    ck_st16(%s, ck_v);\n", ind, addr(g, regs[0], ab, sizeof ab));
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
                ck_sbuf_printf(b, "        regs[%lld] = (%s)(%.17g);\n", regs[j], T,
                               g->spec->fill);
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
    emit_prologue(g, b, op == OP_LOAD);
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
        int same = 1;
        for (int j = 1; j < g->vwidth; ++j)
            same &= strcmp(g->regs[regs[j]].cond, g->regs[regs[0]].cond) == 0;
        ck_sbuf_printf(b, "%s */\n", same ? "" : " (masked one by one)");
        if (same)
            emit_access(g, b, op, use16, regs, g->vwidth);
        else
            for (int j = 0; j < g->vwidth; ++j)
                emit_access(g, b, op, 0, &regs[j], 1);
    }
    ck_sbuf_printf(b, "}\n\n");
}

static void emit_comment_block(ck_sbuf *b, const char *text)
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

static ck_status emit(const gen *g, ck_sbuf *b)
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
    emit_comment_block(b, desc);
    ck_tile_free(desc);
    ck_sbuf_printf(b, " * accesses per thread: %lld of %d element(s) along Y%d%s\n */\n",
                   g->sfc.num_access, g->vwidth, g->vdim,
                   aligned16(g) ? " (16-byte vectors)" : "");
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
        ck_sbuf_printf(b, "    const long long %s = ck_warp_id();\n    const long long %s = "
                          "ck_lane_id();\n", g->pname[0], g->pname[1]);
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
            if ((st = print_ival(g->regs[r].x[i], &t)))
                return st;
            ck_sbuf_printf(b, "        x[%d] = %s;\n", i, t);
            free(t);
        }
        ck_sbuf_printf(b, "        break;\n");
    }
    ck_sbuf_printf(b, "    default:\n        break;\n    }\n}\n\n");
    /* sweep: register index of the i-th element of CK's sweep_tile order */
    ck_sbuf_printf(b, "/* CK's sweep_tile order: the span of X0 outermost, then X1, ... */\n"
                      "CK_DEVICE int sweep_%s(int i)\n{\n    switch (i) {\n", n);
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
    if (ops & CK_WIN_LOAD)
        emit_op(g, b, OP_LOAD, use16);
    if (ops & CK_WIN_STORE)
        emit_op(g, b, OP_STORE, use16);
    if (ops & CK_WIN_UPDATE)
        emit_op(g, b, OP_UPDATE, use16);
    if ((ops & CK_WIN_ATOMIC_ADD) && (s->dtype == CK_DTYPE_F32 || s->dtype == CK_DTYPE_I32))
        emit_op(g, b, OP_ATOMIC, use16);
    return b->oom ? oom() : CK_SUCCESS;
}

static void gen_free(gen *g)
{
    if (g->regs)
        for (long long r = 0; r < g->nregs; ++r) {
            free(g->regs[r].cond);
            free(g->regs[r].rel);
        }
    free(g->regs);
    ck_adaptor_destroy(g->adaptor);
    ck_expr_ctx_destroy(g->own_ctx);
}

ck_status ck_tile_window_generate(const ck_tile_window_spec *spec, char **source)
{
    CK_REQUIRE_NOT_NULL(spec, "ck_tile_window_generate");
    CK_REQUIRE_NOT_NULL(source, "ck_tile_window_generate");
    *source = NULL;
    ck_status st = check_spec(spec);
    if (st)
        return st;
    gen g;
    memset(&g, 0, sizeof g);
    g.spec = spec;
    if ((st = ck_dist_make(spec->enc, &g.dist)))
        return st;
    g.ctype = ck_gen_ctype(spec->dtype, &g.ebytes);
    if (!g.ctype)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": element type %d is not supported "
                       "(accepted: f32, tf32, f64, f16, bf16, i32, i8, u8 and the fp8 types).",
                       spec->name, (int)spec->dtype);
    if ((spec->ops & CK_WIN_ATOMIC_ADD) && spec->ops != CK_WIN_ALL &&
        spec->dtype != CK_DTYPE_F32 && spec->dtype != CK_DTYPE_I32)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": atomic add needs f32 or i32 "
                       "elements, not %s.",
                       spec->name, ck_dtype_name(spec->dtype));
    if (ck_descriptor_ndim(spec->desc) != g.dist.enc.ndim_x)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": the descriptor has %d dims but "
                       "the encoding has %d X dims; they must be equal.",
                       spec->name, ck_descriptor_ndim(spec->desc), g.dist.enc.ndim_x);
    for (int i = 0; i < g.dist.enc.ndim_x; ++i)
        if (spec->origin_align[i] < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_tile_window_generate: window \"%s\": origin_align[%d] = %lld is "
                           "negative (0 or more accepted).",
                           spec->name, i, spec->origin_align[i]);
    g.ctx = spec->ctx;
    if (!g.ctx) {
        if ((st = ck_expr_ctx_create(&g.own_ctx)))
            return st;
        g.ctx = g.own_ctx;
    }
    ck_sbuf b = {0};
    st = declare(&g);
    if (!st)
        st = analyse(&g);
    if (!st)
        st = choose_vector(&g);
    if (!st)
        st = emit(&g, &b);
    gen_free(&g);
    if (st) {
        free(b.s);
        return st;
    }
    *source = b.s;
    return CK_SUCCESS;
}
