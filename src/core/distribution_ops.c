/*
 * CK's helpers over tile distribution encodings: embed (block-level x warp-level), reduce
 * (reduced X dims become R), slice by X ranges, and the 2-D static encoding patterns
 * (thread-, warp- and block-raked). Each result is validated with ck_dist_make.
 */
#include <string.h>

#include "ck/distribution.h"
#include "core/error.h"

static ck_status validated(const ck_dist_encoding *e, const char *fn)
{
    ck_distribution d;
    ck_status st = ck_dist_make(e, &d);
    if (st)
        return ck_fail_context(st, "%s: the resulting encoding is invalid", fn);
    return CK_SUCCESS;
}

ck_status ck_dist_embed(const ck_dist_encoding *outer, const ck_dist_encoding *inner,
                        ck_dist_encoding *out)
{
    static const char *fn = "ck_dist_embed";
    CK_REQUIRE_NOT_NULL(outer, fn);
    CK_REQUIRE_NOT_NULL(inner, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    ck_distribution d;
    ck_status st;
    if ((st = ck_dist_make(outer, &d)))
        return ck_fail_context(st, "%s: argument 'outer'", fn);
    if ((st = ck_dist_make(inner, &d)))
        return ck_fail_context(st, "%s: argument 'inner'", fn);
    if (outer->ndim_x != inner->ndim_x || outer->ndim_p != inner->ndim_p)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: outer has %d X and %d P dims but inner has %d X and %d P dims; they "
                       "must match.",
                       fn, outer->ndim_x, outer->ndim_p, inner->ndim_x, inner->ndim_p);
    ck_dist_encoding e;
    memset(&e, 0, sizeof e);
    if (outer->ndim_r + inner->ndim_r > CK_DIST_MAX_R ||
        outer->ndim_y + inner->ndim_y > CK_DIST_MAX_Y)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: the embedded encoding has too many R or Y dims "
                       "(at most %d and %d).",
                       fn, CK_DIST_MAX_R, CK_DIST_MAX_Y);
    e.ndim_r = outer->ndim_r + inner->ndim_r;
    memcpy(e.r_lengths, outer->r_lengths, sizeof(int) * (size_t)outer->ndim_r);
    memcpy(e.r_lengths + outer->ndim_r, inner->r_lengths, sizeof(int) * (size_t)inner->ndim_r);
    e.ndim_x = outer->ndim_x;
    for (int x = 0; x < e.ndim_x; ++x) {
        if (outer->ndim_h[x] + inner->ndim_h[x] > CK_DIST_MAX_H)
            return ck_fail(CK_ERROR_UNSUPPORTED, "%s: X%d would have %d H components; at most %d.",
                           fn, x, outer->ndim_h[x] + inner->ndim_h[x], CK_DIST_MAX_H);
        e.ndim_h[x] = outer->ndim_h[x] + inner->ndim_h[x];
        memcpy(e.h_lengths[x], outer->h_lengths[x], sizeof(int) * (size_t)outer->ndim_h[x]);
        memcpy(e.h_lengths[x] + outer->ndim_h[x], inner->h_lengths[x],
               sizeof(int) * (size_t)inner->ndim_h[x]);
    }
    e.ndim_p = outer->ndim_p;
    for (int p = 0; p < e.ndim_p; ++p) {
        if (outer->p_size[p] + inner->p_size[p] > CK_DIST_MAX_P_RH)
            return ck_fail(CK_ERROR_UNSUPPORTED, "%s: P%d would list %d components; at most %d.",
                           fn, p, outer->p_size[p] + inner->p_size[p], CK_DIST_MAX_P_RH);
        int n = 0;
        for (int k = 0; k < outer->p_size[p]; ++k, ++n) {
            e.p_major[p][n] = outer->p_major[p][k];
            e.p_minor[p][n] = outer->p_minor[p][k];
        }
        for (int k = 0; k < inner->p_size[p]; ++k, ++n) {
            int mj = inner->p_major[p][k];
            e.p_major[p][n] = mj;
            e.p_minor[p][n] =
                inner->p_minor[p][k] + (mj == 0 ? outer->ndim_r : outer->ndim_h[mj - 1]);
        }
        e.p_size[p] = n;
    }
    e.ndim_y = outer->ndim_y + inner->ndim_y;
    for (int y = 0; y < outer->ndim_y; ++y) {
        e.y_major[y] = outer->y_major[y];
        e.y_minor[y] = outer->y_minor[y];
    }
    for (int y = 0; y < inner->ndim_y; ++y) {
        int mj = inner->y_major[y];
        e.y_major[outer->ndim_y + y] = mj;
        e.y_minor[outer->ndim_y + y] = inner->y_minor[y] + outer->ndim_h[mj - 1];
    }
    if ((st = validated(&e, fn)))
        return st;
    *out = e;
    return CK_SUCCESS;
}

