/*
 * Tile distribution encodings: validation, derived lengths, X(P, Y), R(P), ys_to_d,
 * distributed spans and the sweep order. Everything is evaluated directly by mixed radix;
 * the ps_ys_to_xs adaptor built from transforms must agree with ck_dist_calculate_x.
 */
#include <stdio.h>
#include <string.h>

#include "ck/distribution.h"
#include "core/error.h"

static const char *const FN = "ck_dist_make";

static ck_status check_count(const char *what, int n, int lo, int hi)
{
    if (n < lo || n > hi)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: the number of %s is %d; accepted: %d to %d.",
                       FN, what, n, lo, hi);
    return CK_SUCCESS;
}

static ck_status check_length(const char *what, int i, int k, int len)
{
    if (len < 1 || len > CK_DIST_MAX_LENGTH) {
        if (k >= 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: %s[%d][%d] has length %d; lengths must be 1 to %d.", FN, what, i, k,
                           len, CK_DIST_MAX_LENGTH);
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: %s[%d] has length %d; lengths must be 1 to %d.", FN, what, i, len,
                       CK_DIST_MAX_LENGTH);
    }
    return CK_SUCCESS;
}

/* Name of owner code (y >= 0, or -1 - p*CK_DIST_MAX_P_RH - entry) into buf. */
static void owner_name(int code, char *buf, size_t n)
{
    if (code >= 0) {
        snprintf(buf, n, "Y%d", code);
    } else {
        int c = -1 - code;
        snprintf(buf, n, "P%d entry %d", c / CK_DIST_MAX_P_RH, c % CK_DIST_MAX_P_RH);
    }
}

static void rh_name(int major, int minor, char *buf, size_t n)
{
    if (major == 0)
        snprintf(buf, n, "component rhs[0][%d] (R%d)", minor, minor);
    else
        snprintf(buf, n, "H component rhs[%d][%d] (X%d, minor %d)", major, minor, major - 1, minor);
}

/* Long-long product with overflow check. */
static int mul_ok(long long *acc, long long v)
{
    if (v != 0 && *acc > (1LL << 53) / v)
        return 0;
    *acc *= v;
    return 1;
}

