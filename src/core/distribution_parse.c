/*
 * Text form of tile distribution encodings: CK's own C++ spelling
 *   tile_distribution_encoding<sequence<..>, tuple<sequence<..>, ..>, tuple<..>, tuple<..>,
 *                              sequence<..>, sequence<..>>
 * parsed with a small recursive-descent reader, and written back.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ck/distribution.h"
#include "core/error.h"

static const char *const FN = "ck_dist_encoding_parse";

typedef struct reader {
    const char *text, *s;
} reader;

/* Skips whitespace and C/C++ comments (pasted CK sources carry "// ..." remarks). */
static void skip_ws(reader *r)
{
    for (;;) {
        while (*r->s && isspace((unsigned char)*r->s))
            ++r->s;
        if (r->s[0] == '/' && r->s[1] == '/') {
            while (*r->s && *r->s != '\n')
                ++r->s;
        } else if (r->s[0] == '/' && r->s[1] == '*') {
            const char *end = strstr(r->s + 2, "*/");
            r->s = end ? end + 2 : r->s + strlen(r->s);
        } else {
            return;
        }
    }
}

static ck_status perr(reader *r, const char *expected)
{
    char near[24];
    size_t n = strlen(r->s);
    snprintf(near, sizeof near, "%.*s", (int)(n < 16 ? n : 16), r->s);
    return ck_fail(CK_ERROR_PARSE, "%s: expected %s at character %ld, found '%s'.", FN, expected,
                   (long)(r->s - r->text) + 1, *r->s ? near : "end of text");
}

static int accept(reader *r, char c)
{
    skip_ws(r);
    if (*r->s == c) {
        ++r->s;
        return 1;
    }
    return 0;
}

/* An identifier with optional ck_tile:: (or ::) prefixes; matches one of two spellings. */
static int accept_name(reader *r, const char *a, const char *b)
{
    skip_ws(r);
    const char *s = r->s;
    for (;;) {
        if (strncmp(s, "::", 2) == 0) {
            s += 2;
            continue;
        }
        if (strncmp(s, "ck_tile::", 9) == 0) {
            s += 9;
            continue;
        }
        break;
    }
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        ++n;
    if ((strlen(a) == n && strncmp(s, a, n) == 0) ||
        (b && strlen(b) == n && strncmp(s, b, n) == 0)) {
        r->s = s + n;
        return 1;
    }
    return 0;
}

/* sequence<i, j, ...> into v (at most cap values). */
static ck_status parse_sequence(reader *r, int *v, int cap, int *count, const char *what)
{
    if (!accept_name(r, "sequence", "Sequence"))
        return perr(r, "'sequence<'");
    if (!accept(r, '<'))
        return perr(r, "'<' after 'sequence'");
    int n = 0;
    if (accept(r, '>')) {
        *count = 0;
        return CK_SUCCESS;
    }
    for (;;) {
        skip_ws(r);
        int neg = 0;
        if (*r->s == '-') {
            neg = 1;
            ++r->s;
        }
        if (!isdigit((unsigned char)*r->s))
            return perr(r, "an integer literal");
        long long val = 0;
        while (isdigit((unsigned char)*r->s)) {
            val = val * 10 + (*r->s - '0');
            if (val > 1000000000LL)
                return ck_fail(CK_ERROR_PARSE, "%s: integer too large at character %ld.", FN,
                               (long)(r->s - r->text) + 1);
            ++r->s;
        }
        if (n >= cap)
            return ck_fail(CK_ERROR_PARSE,
                           "%s: %s has more than %d values (at character %ld); that is the most "
                           "ck supports.",
                           FN, what, cap, (long)(r->s - r->text));
        v[n++] = (int)(neg ? -val : val);
        if (accept(r, ','))
            continue;
        if (accept(r, '>'))
            break;
        return perr(r, "',' or '>' in a sequence");
    }
    *count = n;
    return CK_SUCCESS;
}

/* tuple<sequence<..>, ...> into rows of v (stride cols). */
static ck_status parse_tuple(reader *r, int *v, int cols, int max_rows, int *counts, int *rows,
                             const char *what)
{
    if (!accept_name(r, "tuple", "Tuple"))
        return perr(r, "'tuple<'");
    if (!accept(r, '<'))
        return perr(r, "'<' after 'tuple'");
    int n = 0;
    if (accept(r, '>')) {
        *rows = 0;
        return CK_SUCCESS;
    }
    for (;;) {
        if (n >= max_rows)
            return ck_fail(CK_ERROR_PARSE,
                           "%s: %s has more than %d sequences (at character %ld); that is the most "
                           "ck supports.",
                           FN, what, max_rows, (long)(r->s - r->text) + 1);
        ck_status st = parse_sequence(r, v + (size_t)n * (size_t)cols, cols, &counts[n], what);
        if (st)
            return st;
        ++n;
        if (accept(r, ','))
            continue;
        if (accept(r, '>'))
            break;
        return perr(r, "',' or '>' in a tuple");
    }
    *rows = n;
    return CK_SUCCESS;
}

