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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/expr.h"
#include "gen/affine.h"
#include "gen/sbuf.h"
#include "gen/window_gen.h"

typedef ck_gen gen;

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
        char own[64];
        snprintf(own, sizeof own, "ck_%s_", g->spec->name);
        if (strncmp(e->name, own, strlen(own)) == 0)
            return; /* this window's thread and origin symbols */
        for (int i = 0; i < g->nsyms; ++i)
            if (strcmp(g->syms[i], e->name) == 0)
                return;
        if (g->nsyms < CK_GEN_MAX_SYMS) {
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

ck_status ck_gen_print_ival(ck_ival x, char **out)
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

/* Does dim i need a bounds mask? */
static int needs_bound(const gen *g, int i)
{
    ck_ival len = ck_descriptor_length(g->spec->desc, i);
    long long w = g->dist.x_lengths[i];
    long long al = g->spec->origin_align[i] > 0 ? g->spec->origin_align[i] : 1;
    int64_t div = ck_ival_is_const(len) ? len.v : ck_ival_divisor(len);
    return !(div % w == 0 && al % w == 0);
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
        if (mx - 1 < al && !needs_bound(g, i)) {
            /* unmasked, so inside the tensor, where the only aligned origin is 0 */
            g->o[i] = ck_ival_int(0);
            continue;
        }
        /* no upper bound is assumed: masked windows may lie partly or wholly past the end */
        ck_status st = ck_expr_symbol(g->ctx, g->oname[i], 0, (INT64_C(1) << 40) - 1, al, &g->o[i]);
        if (st)
            return st;
    }
    return CK_SUCCESS;
}

/* Offsets, conditions and X indices of every register. */
static ck_status analyse(gen *g)
{
    const ck_distribution *d = &g->dist;
    int np = d->enc.ndim_p, ny = d->enc.ndim_y, nx = d->enc.ndim_x;
    g->nregs = d->elements_per_thread;
    if (g->nregs > CK_GEN_MAX_REGS)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "ck_tile_window_generate: %lld registers per thread (at most %d).", g->nregs,
                       CK_GEN_MAX_REGS);
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
        for (int i = 0; i < nx; ++i) {
            if ((st = ck_gen_simplify(x[i], &g->regs[r].x[i])))
                return st;
            if ((st = ck_ival_add(g->o[i], g->regs[r].x[i], &idx[i])) ||
                (st = ck_gen_simplify(idx[i], &idx[i])))
                return st;
            if (needs_bound(g, i)) {
                ck_ival len = ck_descriptor_length(g->spec->desc, i), gap;
                if ((st = ck_ival_sub(len, idx[i], &gap)) || (st = ck_gen_simplify(gap, &gap)))
                    return st;
                int64_t mn, mx;
                ck_ival_range(gap, &mn, &mx);
                if (mn >= 1)
                    continue; /* proven in bounds */
                collect_syms(g, gap.e);
                ck_gen_cond *c = &g->regs[r].cond[g->regs[r].ncond++];
                c->value = idx[i];
                c->bound = len;
                c->upper = 1;
            }
        }
        ck_index_condition conds[CK_GEN_MAX_CONDS];
        ck_ival off;
        st = ck_descriptor_calculate_offset_expr(g->spec->desc, idx, &off, conds, CK_GEN_MAX_CONDS,
                                                 &nc);
        if (!st)
            st = ck_gen_simplify(off, &g->regs[r].offset);
        for (int c = 0; c < nc && !st; ++c) {
            ck_ival v;
            if ((st = ck_gen_simplify(conds[c].value, &v)))
                break;
            collect_syms(g, v.e);
            collect_syms(g, conds[c].lo.e);
            collect_syms(g, conds[c].hi.e);
            reg_info *ri = &g->regs[r];
            if (!(ck_ival_is_const(conds[c].lo) && conds[c].lo.v == INT64_MIN)) {
                ri->cond[ri->ncond].value = v;
                ri->cond[ri->ncond].bound = conds[c].lo;
                ri->cond[ri->ncond++].upper = 0;
            }
            if (!(ck_ival_is_const(conds[c].hi) && conds[c].hi.v == INT64_MAX)) {
                ri->cond[ri->ncond].value = v;
                ri->cond[ri->ncond].bound = conds[c].hi;
                ri->cond[ri->ncond++].upper = 1;
            }
        }
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
            if ((st = ck_gen_print_ival(ri->offset, &t)))
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