ck_status ck_dist_make(const ck_dist_encoding *enc, ck_distribution *dist)
{
    CK_REQUIRE_NOT_NULL(enc, FN);
    CK_REQUIRE_NOT_NULL(dist, FN);
    ck_status st;
    if ((st = check_count("R dims", enc->ndim_r, 0, CK_DIST_MAX_R)) ||
        (st = check_count("X dims", enc->ndim_x, 1, CK_DIST_MAX_X)) ||
        (st = check_count("P dims", enc->ndim_p, 0, CK_DIST_MAX_P)) ||
        (st = check_count("Y dims", enc->ndim_y, 0, CK_DIST_MAX_Y)))
        return st;
    for (int i = 0; i < enc->ndim_r; ++i)
        if ((st = check_length("R", i, -1, enc->r_lengths[i])))
            return st;
    for (int x = 0; x < enc->ndim_x; ++x) {
        if (enc->ndim_h[x] < 1 || enc->ndim_h[x] > CK_DIST_MAX_H)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: X%d has %d H components; accepted: 1 to %d.", FN, x, enc->ndim_h[x],
                           CK_DIST_MAX_H);
        for (int k = 0; k < enc->ndim_h[x]; ++k)
            if ((st = check_length("H", x, k, enc->h_lengths[x][k])))
                return st;
    }
    /* Owner table: code per RH component; 1 = unset sentinel via separate flags. */
    int h_code[CK_DIST_MAX_X][CK_DIST_MAX_H], h_set[CK_DIST_MAX_X][CK_DIST_MAX_H];
    int r_code[CK_DIST_MAX_R], r_set[CK_DIST_MAX_R];
    memset(h_set, 0, sizeof h_set);
    memset(r_set, 0, sizeof r_set);
    char a[96], b[48], c[48];
    for (int p = 0; p < enc->ndim_p; ++p) {
        if (enc->p_size[p] < 0 || enc->p_size[p] > CK_DIST_MAX_P_RH)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: P%d lists %d RH components; accepted: 0 to %d.", FN, p,
                           enc->p_size[p], CK_DIST_MAX_P_RH);
        for (int e = 0; e < enc->p_size[p]; ++e) {
            int mj = enc->p_major[p][e], mn = enc->p_minor[p][e];
            if (mj < 0 || mj > enc->ndim_x)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: ps_to_rhss_major[%d][%d] = %d is out of range; accepted: 0 "
                               "(R) to %d (X%d).",
                               FN, p, e, mj, enc->ndim_x, enc->ndim_x - 1);
            int lim = mj == 0 ? enc->ndim_r : enc->ndim_h[mj - 1];
            if (mn < 0 || mn >= lim)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: ps_to_rhss_minor[%d][%d] = %d is out of range for RH major %d, "
                               "which has %d components.",
                               FN, p, e, mn, mj, lim);
            int code = -1 - (p * CK_DIST_MAX_P_RH + e);
            int *set = mj == 0 ? &r_set[mn] : &h_set[mj - 1][mn];
            int *cd = mj == 0 ? &r_code[mn] : &h_code[mj - 1][mn];
            if (*set) {
                rh_name(mj, mn, a, sizeof a);
                owner_name(*cd, b, sizeof b);
                owner_name(code, c, sizeof c);
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: %s is owned by both %s and %s; each component must be owned "
                               "by exactly one P entry or one Y entry.",
                               FN, a, b, c);
            }
            *set = 1;
            *cd = code;
        }
    }
    for (int y = 0; y < enc->ndim_y; ++y) {
        int mj = enc->y_major[y], mn = enc->y_minor[y];
        if (mj < 1 || mj > enc->ndim_x) {
            if (mj == 0)
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: ys_to_rhs_major[%d] = 0 names an R component; Y dims may "
                               "only name H components (majors 1 to %d).",
                               FN, y, enc->ndim_x);
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: ys_to_rhs_major[%d] = %d is out of range; accepted: 1 to %d "
                           "(an RH major index, not a length).",
                           FN, y, mj, enc->ndim_x);
        }
        if (mn < 0 || mn >= enc->ndim_h[mj - 1])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: ys_to_rhs_minor[%d] = %d is out of range for X%d, which has %d H "
                           "components.",
                           FN, y, mn, mj - 1, enc->ndim_h[mj - 1]);
        if (h_set[mj - 1][mn]) {
            rh_name(mj, mn, a, sizeof a);
            owner_name(h_code[mj - 1][mn], b, sizeof b);
            owner_name(y, c, sizeof c);
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: %s is owned by both %s and %s; each component must be owned by "
                           "exactly one P entry or one Y entry.",
                           FN, a, b, c);
        }
        h_set[mj - 1][mn] = 1;
        h_code[mj - 1][mn] = y;
    }
    for (int x = 0; x < enc->ndim_x; ++x)
        for (int k = 0; k < enc->ndim_h[x]; ++k)
            if (!h_set[x][k]) {
                rh_name(x + 1, k, a, sizeof a);
                return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                               "%s: %s (length %d) is owned by no P or Y entry; every H component "
                               "must be owned by exactly one.",
                               FN, a, enc->h_lengths[x][k]);
            }
    for (int r = 0; r < enc->ndim_r; ++r)
        if (!r_set[r] && enc->r_lengths[r] != 1) {
            rh_name(0, r, a, sizeof a);
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: %s (length %d) is owned by no P entry; an R component of length "
                           "> 1 must be owned by exactly one P entry.",
                           FN, a, enc->r_lengths[r]);
        }

    ck_distribution d;
    memset(&d, 0, sizeof d);
    d.enc = *enc;
    d.tile_elements = d.elements_per_thread = d.threads = d.replication = 1;
    for (int x = 0; x < enc->ndim_x; ++x) {
        long long l = 1;
        for (int k = 0; k < enc->ndim_h[x]; ++k) {
            if (!mul_ok(&l, enc->h_lengths[x][k]))
                return ck_fail(CK_ERROR_OVERFLOW, "%s: X%d's length overflows.", FN, x);
            int code = h_code[x][k];
            d.h_owner[x][k] = code >= 0 ? code : -1 - ((-1 - code) / CK_DIST_MAX_P_RH);
        }
        if (l > CK_DIST_MAX_LENGTH * 16LL)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: X%d has length %lld; at most %lld.", FN,
                           x, l, CK_DIST_MAX_LENGTH * 16LL);
        d.x_lengths[x] = (int)l;
        if (!mul_ok(&d.tile_elements, l))
            return ck_fail(CK_ERROR_OVERFLOW, "%s: the tile size overflows.", FN);
    }
    for (int r = 0; r < enc->ndim_r; ++r) {
        d.r_owner[r] = r_set[r] ? -1 - ((-1 - r_code[r]) / CK_DIST_MAX_P_RH) : CK_DIST_UNOWNED;
        if (r_set[r] && !mul_ok(&d.replication, enc->r_lengths[r]))
            return ck_fail(CK_ERROR_OVERFLOW, "%s: the replication overflows.", FN);
    }
    for (int y = 0; y < enc->ndim_y; ++y) {
        d.y_lengths[y] = enc->h_lengths[enc->y_major[y] - 1][enc->y_minor[y]];
        if (!mul_ok(&d.elements_per_thread, d.y_lengths[y]))
            return ck_fail(CK_ERROR_OVERFLOW, "%s: elements per thread overflow.", FN);
    }
    for (int p = 0; p < enc->ndim_p; ++p) {
        long long l = 1;
        for (int e = 0; e < enc->p_size[p]; ++e) {
            int mj = enc->p_major[p][e], mn = enc->p_minor[p][e];
            if (!mul_ok(&l, mj == 0 ? enc->r_lengths[mn] : enc->h_lengths[mj - 1][mn]))
                return ck_fail(CK_ERROR_OVERFLOW, "%s: P%d's length overflows.", FN, p);
        }
        if (l > CK_DIST_MAX_LENGTH * 16LL)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: P%d has length %lld; at most %lld.", FN,
                           p, l, CK_DIST_MAX_LENGTH * 16LL);
        d.p_lengths[p] = (int)l;
        if (!mul_ok(&d.threads, l))
            return ck_fail(CK_ERROR_OVERFLOW, "%s: the thread count overflows.", FN);
    }
    *dist = d;
    return CK_SUCCESS;
}

