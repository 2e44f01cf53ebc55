/*
 * The permute tile kernel's tile windows (permute_internal.h; CK_PERMUTE_WINDOW=1 or the tuning
 * text's fourth field; permute_window_kernel.h is the stage that calls them). A tile is
 * TN x TM = (GN V) x (GM V) elements of dst[b][m][n] = src[b][n][m]; the window pointers are
 * the batch's source and destination, the origins the tile's (n0, m0) and (m0, n0).
 *
 *   s, se (loads, pass 1): [n, m] over the source's row stride sn; X = (V * GN, GM * V),
 *     P0 = (t / GM, t % GM), Y = (q, k): register q * V + k of thread t is (q * GN + t / GM,
 *     (t % GM) * V + k), pass 1's chunk q (ck_perm_pass1).
 *   d, de (stores, pass 2): [m, n] over the destination's row stride dm; X = (GM * V, GN * V),
 *     P0 = (t / GN, t % GN) = (mc, nc), Y = (i, k): register i * V + k is (mc * V + i,
 *     nc * V + k), row i of the transposed block (ck_perm_pass2).
 * s and d cover the full tiles: their lengths are symbols that are multiples of the tile (the
 * full region, n / TN * TN), so the generator emits no masks; se and de are masked at n and
 * m (a chunk that straddles the edge element by element) for the edge tiles. Strides are
 * multiples of the vector where the plan's 16-byte accesses are (ld_vec, st_vec).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/common/op_window.h"
#include "ops/permute/permute_internal.h"

int ck_permute_window_ok(const ck_perm_plan *p)
{
    return p->kind == CK_PERM_TILE;
}

/* Two X dims of (outer groups, inner groups) lengths, P0 = (X0's group, X1's group); Y = the
 * other halves: the source's (q, t / GM) x (t % GM, k) or the destination's (mc, i) x (nc, k).
 * k runs over a chunk's u units: its V elements, or its 4 words (word windows, below); q over
 * the load's chunks: V, or 1 for the edge loads (se) and the element-register loads of 1- and
 * 2-byte elements, which pass 1 calls once per chunk q at the origin row n0 + q * GN (V
 * registers at a time: V x V element registers of 1- or 2-byte elements in flight spilled). */
static void perm_encoding(const ck_perm_plan *p, int load, int chunks, int u, ck_dist_encoding *e)
{
    const int v = 16 / p->elem_bytes;
    memset(e, 0, sizeof *e);
    e->ndim_x = 2;
    e->ndim_h[0] = e->ndim_h[1] = 2;
    e->h_lengths[0][0] = load ? chunks : p->gm;
    e->h_lengths[0][1] = load ? p->gn : v;
    e->h_lengths[1][0] = load ? p->gm : p->gn;
    e->h_lengths[1][1] = u;
    e->ndim_p = 1;
    e->p_size[0] = 2;
    e->p_major[0][0] = 1, e->p_minor[0][0] = load ? 1 : 0;
    e->p_major[0][1] = 2, e->p_minor[0][1] = 0;
    e->ndim_y = 2;
    e->y_major[0] = 1, e->y_minor[0] = load ? 0 : 1;
    e->y_major[1] = 2, e->y_minor[1] = 1;
}

int ck_permute_window_words(const ck_perm_plan *p, const char *name)
{
    const int load = name[0] == 's', edge = name[1] == 'e';
    return p->elem_bytes < 4 && !edge && (load ? p->ld_vec : p->st_vec);
}

int ck_permute_window_by_chunk(const ck_perm_plan *p, const char *name)
{
    const int load = name[0] == 's', edge = name[1] == 'e';
    return load && (edge || (p->elem_bytes < 4 && !ck_permute_window_words(p, name)));
}

static ck_status perm_window(const ck_perm_plan *p, const char *name, ck_op_window *w)
{
    const int load = name[0] == 's', edge = name[1] == 'e', v = 16 / p->elem_bytes;
    const int words = ck_permute_window_words(p, name), u = words ? 4 : v, epw = v / u;
    /* bits, copied: storage double, int (also a word of 2 or 4 sub-word elements), unsigned
     * short or unsigned char */
    const ck_dtype dt = p->elem_bytes == 8                ? CK_DTYPE_F64
                        : p->elem_bytes == 4 || words     ? CK_DTYPE_I32
                        : p->elem_bytes == 2              ? CK_DTYPE_F16
                                                          : CK_DTYPE_U8;
    ck_op_window_init(w, name, dt, load ? CK_WIN_LOAD : CK_WIN_STORE);
    perm_encoding(p, load, ck_permute_window_by_chunk(p, name) ? 1 : v, u, &w->enc);
    w->spec.read_only = load;
    w->spec.fill = 0;
    /* the tile in the window's units (columns of words for word windows) */
    const long long tn = (long long)p->gn * v, tm = (long long)p->gm * v;
    const long long rows = load ? tn : tm, cols = (load ? tm : tn) / epw;
    /* a chunk's origin row n0 + q * GN is a multiple of GN */
    w->spec.origin_align[0] = ck_permute_window_by_chunk(p, name) ? p->gn : rows;
    w->spec.origin_align[1] = cols;
    const char *r = load ? (edge ? "n" : "nf") : (edge ? "m" : "mf");
    const char *c = load ? (edge ? "m" : "mf") : (edge ? "n" : "nf");
    const char *stride = load ? "sn" : "dm";
    const int vec = load ? p->ld_vec : p->st_vec;
    const ck_op_sym syms[3] = {{r, edge ? 1 : rows, INT64_C(1) << 40, edge ? 1 : rows},
                               {c, edge ? 1 : cols, INT64_C(1) << 40, edge ? 1 : cols},
                               {stride, 1, INT64_C(1) << 40, vec ? u : 1}};
    char text[96];
    snprintf(text, sizeof text, "naive(lengths=[%s,%s], strides=[%s,1])", r, c, stride);
    return ck_op_window_desc(w, text, syms, 3);
}

ck_status ck_permute_windows(const ck_perm_plan *p, ck_sbuf *b)
{
    static const char *const names[4] = {"s", "se", "d", "de"};
    static const char *const args[4][5] = {{"o0=n0", "o1=m0", "nf=nf", "mf=mf", "sn=sn"},
                                           {"o0=n0", "o1=m0", "n=n", "m=m", "sn=sn"},
                                           {"o0=m0", "o1=n0", "mf=mf", "nf=nf", "dm=dm"},
                                           {"o0=m0", "o1=n0", "m=m", "n=n", "dm=dm"}};
    for (int i = 0; i < 4; ++i) {
        ck_op_window w;
        ck_status st = perm_window(p, names[i], &w);
        if (!st)
            st = ck_op_window_emit(b, "perm", &w, args[i], 5);
        ck_op_window_free(&w);
        if (st)
            return ck_fail_context(st, "ck_permute: window '%s'", names[i]);
    }
    return CK_SUCCESS;
}

ck_status ck_permute_window_spec(const ck_perm_plan *p, const char *name, ck_op_window *w)
{
    ck_status st = perm_window(p, name, w);
    if (st)
        ck_op_window_free(w);
    return st;
}