/* Whether every run of w registers along Y dim v (starting at multiples of w) is contiguous
 * in memory, proven on the affine forms of the offsets. */
int ck_gen_run_ok(const gen *g, int v, int w)
{
    const ck_distribution *d = &g->dist;
    for (long long r = 0; r < g->nregs; ++r) {
        int y[CK_DIST_MAX_Y];
        ck_dist_d_to_ys(d, r, y);
        if (y[v] % w)
            continue;
        for (int j = 1; j < w; ++j) {
            long long r2;
            int64_t delta;
            y[v] += 1;
            ck_dist_ys_to_d(d, y, &r2);
            if (!offset_delta(g, r, r2, &delta) || delta != j)
                return 0;
        }
    }
    return 1;
}

/* CK's load/store traits, when the descriptor is concrete and has the window's lengths (a
 * shared-memory tile, or a tensor of exactly one tile). */
static int traits_vector(gen *g)
{
    const ck_tile_window_spec *s = g->spec;
    if (!ck_descriptor_is_concrete(s->desc))
        return 0;
    for (int i = 0; i < g->dist.enc.ndim_x; ++i)
        if (ck_descriptor_length(s->desc, i).v != g->dist.x_lengths[i])
            return 0;
    ck_load_store_traits t;
    if (ck_load_store_traits_make(s->enc, s->desc, s->dtype, &t) != CK_SUCCESS) {
        ck_clear_error();
        return 0;
    }
    if (t.vector_dim_y < 0 || t.scalars_per_vector < 2 ||
        !ck_gen_run_ok(g, t.vector_dim_y, t.scalars_per_vector))
        return 0;
    g->vdim = t.vector_dim_y;
    g->vwidth = t.scalars_per_vector;
    g->from_traits = 1;
    return 1;
}

/* The vector: CK's load/store traits where they apply, else the widest run (power of two
 * dividing the Y length, w * bytes <= 16) proven contiguous, the last Y dim among equals. */