/* Decompose every P index into the RH indices it merges (last listed fastest). */
static ck_status p_to_rh(const ck_distribution *dist, const int *p, int r_idx[CK_DIST_MAX_R],
                         int h_idx[CK_DIST_MAX_X][CK_DIST_MAX_H], const char *fn)
{
    const ck_dist_encoding *e = &dist->enc;
    for (int i = 0; i < e->ndim_p; ++i) {
        if (p[i] < 0 || p[i] >= dist->p_lengths[i])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: partition index P%d = %d is out of range [0, %d).", fn, i, p[i],
                           dist->p_lengths[i]);
        int rest = p[i];
        for (int k = e->p_size[i] - 1; k >= 0; --k) {
            int mj = e->p_major[i][k], mn = e->p_minor[i][k];
            int len = mj == 0 ? e->r_lengths[mn] : e->h_lengths[mj - 1][mn];
            if (mj == 0)
                r_idx[mn] = rest % len;
            else
                h_idx[mj - 1][mn] = rest % len;
            rest /= len;
        }
    }
    return CK_SUCCESS;
}

ck_status ck_dist_calculate_x(const ck_distribution *dist, const int *p, const int *y, int *x)
{
    static const char *fn = "ck_dist_calculate_x";
    CK_REQUIRE_NOT_NULL(dist, fn);
    CK_REQUIRE_NOT_NULL(x, fn);
    const ck_dist_encoding *e = &dist->enc;
    if (e->ndim_p > 0)
        CK_REQUIRE_NOT_NULL(p, fn);
    if (e->ndim_y > 0)
        CK_REQUIRE_NOT_NULL(y, fn);
    int r_idx[CK_DIST_MAX_R], h_idx[CK_DIST_MAX_X][CK_DIST_MAX_H];
    ck_status st = p_to_rh(dist, p, r_idx, h_idx, fn);
    if (st)
        return st;
    for (int j = 0; j < e->ndim_y; ++j) {
        if (y[j] < 0 || y[j] >= dist->y_lengths[j])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: Y%d = %d is out of range [0, %d).", fn,
                           j, y[j], dist->y_lengths[j]);
        h_idx[e->y_major[j] - 1][e->y_minor[j]] = y[j];
    }
    for (int i = 0; i < e->ndim_x; ++i) {
        long long v = 0;
        for (int k = 0; k < e->ndim_h[i]; ++k)
            v = v * e->h_lengths[i][k] + h_idx[i][k];
        x[i] = (int)v;
    }
    return CK_SUCCESS;
}