ck_status ck_dist_reduce(const ck_dist_encoding *in, const int *reduce_x, ck_dist_encoding *out)
{
    static const char *fn = "ck_dist_reduce";
    CK_REQUIRE_NOT_NULL(in, fn);
    CK_REQUIRE_NOT_NULL(reduce_x, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    ck_distribution d;
    ck_status st = ck_dist_make(in, &d);
    if (st)
        return ck_fail_context(st, "%s: argument 'in'", fn);
    /* New place of every RH component: major/minor, or -1 (dropped, Y-owned of reduced X). */
    int new_major[CK_DIST_MAX_X][CK_DIST_MAX_H], new_minor[CK_DIST_MAX_X][CK_DIST_MAX_H];
    int xmap[CK_DIST_MAX_X];
    ck_dist_encoding e;
    memset(&e, 0, sizeof e);
    e.ndim_r = in->ndim_r;
    memcpy(e.r_lengths, in->r_lengths, sizeof(int) * (size_t)in->ndim_r);
    for (int x = 0; x < in->ndim_x; ++x) {
        if (!reduce_x[x]) {
            xmap[x] = e.ndim_x++;
            e.ndim_h[xmap[x]] = in->ndim_h[x];
            memcpy(e.h_lengths[xmap[x]], in->h_lengths[x], sizeof(int) * (size_t)in->ndim_h[x]);
            for (int k = 0; k < in->ndim_h[x]; ++k) {
                new_major[x][k] = xmap[x] + 1;
                new_minor[x][k] = k;
            }
            continue;
        }
        xmap[x] = -1;
        for (int k = 0; k < in->ndim_h[x]; ++k) {
            if (d.h_owner[x][k] >= 0) {
                new_major[x][k] = -1;
                continue;
            }
            if (e.ndim_r >= CK_DIST_MAX_R)
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               "%s: the result would have more than %d R dims.", fn, CK_DIST_MAX_R);
            new_major[x][k] = 0;
            new_minor[x][k] = e.ndim_r;
            e.r_lengths[e.ndim_r++] = in->h_lengths[x][k];
        }
    }
    if (e.ndim_x == 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: every X dim is reduced; at least one must remain.", fn);
    e.ndim_p = in->ndim_p;
    for (int p = 0; p < in->ndim_p; ++p) {
        e.p_size[p] = in->p_size[p];
        for (int k = 0; k < in->p_size[p]; ++k) {
            int mj = in->p_major[p][k], mn = in->p_minor[p][k];
            e.p_major[p][k] = mj == 0 ? 0 : new_major[mj - 1][mn];
            e.p_minor[p][k] = mj == 0 ? mn : new_minor[mj - 1][mn];
        }
    }
    for (int y = 0; y < in->ndim_y; ++y) {
        int mj = in->y_major[y], mn = in->y_minor[y];
        if (new_major[mj - 1][mn] < 0)
            continue;
        e.y_major[e.ndim_y] = new_major[mj - 1][mn];
        e.y_minor[e.ndim_y++] = new_minor[mj - 1][mn];
    }
    if ((st = validated(&e, fn)))
        return st;
    *out = e;
    return CK_SUCCESS;
}

ck_status ck_dist_slice(const ck_dist_encoding *in, const int *begin, const int *end,
                        ck_dist_encoding *out, int *y_origin)
{
    static const char *fn = "ck_dist_slice";
    CK_REQUIRE_NOT_NULL(in, fn);
    CK_REQUIRE_NOT_NULL(begin, fn);
    CK_REQUIRE_NOT_NULL(end, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    ck_distribution d;
    ck_status st = ck_dist_make(in, &d);
    if (st)
        return ck_fail_context(st, "%s: argument 'in'", fn);
    ck_dist_encoding e = *in;
    int origin[CK_DIST_MAX_Y] = {0};
    for (int x = 0; x < in->ndim_x; ++x) {
        int b = begin[x], len = end[x] - begin[x];
        if (b < 0 || len < 1 || end[x] > d.x_lengths[x])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: X%d range [%d, %d) is empty or outside [0, %d).", fn, x, begin[x],
                           end[x], d.x_lengths[x]);
        const int nh = in->ndim_h[x];
        long long suffix = 1;
        int k = nh - 1;
        for (; k >= 0; suffix *= in->h_lengths[x][k], --k) {
            if (b % suffix || len % suffix)
                continue;
            long long n = len / suffix, lo = (b / suffix) % in->h_lengths[x][k];
            if (lo + n <= in->h_lengths[x][k])
                break;
        }
        if (k < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: X%d range [%d, %d) is not a box of X%d's H components; slices "
                           "must keep the inner components whole.",
                           fn, x, begin[x], end[x], x);
        long long n = len / suffix, lo = (b / suffix) % in->h_lengths[x][k];
        long long fixed = b / suffix / in->h_lengths[x][k];
        for (int j = k; j >= 0; --j) {
            int hl = in->h_lengths[x][j];
            int lo_j = j == k ? (int)lo : (int)(fixed % hl);
            int n_j = j == k ? (int)n : 1;
            if (j < k)
                fixed /= hl;
            if (n_j == hl)
                continue;
            int owner = d.h_owner[x][j];
            if (owner < 0)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: X%d range [%d, %d) cuts H component rhs[%d][%d] (length %d), "
                               "which P%d owns; only Y-owned components can be sliced.",
                               fn, x, begin[x], end[x], x + 1, j, hl, -1 - owner);
            e.h_lengths[x][j] = n_j;
            origin[owner] = lo_j;
        }
    }
    if ((st = validated(&e, fn)))
        return st;
    *out = e;
    if (y_origin)
        memcpy(y_origin, origin, sizeof(int) * (size_t)in->ndim_y);
    return CK_SUCCESS;
}

