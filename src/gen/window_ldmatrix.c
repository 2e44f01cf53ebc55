/*
 * ldmatrix loads for tile windows over shared-memory tiles (see ck/tile_kernel.h): when a
 * window of 16-bit elements has the register layout of an mma fragment -- every pair of
 * elements (2q, 2q+1) of lane (g = lane/4, t = lane%4) is X = base_q + g*u + (2t + e)*v for
 * unit vectors u != v of the tile -- and the descriptor stores every aligned run of 8 elements
 * along v (ldmatrix) or along u (ldmatrix.trans) as one 16-byte aligned row, each group of up to
 * four pairs is one ldmatrix.x4 (x2, x1): lane 8m + j gives the address of row j of matrix m.
 * Conditions are proven on the concrete descriptor (every aligned run checked) and the window
 * (no masks, origins aligned to 8 along the row). Otherwise the scalar/vector path is used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/affine.h"
#include "gen/window_gen.h"

typedef ck_gen gen;

/* X of thread (p) element d (numeric). */
static void xof(const gen *g, const int *p, long long d, int *x)
{
    int y[CK_DIST_MAX_Y] = {0};
    ck_dist_d_to_ys(&g->dist, d, y);
    ck_dist_calculate_x(&g->dist, p, y, x);
}

/* Whether every aligned run of 8 along dim `dim` is 8 consecutive offsets starting at a multiple
 * of 8 (16 bytes), and the window's origin along it is aligned to 8. */
static int rows_along(const gen *g, int dim)
{
    const ck_descriptor *desc = g->spec->desc;
    int64_t len[2] = {ck_descriptor_length(desc, 0).v, ck_descriptor_length(desc, 1).v};
    long long al = g->spec->origin_align[dim] > 0 ? g->spec->origin_align[dim] : 1;
    if (len[dim] % 8 || al % 8 || len[0] * len[1] > (1 << 22))
        return 0;
    for (int64_t a = 0; a < len[0]; a += dim == 0 ? 8 : 1)
        for (int64_t b = 0; b < len[1]; b += dim == 1 ? 8 : 1) {
            int64_t idx[2] = {a, b}, o0 = 0, o;
            ck_descriptor_calculate_offset(desc, idx, &o0);
            if (o0 % 8)
                return 0;
            for (int k = 1; k < 8; ++k) {
                idx[dim] = (dim == 0 ? a : b) + k;
                ck_descriptor_calculate_offset(desc, idx, &o);
                if (o != o0 + k)
                    return 0;
            }
        }
    return 1;
}