static ck_status choose_vector(gen *g)
{
    const ck_distribution *d = &g->dist;
    int ny = d->enc.ndim_y;
    g->vdim = ny > 0 ? ny - 1 : -1;
    g->vwidth = 1;
    if (!traits_vector(g))
        for (int v = ny - 1; v >= 0; --v) {
            int w = 1;
            while (d->y_lengths[v] % (2 * w) == 0 && 2 * w * g->ebytes <= 16)
                w *= 2;
            for (; w > g->vwidth; w /= 2)
                if (ck_gen_run_ok(g, v, w)) {
                    g->vdim = v;
                    g->vwidth = w;
                    break;
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

void ck_gen_release(gen *g)
{
    if (g->regs)
        for (long long r = 0; r < g->nregs; ++r) {
            free(g->regs[r].rel);
        }
    free(g->regs);
    for (int q = 0; q < 32; ++q)
        free(g->ldm_row[q]);
    ck_adaptor_destroy(g->adaptor);
    ck_expr_arena_destroy(g->own_ctx);
}

ck_status ck_gen_prepare(gen *g, const ck_tile_window_spec *spec)
{
    memset(g, 0, sizeof *g);
    ck_status st = check_spec(spec);
    if (st)
        return st;
    g->spec = spec;
    if ((st = ck_dist_make(spec->enc, &g->dist)))
        return st;
    g->ctype = ck_gen_ctype(spec->dtype, &g->ebytes);
    if (!g->ctype)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": element type %d is not supported "
                       "(accepted: f32, tf32, f64, f16, bf16, i32, i8, u8 and the fp8 types).",
                       spec->name, (int)spec->dtype);
    if ((spec->ops & CK_WIN_ATOMIC_ADD) && spec->ops != CK_WIN_ALL && spec->dtype != CK_DTYPE_F32 &&
        spec->dtype != CK_DTYPE_I32)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": atomic add needs f32 or i32 "
                       "elements, not %s.",
                       spec->name, ck_dtype_name(spec->dtype));
    if (g->dist.enc.ndim_p == 2 && g->dist.p_lengths[1] > 32)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": P1 (the lane) has length %d, "
                       "more than the 32 lanes of a warp; use at most 32 (an encoding written "
                       "for 64-lane wavefronts must be re-split).",
                       spec->name, g->dist.p_lengths[1]);
    if (ck_descriptor_ndim(spec->desc) != g->dist.enc.ndim_x)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": the descriptor has %d dims but "
                       "the encoding has %d X dims; they must be equal.",
                       spec->name, ck_descriptor_ndim(spec->desc), g->dist.enc.ndim_x);
    for (int i = 0; i < g->dist.enc.ndim_x; ++i)
        if (spec->origin_align[i] < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_tile_window_generate: window \"%s\": origin_align[%d] = %lld is "
                           "negative (0 or more accepted).",
                           spec->name, i, spec->origin_align[i]);
    int is_float = !strcmp(g->ctype, "float") || !strcmp(g->ctype, "double");
    if (isfinite(spec->fill))
        snprintf(g->fill, sizeof g->fill, "(%s)(%.17g)", g->ctype, spec->fill);
    else if (is_float)
        snprintf(g->fill, sizeof g->fill, "(%s)ck_u32_as_f32(0x%08xu)", g->ctype,
                 isnan(spec->fill) ? 0x7fc00000u
                 : spec->fill > 0  ? 0x7f800000u
                                   : 0xff800000u);
    else
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tile_window_generate: window \"%s\": fill %g is not finite; only "
                       "float and double elements accept infinities and NaN (types moved as raw "
                       "storage take the fill as a bit pattern).",
                       spec->name, spec->fill);
    g->ctx = spec->ctx;
    if (!g->ctx) {
        if ((st = ck_expr_arena_create(&g->own_ctx)))
            return st;
        g->ctx = g->own_ctx;
    }
    st = declare(g);
    if (!st)
        st = analyse(g);
    for (int i = 0; i < g->nsyms && !st; ++i) {
        /* names the generated functions use themselves, or that their origins take */
        static const char *reserved[] = {"regs", "w", "i", "p", "d", "x"};
        int bad = strncmp(g->syms[i], "ck_", 3) == 0 ||
                  (g->syms[i][0] == 'o' && isdigit((unsigned char)g->syms[i][1]));
        for (size_t k = 0; k < sizeof reserved / sizeof reserved[0]; ++k)
            bad |= !strcmp(g->syms[i], reserved[k]);
        if (bad)
            st = ck_fail(
                CK_ERROR_INVALID_ARGUMENT,
                "ck_tile_window_generate: window \"%s\": the descriptor's symbol \"%s\" "
                "clashes with a name of the generated code (regs, w, i, p, d, x, o<digit>..., "
                "ck_...); rename it.",
                spec->name, g->syms[i]);
    }
    return st;
}

ck_status ck_tile_window_generate(const ck_tile_window_spec *spec, char **source)
{
    CK_REQUIRE_NOT_NULL(spec, "ck_tile_window_generate");
    CK_REQUIRE_NOT_NULL(source, "ck_tile_window_generate");
    *source = NULL;
    gen g;
    ck_sbuf b = {0};
    ck_status st = ck_gen_prepare(&g, spec);
    if (!st)
        st = choose_vector(&g);
    if (!st)
        st = ck_gen_ldmatrix_plan(&g);
    if (!st)
        st = ck_gen_emit(&g, &b);
    ck_gen_release(&g);
    if (st) {
        free(b.s);
        return st;
    }
    *source = b.s;
    return CK_SUCCESS;
}
