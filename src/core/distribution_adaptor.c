/*
 * CK's construction of a tile distribution as coordinate transforms (tile.h): the
 * ps_ys_to_xs adaptor and the ys_to_d descriptor. They compute the same functions as the
 * direct mixed-radix evaluations ck_dist_calculate_x and ck_dist_ys_to_d (tested against
 * each other), and are what window code and vector guarantees are derived from.
 */
#include <string.h>

#include "ck/distribution.h"
#include "ck/tile.h"
#include "core/error.h"

ck_status ck_dist_make_ps_ys_to_xs_adaptor(const ck_distribution *dist, ck_adaptor **out)
{
    static const char *fn = "ck_dist_make_ps_ys_to_xs_adaptor";
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    CK_REQUIRE_NOT_NULL(dist, fn);
    const ck_dist_encoding *e = &dist->enc;
    /* Re-validate: the struct may have been filled by hand. */
    ck_distribution check;
    ck_status st = ck_dist_make(e, &check);
    if (st)
        return ck_fail_context(st, "%s", fn);

    enum { MAX_T = CK_DIST_MAX_X + 1 + CK_DIST_MAX_P };
    ck_transform t[MAX_T];
    int lower[CK_TILE_MAX_HIDDEN * 2], upper[CK_TILE_MAX_HIDDEN * 2];
    int nt = 0, nlow = 0, nup = 0, next = e->ndim_x;
    int bottom[CK_DIST_MAX_X], h_id[CK_DIST_MAX_X][CK_DIST_MAX_H], r_id[CK_DIST_MAX_R];
    ck_ival bottom_len[CK_DIST_MAX_X];
    int total = e->ndim_x + e->ndim_r + e->ndim_p;
    for (int x = 0; x < e->ndim_x; ++x)
        total += e->ndim_h[x];
    if (total > CK_TILE_MAX_HIDDEN)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: the adaptor would have %d hidden dimensions (X, H, R and P "
                       "components); at most %d are supported.",
                       fn, total, (int)CK_TILE_MAX_HIDDEN);

    /* One unmerge per X dim: X -> its H components (row-major, last fastest). */
    for (int x = 0; x < e->ndim_x; ++x) {
        bottom[x] = x;
        bottom_len[x] = ck_ival_int(dist->x_lengths[x]);
        ck_ival len[CK_DIST_MAX_H];
        for (int k = 0; k < e->ndim_h[x]; ++k) {
            len[k] = ck_ival_int(e->h_lengths[x][k]);
            h_id[x][k] = next++;
            upper[nup++] = h_id[x][k];
        }
        if ((st = ck_make_unmerge_transform(e->ndim_h[x], len, &t[nt++])))
            return ck_fail_context(st, "%s: X%d", fn, x);
        lower[nlow++] = x;
    }
    /* Replicate for the R components some P owns. An unowned R component (length 1) takes
     * no part: it would be a hidden dim nobody consumes. */
    ck_ival rlen[CK_DIST_MAX_R];
    int nr = 0;
    for (int r = 0; r < e->ndim_r; ++r) {
        r_id[r] = -1;
        if (dist->r_owner[r] == CK_DIST_UNOWNED)
            continue;
        rlen[nr++] = ck_ival_int(e->r_lengths[r]);
        r_id[r] = next++;
        upper[nup++] = r_id[r];
    }
    if (nr > 0 && (st = ck_make_replicate_transform(nr, rlen, &t[nt++])))
        return ck_fail_context(st, "%s: R", fn);
    /* One merge per P of the RH components it lists; an empty P (length 1) is a
     * replicate of one length-1 dim, consuming nothing. */
    int top[CK_DIST_MAX_P + CK_DIST_MAX_Y];
    for (int p = 0; p < e->ndim_p; ++p) {
        ck_ival len[CK_DIST_MAX_P_RH];
        for (int k = 0; k < e->p_size[p]; ++k) {
            int mj = e->p_major[p][k], mn = e->p_minor[p][k];
            len[k] = ck_ival_int(mj == 0 ? e->r_lengths[mn] : e->h_lengths[mj - 1][mn]);
            lower[nlow++] = mj == 0 ? r_id[mn] : h_id[mj - 1][mn];
        }
        if (e->p_size[p] > 0) {
            st = ck_make_merge_transform(e->p_size[p], len, &t[nt++]);
        } else {
            len[0] = ck_ival_int(1);
            st = ck_make_replicate_transform(1, len, &t[nt++]);
        }
        if (st)
            return ck_fail_context(st, "%s: P%d", fn, p);
        top[p] = next;
        upper[nup++] = next++;
    }
    /* Y dims are the H components they name, in Y order. */
    for (int j = 0; j < e->ndim_y; ++j)
        top[e->ndim_p + j] = h_id[e->y_major[j] - 1][e->y_minor[j]];
    st = ck_adaptor_create(nt, t, lower, upper, e->ndim_x, bottom, bottom_len,
                           e->ndim_p + e->ndim_y, top, out);
    if (st)
        return ck_fail_context(st, "%s", fn);
    return CK_SUCCESS;
}

ck_status ck_dist_make_ys_to_d_descriptor(const ck_distribution *dist, ck_descriptor **out)
{
    static const char *fn = "ck_dist_make_ys_to_d_descriptor";
    CK_REQUIRE_NOT_NULL(out, fn);
    *out = NULL;
    CK_REQUIRE_NOT_NULL(dist, fn);
    const ck_dist_encoding *e = &dist->enc;
    if (e->ndim_y < 0 || e->ndim_y > CK_DIST_MAX_Y)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: ndim_y = %d; accepted: 0 to %d.", fn,
                       e->ndim_y, (int)CK_DIST_MAX_Y);
    ck_ival len[CK_DIST_MAX_Y];
    int n = e->ndim_y;
    for (int j = 0; j < n; ++j) {
        if (dist->y_lengths[j] < 1)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: Y%d has length %d; build the distribution with ck_dist_make.", fn,
                           j, dist->y_lengths[j]);
        len[j] = ck_ival_int(dist->y_lengths[j]);
    }
    if (n == 0) { /* every H component is owned by P: one register, d = 0 */
        len[0] = ck_ival_int(1);
        n = 1;
    }
    ck_status st = ck_descriptor_make_packed(n, len, out);
    if (st)
        return ck_fail_context(st, "%s", fn);
    return CK_SUCCESS;
}