ck_status ck_dist_calculate_r(const ck_distribution *dist, const int *p, int *r)
{
    static const char *fn = "ck_dist_calculate_r";
    CK_REQUIRE_NOT_NULL(dist, fn);
    if (dist->enc.ndim_r == 0)
        return CK_SUCCESS;
    CK_REQUIRE_NOT_NULL(r, fn);
    if (dist->enc.ndim_p > 0)
        CK_REQUIRE_NOT_NULL(p, fn);
    int r_idx[CK_DIST_MAX_R] = {0}, h_idx[CK_DIST_MAX_X][CK_DIST_MAX_H];
    ck_status st = p_to_rh(dist, p, r_idx, h_idx, fn);
    if (st)
        return st;
    memcpy(r, r_idx, sizeof(int) * (size_t)dist->enc.ndim_r);
    return CK_SUCCESS;
}

ck_status ck_dist_thread_origin(const ck_distribution *dist, const int *p, int *x)
{
    int y0[CK_DIST_MAX_Y] = {0};
    return ck_dist_calculate_x(dist, p, y0, x);
}

ck_status ck_dist_partition_index(const ck_distribution *dist, long long tid, int *p)
{
    static const char *fn = "ck_dist_partition_index";
    CK_REQUIRE_NOT_NULL(dist, fn);
    if (tid < 0 || tid >= dist->threads)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: thread id %lld is out of range [0, %lld).",
                       fn, tid, dist->threads);
    if (dist->enc.ndim_p > 0)
        CK_REQUIRE_NOT_NULL(p, fn);
    for (int i = dist->enc.ndim_p - 1; i >= 0; --i) {
        p[i] = (int)(tid % dist->p_lengths[i]);
        tid /= dist->p_lengths[i];
    }
    return CK_SUCCESS;
}

ck_status ck_dist_thread_id(const ck_distribution *dist, const int *p, long long *tid)
{
    static const char *fn = "ck_dist_thread_id";
    CK_REQUIRE_NOT_NULL(dist, fn);
    CK_REQUIRE_NOT_NULL(tid, fn);
    long long t = 0;
    for (int i = 0; i < dist->enc.ndim_p; ++i) {
        if (p[i] < 0 || p[i] >= dist->p_lengths[i])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: partition index P%d = %d is out of range [0, %d).", fn, i, p[i],
                           dist->p_lengths[i]);
        t = t * dist->p_lengths[i] + p[i];
    }
    *tid = t;
    return CK_SUCCESS;
}

ck_status ck_dist_ys_to_d(const ck_distribution *dist, const int *y, long long *d)
{
    static const char *fn = "ck_dist_ys_to_d";
    CK_REQUIRE_NOT_NULL(dist, fn);
    CK_REQUIRE_NOT_NULL(d, fn);
    long long v = 0;
    for (int j = 0; j < dist->enc.ndim_y; ++j) {
        if (y[j] < 0 || y[j] >= dist->y_lengths[j])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: Y%d = %d is out of range [0, %d).", fn,
                           j, y[j], dist->y_lengths[j]);
        v = v * dist->y_lengths[j] + y[j];
    }
    *d = v;
    return CK_SUCCESS;
}

ck_status ck_dist_d_to_ys(const ck_distribution *dist, long long d, int *y)
{
    static const char *fn = "ck_dist_d_to_ys";
    CK_REQUIRE_NOT_NULL(dist, fn);
    if (d < 0 || d >= dist->elements_per_thread)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: register index %lld is out of range [0, %lld).", fn, d,
                       dist->elements_per_thread);
    for (int j = dist->enc.ndim_y - 1; j >= 0; --j) {
        y[j] = (int)(d % dist->y_lengths[j]);
        d /= dist->y_lengths[j];
    }
    return CK_SUCCESS;
}

ck_status ck_dist_get_spans(const ck_distribution *dist, ck_dist_spans *spans)
{
    static const char *fn = "ck_dist_get_spans";
    CK_REQUIRE_NOT_NULL(dist, fn);
    CK_REQUIRE_NOT_NULL(spans, fn);
    memset(spans, 0, sizeof *spans);
    const ck_dist_encoding *e = &dist->enc;
    spans->ndim_x = e->ndim_x;
    /* CK numbers the span components of an X dim in the order of the Y dims naming them. */
    for (int j = 0; j < e->ndim_y; ++j) {
        int x = e->y_major[j] - 1, n = spans->count[x]++;
        spans->lengths[x][n] = dist->y_lengths[j];
        spans->y_dim[x][n] = j;
    }
    return CK_SUCCESS;
}