ck_status ck_dist_make_2d_pattern(ck_dist_pattern pattern, int block_size, int rows, int cols,
                                  int vector, ck_dist_encoding *out)
{
    static const char *fn = "ck_dist_make_2d_pattern";
    CK_REQUIRE_NOT_NULL(out, fn);
    const int warp = 32;
    if (pattern < CK_DIST_THREAD_RAKED || pattern > CK_DIST_BLOCK_RAKED)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: pattern = %d; accepted: thread-raked (0), warp-raked (1), block-raked "
                       "(2).",
                       fn, (int)pattern);
    if (block_size < warp || block_size % warp || block_size > 1024)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: block_size = %d must be a multiple of the warp size 32, at most 1024.",
                       fn, block_size);
    if (vector < 1 || cols < 1 || cols % vector)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: cols = %d must be a positive multiple of vector = %d.", fn, cols,
                       vector);
    int x1 = vector, x0 = cols / vector;
    if (x0 > warp || warp % x0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: cols / vector = %d threads per row must divide the warp size 32.", fn,
                       x0);
    int lanes_y = warp / x0, nw = block_size / warp;
    if (rows < 1 || rows % (lanes_y * nw))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: rows = %d must be a positive multiple of %d (rows covered by one block "
                       "of %d threads with %d threads per row).",
                       fn, rows, lanes_y * nw, block_size, x0);
    int rep = rows / (lanes_y * nw);
    ck_dist_encoding e;
    memset(&e, 0, sizeof e);
    e.ndim_r = 1;
    e.r_lengths[0] = 1;
    e.ndim_x = 2;
    e.ndim_h[0] = 3;
    e.ndim_h[1] = 2;
    e.h_lengths[1][0] = x0;
    e.h_lengths[1][1] = x1;
    e.ndim_p = 2;
    e.p_size[0] = 1;
    e.p_major[0][0] = 1;
    e.p_size[1] = 2;
    e.p_major[1][0] = 1;
    e.p_major[1][1] = 2;
    e.p_minor[1][1] = 0;
    e.ndim_y = 2;
    e.y_major[0] = 1;
    e.y_major[1] = 2;
    e.y_minor[1] = 1;
    switch (pattern) {
    case CK_DIST_THREAD_RAKED: /* H0 = (warps, lanes, repeats) */
        e.h_lengths[0][0] = nw;
        e.h_lengths[0][1] = lanes_y;
        e.h_lengths[0][2] = rep;
        e.p_minor[0][0] = 0;
        e.p_minor[1][0] = 1;
        e.y_minor[0] = 2;
        break;
    case CK_DIST_WARP_RAKED: /* H0 = (warps, repeats, lanes) */
        e.h_lengths[0][0] = nw;
        e.h_lengths[0][1] = rep;
        e.h_lengths[0][2] = lanes_y;
        e.p_minor[0][0] = 0;
        e.p_minor[1][0] = 2;
        e.y_minor[0] = 1;
        break;
    case CK_DIST_BLOCK_RAKED: /* H0 = (repeats, warps, lanes) */
        e.h_lengths[0][0] = rep;
        e.h_lengths[0][1] = nw;
        e.h_lengths[0][2] = lanes_y;
        e.p_minor[0][0] = 1;
        e.p_minor[1][0] = 2;
        e.y_minor[0] = 0;
        break;
    }
    ck_status st = validated(&e, fn);
    if (st)
        return st;
    *out = e;
    return CK_SUCCESS;
}