ck_status ck_dist_encoding_parse(const char *text, ck_dist_encoding *enc)
{
    CK_REQUIRE_NOT_NULL(text, FN);
    CK_REQUIRE_NOT_NULL(enc, FN);
    ck_dist_encoding e;
    memset(&e, 0, sizeof e);
    reader r = {text, text};
    ck_status st;
    if (!accept_name(&r, "tile_distribution_encoding", "TileDistributionEncoding"))
        return perr(&r, "'tile_distribution_encoding<'");
    if (!accept(&r, '<'))
        return perr(&r, "'<' after 'tile_distribution_encoding'");
    if ((st = parse_sequence(&r, e.r_lengths, CK_DIST_MAX_R, &e.ndim_r, "the R lengths")))
        return st;
    if (!accept(&r, ','))
        return perr(&r, "',' after the R lengths");
    if ((st = parse_tuple(&r, &e.h_lengths[0][0], CK_DIST_MAX_H, CK_DIST_MAX_X, e.ndim_h, &e.ndim_x,
                          "the H lengths")))
        return st;
    if (!accept(&r, ','))
        return perr(&r, "',' after the H lengths");
    int nmin = 0, minor_counts[CK_DIST_MAX_P];
    if ((st = parse_tuple(&r, &e.p_major[0][0], CK_DIST_MAX_P_RH, CK_DIST_MAX_P, e.p_size,
                          &e.ndim_p, "ps_to_rhss_major")))
        return st;
    if (!accept(&r, ','))
        return perr(&r, "',' after ps_to_rhss_major");
    if ((st = parse_tuple(&r, &e.p_minor[0][0], CK_DIST_MAX_P_RH, CK_DIST_MAX_P, minor_counts,
                          &nmin, "ps_to_rhss_minor")))
        return st;
    if (nmin != e.ndim_p)
        return ck_fail(CK_ERROR_PARSE,
                       "%s: ps_to_rhss_major has %d sequences but ps_to_rhss_minor has %d; they "
                       "must match.",
                       FN, e.ndim_p, nmin);
    for (int p = 0; p < e.ndim_p; ++p)
        if (minor_counts[p] != e.p_size[p])
            return ck_fail(CK_ERROR_PARSE,
                           "%s: P%d lists %d majors but %d minors; they must match.", FN, p,
                           e.p_size[p], minor_counts[p]);
    if (!accept(&r, ','))
        return perr(&r, "',' after ps_to_rhss_minor");
    int ny_minor = 0;
    if ((st = parse_sequence(&r, e.y_major, CK_DIST_MAX_Y, &e.ndim_y, "ys_to_rhs_major")))
        return st;
    if (!accept(&r, ','))
        return perr(&r, "',' after ys_to_rhs_major");
    if ((st = parse_sequence(&r, e.y_minor, CK_DIST_MAX_Y, &ny_minor, "ys_to_rhs_minor")))
        return st;
    if (ny_minor != e.ndim_y)
        return ck_fail(CK_ERROR_PARSE,
                       "%s: ys_to_rhs_major has %d values but ys_to_rhs_minor has %d; they must "
                       "match.",
                       FN, e.ndim_y, ny_minor);
    if (!accept(&r, '>'))
        return perr(&r, "'>' closing tile_distribution_encoding");
    if (accept(&r, '{') && !accept(&r, '}'))
        return perr(&r, "'}'");
    accept(&r, ';');
    skip_ws(&r);
    if (*r.s)
        return perr(&r, "end of text");
    *enc = e;
    return CK_SUCCESS;
}

typedef struct writer {
    char *buf;
    size_t size, len;
} writer;

static void put(writer *w, const char *fmt, ...) CK_PRINTF_LIKE(2, 3);
static void put(writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = w->len < w->size ? w->size - w->len : 0;
    int n = vsnprintf(room ? w->buf + w->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        w->len += (size_t)n;
}

static void put_seq(writer *w, const int *v, int n)
{
    put(w, "sequence<");
    for (int i = 0; i < n; ++i)
        put(w, "%s%d", i ? ", " : "", v[i]);
    put(w, ">");
}

ck_status ck_dist_encoding_format(const ck_dist_encoding *enc, char *buf, size_t size)
{
    static const char *fn = "ck_dist_encoding_format";
    CK_REQUIRE_NOT_NULL(enc, fn);
    CK_REQUIRE_NOT_NULL(buf, fn);
    if (enc->ndim_r < 0 || enc->ndim_r > CK_DIST_MAX_R || enc->ndim_x < 0 ||
        enc->ndim_x > CK_DIST_MAX_X || enc->ndim_p < 0 || enc->ndim_p > CK_DIST_MAX_P ||
        enc->ndim_y < 0 || enc->ndim_y > CK_DIST_MAX_Y)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the encoding's dim counts are out of range (R %d, X %d, P %d, Y %d).",
                       fn, enc->ndim_r, enc->ndim_x, enc->ndim_p, enc->ndim_y);
    writer w = {buf, size, 0};
    put(&w, "tile_distribution_encoding<");
    put_seq(&w, enc->r_lengths, enc->ndim_r);
    put(&w, ", tuple<");
    for (int x = 0; x < enc->ndim_x; ++x) {
        put(&w, x ? ", " : "");
        put_seq(&w, enc->h_lengths[x],
                enc->ndim_h[x] < 0               ? 0
                : enc->ndim_h[x] > CK_DIST_MAX_H ? CK_DIST_MAX_H
                                                 : enc->ndim_h[x]);
    }
    for (int pass = 0; pass < 2; ++pass) {
        put(&w, ">, tuple<");
        for (int p = 0; p < enc->ndim_p; ++p) {
            int n = enc->p_size[p] < 0                  ? 0
                    : enc->p_size[p] > CK_DIST_MAX_P_RH ? CK_DIST_MAX_P_RH
                                                        : enc->p_size[p];
            put(&w, p ? ", " : "");
            put_seq(&w, pass ? enc->p_minor[p] : enc->p_major[p], n);
        }
    }
    put(&w, ">, ");
    put_seq(&w, enc->y_major, enc->ndim_y);
    put(&w, ", ");
    put_seq(&w, enc->y_minor, enc->ndim_y);
    put(&w, ">");
    if (w.len >= size)
        return ck_fail(CK_ERROR_OVERFLOW, "%s: the text needs %zu bytes but the buffer has %zu.",
                       fn, w.len + 1, size);
    return CK_SUCCESS;
}