ck_status ck_gen_ldmatrix_plan(gen *g)
{
    const ck_distribution *d = &g->dist;
    const ck_tile_window_spec *s = g->spec;
    g->ldm = 0;
    unsigned ops = s->ops ? s->ops : CK_WIN_ALL;
    int np = d->enc.ndim_p;
    if (!(ops & CK_WIN_LOAD) || g->ebytes != 2 || d->enc.ndim_x != 2 ||
        !ck_descriptor_is_concrete(s->desc) || (np != 1 && np != 2) || d->p_lengths[np - 1] != 32 ||
        d->elements_per_thread % 2 || d->elements_per_thread > 64)
        return CK_SUCCESS;
    /* Replication (warps holding the same fragment, as the A operand of the warps of one block
     * row) needs nothing more: every warp computes its own addresses from X(warp, lane). A
     * replicated lane breaks the fragment structure below. */
    for (long long r = 0; r < g->nregs; ++r)
        if (g->regs[r].ncond)
            return CK_SUCCESS; /* masked: keep the general path */
    /* the fragment structure, for every warp and lane */
    int p[2] = {0, 0}, x0[2], x[2], u[2], v[2];
    xof(g, p, 0, x0);
    p[np - 1] = 4, xof(g, p, 0, x); /* g = 1 */
    u[0] = x[0] - x0[0], u[1] = x[1] - x0[1];
    p[np - 1] = 0, xof(g, p, 1, x); /* e = 1 */
    v[0] = x[0] - x0[0], v[1] = x[1] - x0[1];
    if (abs(u[0]) + abs(u[1]) != 1 || abs(v[0]) + abs(v[1]) != 1 || u[0] < 0 || u[1] < 0 ||
        v[0] < 0 || v[1] < 0 || (u[0] == v[0]))
        return CK_SUCCESS;
    const int nq = (int)(d->elements_per_thread / 2);
    for (int w = 0; w < (np == 2 ? d->p_lengths[0] : 1); ++w)
        for (int q = 0; q < nq; ++q) {
            int b[2];
            p[0] = w, p[np - 1] = 0;
            xof(g, p, 2 * q, b);
            if ((b[0] * v[0] + b[1] * v[1]) % 8 || (b[0] * u[0] + b[1] * u[1]) % 8)
                return CK_SUCCESS;
            for (int lane = 0; lane < 32; ++lane)
                for (int e = 0; e < 2; ++e) {
                    int gg = lane / 4, tt = lane % 4, k = 2 * tt + e;
                    p[np - 1] = lane;
                    xof(g, p, 2 * q + e, x);
                    if (x[0] != b[0] + gg * u[0] + k * v[0] || x[1] != b[1] + gg * u[1] + k * v[1])
                        return CK_SUCCESS;
                }
        }
    const int vdim = v[1], udim = u[1];
    int trans;
    if (rows_along(g, vdim))
        trans = 0;
    else if (rows_along(g, udim))
        trans = 1;
    else
        return CK_SUCCESS;
    /* row address of lane j for every pair q: idx = origin + X(warp, lane', 2q) (+ (j&1) v) */
    ck_ival j;
    snprintf(g->ldm_rowname, sizeof g->ldm_rowname, "ck_%s_lr", s->name);
    ck_status st = ck_expr_symbol(g->ctx, g->ldm_rowname, 0, 7, 1, &j);
    if (st)
        return st;
    g->ldm_nq = nq;
    for (int q = 0; q < nq && !st; ++q) {
        ck_ival top[CK_DIST_MAX_P + CK_DIST_MAX_Y], xi[2], idx[2], off, lane;
        int y[CK_DIST_MAX_Y] = {0}, nc = 0;
        ck_dist_d_to_ys(d, 2 * q, y);
        if (trans) /* stored row j = 2t + e: lane' = 4 * 0 + j / 2 */
            st = ck_ival_floordiv(j, ck_ival_int(2), &lane);
        else /* stored row j = g: lane' = 4 j */
            st = ck_ival_mul(j, ck_ival_int(4), &lane);
        if (np == 2)
            top[0] = g->p[0];
        top[np - 1] = lane;
        for (int k = 0; k < d->enc.ndim_y; ++k)
            top[np + k] = ck_ival_int(y[k]);
        if (!st)
            st = ck_adaptor_calculate_bottom_expr(g->adaptor, top, xi, NULL, 0, &nc);
        for (int i = 0; i < 2 && !st; ++i) {
            ck_ival extra = ck_ival_int(0);
            if (trans && v[i])
                st = ck_ival_mod(j, ck_ival_int(2), &extra);
            if (!st)
                st = ck_ival_add(xi[i], extra, &xi[i]);
            if (!st)
                st = ck_ival_add(g->o[i], xi[i], &idx[i]);
        }
        if (!st)
            st = ck_descriptor_calculate_offset_expr(s->desc, idx, &off, NULL, 0, &nc);
        if (!st)
            st = ck_gen_simplify(off, &off);
        if (!st)
            st = ck_gen_print_ival(off, &g->ldm_row[q]);
    }
    if (!st)
        g->ldm = trans ? 2 : 1;
    return st;
}

void ck_gen_ldmatrix_emit_load(const gen *g, ck_sbuf *b)
{
    const char *n = g->spec->name;
    ck_sbuf_printf(b,
                   "/* ldmatrix%s: the registers are mma fragments of 16-byte rows of the "
                   "shared-memory tile; lane 8m + j addresses row j of matrix m */\n",
                   g->ldm == 2 ? ".trans" : "");
    ck_sbuf_printf(b, "CK_DEVICE void load_%s(%s *regs, const ck_win_%s *w)\n{\n", n, g->ctype, n);
    ck_gen_emit_prologue(g, b, 1);
    ck_sbuf_printf(b, "    const long long %s = ck_lane_id() & 7;\n", g->ldm_rowname);
    ck_sbuf_printf(b, "    const int ck_lm = (int)(ck_lane_id() >> 3);\n    (void)ck_lm;\n");
    for (int q0 = 0; q0 < g->ldm_nq; q0 += 4) {
        int cnt = g->ldm_nq - q0 >= 4 ? 4 : g->ldm_nq - q0 >= 2 ? 2 : 1;
        ck_sbuf_printf(b, "    {\n        unsigned ck_r[4];\n        const long long ck_o = ");
        for (int m = 0; m < cnt - 1; ++m)
            ck_sbuf_printf(b, "(ck_lm %% %d) == %d ? (%s) : ", cnt, m, g->ldm_row[q0 + m]);
        ck_sbuf_printf(b, "(%s);\n", g->ldm_row[q0 + cnt - 1]);
        ck_sbuf_printf(b, "        ck_ldmatrix_x%d%s(ck_r, w->p + ck_o);\n", cnt,
                       g->ldm == 2 ? "_trans" : "");
        for (int m = 0; m < cnt; ++m)
            ck_sbuf_printf(b,
                           "        regs[%d] = (%s)(ck_r[%d] & 0xFFFFu);\n"
                           "        regs[%d] = (%s)(ck_r[%d] >> 16);\n",
                           2 * (q0 + m), g->ctype, m, 2 * (q0 + m) + 1, g->ctype, m);
        ck_sbuf_printf(b, "    }\n");
        if (cnt < 4 && q0 + cnt < g->ldm_nq) /* leftovers after an x2: continue from q0 + 2 */
            q0 -= 4 - cnt;
    }
    ck_sbuf_printf(b, "}\n\n");
}
