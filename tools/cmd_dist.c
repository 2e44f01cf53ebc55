/* ck dist: show, map, verify and draw a tile distribution encoding given in CK's spelling. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ck/distribution.h"
#include "cli.h"

static const char usage[] =
    "Usage: ck dist [OPTIONS] ENCODING\n"
    "       ck dist --pattern thread|warp|block --block N --tile ROWSxCOLS --vector V [OPTIONS]\n\n"
    "Show which thread holds which element of a tile under a tile distribution encoding, given\n"
    "in CK's own C++ spelling (quote it; several arguments are joined with spaces), e.g.\n"
    "  ck dist 'tile_distribution_encoding<sequence<>, tuple<sequence<2, 2>, sequence<2, 2>>,\n"
    "           tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, sequence<0>>,\n"
    "           sequence<1, 2>, sequence<1, 1>>'\n"
    "ck_tile:: prefixes, comments, a trailing {} or ; are accepted. Threads: the partition index\n"
    "P is the row-major decomposition of the thread id (P0 = warp, P1 = lane in CK's 2-P form);\n"
    "register d is the row-major index of Y over the Y lengths.\n\n"
    "  --json            one JSON object: x_lengths, y_lengths, p_lengths, r_lengths,\n"
    "                    elements_per_thread, map (a list of {\"p\",\"y\",\"x\",\"d\"} for every\n"
    "                    (P, Y)), and check (with --check)\n"
    "  --p P0,P1,...     only the thread with this partition index (repeatable)\n"
    "  --check           verify coverage, vector width, global-memory sectors per warp access\n"
    "                    and shared-memory bank conflicts (32 lanes, 32 banks of 4 bytes,\n"
    "                    32-byte sectors)\n"
    "  --dtype T         element type for --check: f64 f32 f16 bf16 f8 i8 i16 i32 i64, or a\n"
    "                    size in bytes (default f32)\n"
    "  --strides S0,...  element strides of the memory layout (default packed row-major)\n"
    "  --base BYTES      byte address of element 0 for alignment (default 0)\n"
    "  --swizzle MODE    NVIDIA shared-memory swizzle of the layout for --check: none, 32B,\n"
    "                    64B or 128B (16-byte chunks XORed with the 128-byte row index)\n"
    "  --svg FILE        draw the tile: cells coloured by warp, labelled with lane and register\n"
    "  --pattern KIND    generate CK's 2-D encoding pattern (thread, warp or block raked) from\n"
    "                    --block (default 256), --tile and --vector (default 1) instead of\n"
    "                    giving ENCODING\n";

typedef struct opts {
    int json, check, npsel;
    int psel[64][CK_DIST_MAX_P];
    int element_bytes;
    int have_strides;
    ck_access_layout layout;
    const char *svg;
} opts;

/* Comma-separated integers into v (at most cap); returns the count or -1. */
static int parse_ints(const char *s, long long *v, int cap)
{
    int n = 0;
    while (*s) {
        char *end;
        long long x = strtoll(s, &end, 10);
        if (end == s || n >= cap)
            return -1;
        v[n++] = x;
        s = end;
        if (*s == ',')
            ++s;
        else if (*s)
            return -1;
    }
    return n;
}

static int dtype_bytes(const char *t)
{
    static const struct {
        const char *name;
        int bytes;
    } types[] = {{"f64", 8}, {"double", 8}, {"fp64", 8},  {"f32", 4},  {"float", 4}, {"fp32", 4},
                 {"f16", 2}, {"half", 2},   {"fp16", 2},  {"bf16", 2}, {"f8", 1},    {"fp8", 1},
                 {"bf8", 1}, {"e4m3", 1},   {"e5m2", 1},  {"i8", 1},   {"u8", 1},    {"int8", 1},
                 {"i16", 2}, {"i32", 4},    {"int32", 4}, {"u32", 4},  {"i64", 8}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(t, types[i].name) == 0)
            return types[i].bytes;
    char *end;
    long v = strtol(t, &end, 10);
    return (*t && !*end && v >= 1 && v <= 64) ? (int)v : -1;
}

static void json_ints(const int *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; ++i)
        printf("%s%d", i ? "," : "", v[i]);
    putchar(']');
}

static void text_ints(const int *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; ++i)
        printf("%s%d", i ? ", " : "", v[i]);
    putchar(']');
}

/* Threads to list: the selected ones, or all. Returns the count; tid[] filled. */
static long long thread_list(const ck_distribution *d, const opts *o, long long *tid)
{
    if (!o->npsel) {
        for (long long t = 0; t < d->threads; ++t)
            tid[t] = t;
        return d->threads;
    }
    for (int i = 0; i < o->npsel; ++i)
        ck_dist_thread_id(d, o->psel[i], &tid[i]);
    return o->npsel;
}

static void print_json(const ck_distribution *d, const long long *tids, long long ntid,
                       const ck_access_report *rep)
{
    const ck_dist_encoding *e = &d->enc;
    printf("{\"x_lengths\":");
    json_ints(d->x_lengths, e->ndim_x);
    printf(",\"y_lengths\":");
    json_ints(d->y_lengths, e->ndim_y);
    printf(",\"p_lengths\":");
    json_ints(d->p_lengths, e->ndim_p);
    printf(",\"r_lengths\":");
    json_ints(e->r_lengths, e->ndim_r);
    printf(",\"elements_per_thread\":%lld,\"threads\":%lld,\"replication\":%lld,\"map\":[",
           d->elements_per_thread, d->threads, d->replication);
    for (long long i = 0; i < ntid; ++i) {
        int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
        ck_dist_partition_index(d, tids[i], p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            ck_dist_calculate_x(d, p, y, x);
            printf("%s{\"p\":", i || r ? "," : "");
            json_ints(p, e->ndim_p);
            printf(",\"y\":");
            json_ints(y, e->ndim_y);
            printf(",\"x\":");
            json_ints(x, e->ndim_x);
            printf(",\"d\":%lld}", r);
        }
    }
    printf("]");
    if (rep) {
        printf(",\"check\":{\"coverage_ok\":%s,\"expected_holders\":%lld",
               rep->coverage_ok ? "true" : "false", rep->expected_holders);
        if (!rep->coverage_ok) {
            printf(",\"first_bad_x\":");
            json_ints(rep->first_bad_x, e->ndim_x);
            printf(",\"first_bad_holders\":%lld", rep->first_bad_holders);
        }
        printf(
            ",\"element_bytes\":%d,\"vector_y_dim\":%d,\"vector_elements\":%d,\"vector_bytes\":%d,"
            "\"accesses_per_thread\":%lld,\"warps\":%d,\"sectors\":%lld,\"sectors_min\":%lld,"
            "\"bank_ways\":%lld,\"bank_ways_min\":%lld,\"bank_ways_max\":%lld}",
            rep->element_bytes, rep->vector_y_dim, rep->vector_elems, rep->vector_bytes,
            rep->accesses_per_thread, rep->warps, rep->sectors_total, rep->sectors_min_total,
            rep->bank_ways_total, rep->bank_ways_min_total, rep->bank_ways_max);
    }
    printf("}\n");
}

/* Rows x cols view of the tile: the last X dim is the column, the others the row. */
static void grid_shape(const ck_distribution *d, long long *rows, long long *cols)
{
    int nx = d->enc.ndim_x;
    *cols = d->x_lengths[nx - 1];
    *rows = d->tile_elements / *cols;
}

/* First holder (lowest thread id) and its register for every element; -1 when none. */
static int holders(const ck_distribution *d, long long **tid_out, long long **reg_out)
{
    long long n = d->tile_elements;
    long long *tid = malloc(sizeof *tid * (size_t)n), *reg = malloc(sizeof *reg * (size_t)n);
    if (!tid || !reg) {
        free(tid);
        free(reg);
        return -1;
    }
    for (long long i = 0; i < n; ++i)
        tid[i] = reg[i] = -1;
    for (long long t = 0; t < d->threads; ++t) {
        int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
        ck_dist_partition_index(d, t, p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            ck_dist_calculate_x(d, p, y, x);
            long long lin = 0;
            for (int i = 0; i < d->enc.ndim_x; ++i)
                lin = lin * d->x_lengths[i] + x[i];
            if (tid[lin] < 0) {
                tid[lin] = t;
                reg[lin] = r;
            }
        }
    }
    *tid_out = tid;
    *reg_out = reg;
    return 0;
}

static void print_text(const ck_distribution *d, const opts *o, const long long *tids,
                       long long ntid)
{
    const ck_dist_encoding *e = &d->enc;
    char buf[4096];
    if (ck_dist_encoding_format(e, buf, sizeof buf) == CK_SUCCESS)
        printf("encoding:  %s\n", buf);
    printf("X lengths: ");
    text_ints(d->x_lengths, e->ndim_x);
    printf("  (tile of %lld elements)\nY lengths: ", d->tile_elements);
    text_ints(d->y_lengths, e->ndim_y);
    printf("  (%lld elements per thread)\nP lengths: ", d->elements_per_thread);
    text_ints(d->p_lengths, e->ndim_p);
    printf("  (%lld threads)\nR lengths: ", d->threads);
    text_ints(e->r_lengths, e->ndim_r);
    printf("  (each element held by %lld thread%s)\n", d->replication,
           d->replication == 1 ? "" : "s");
    ck_dist_spans sp;
    ck_dist_get_spans(d, &sp);
    printf("spans:     ");
    for (int x = 0; x < e->ndim_x; ++x) {
        printf("%sX%d ", x ? ", " : "", x);
        text_ints(sp.lengths[x], sp.count[x]);
    }
    printf("\n");
    if (o->npsel) {
        for (long long i = 0; i < ntid; ++i) {
            int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
            ck_dist_partition_index(d, tids[i], p);
            printf("\nthread %lld, P = ", tids[i]);
            text_ints(p, e->ndim_p);
            printf(":\n");
            for (long long r = 0; r < d->elements_per_thread; ++r) {
                ck_dist_d_to_ys(d, r, y);
                ck_dist_calculate_x(d, p, y, x);
                printf("  d %-4lld Y ", r);
                text_ints(y, e->ndim_y);
                printf(" -> X ");
                text_ints(x, e->ndim_x);
                printf("\n");
            }
        }
        return;
    }
    long long rows, cols, *tid, *reg;
    grid_shape(d, &rows, &cols);
    if (cols > 64 || rows > 256) {
        printf("\nmap omitted: the tile is %lld x %lld; use --p, --json or --svg.\n", rows, cols);
        return;
    }
    if (holders(d, &tid, &reg))
        return;
    printf("\nmap: thread:register of each element%s (rows: ",
           d->replication > 1 ? " (lowest holder)" : "");
    for (int x = 0; x + 1 < e->ndim_x; ++x)
        printf("%sX%d", x ? "," : "", x);
    printf("%s, columns: X%d)\n", e->ndim_x > 1 ? "" : "-", e->ndim_x - 1);
    int width = snprintf(NULL, 0, "%lld:%lld", d->threads - 1, d->elements_per_thread - 1) + 1;
    printf("%6s", "");
    for (long long c = 0; c < cols; ++c)
        printf("%*lld", width, c);
    printf("\n");
    for (long long r = 0; r < rows; ++r) {
        printf("%5lld ", r);
        for (long long c = 0; c < cols; ++c) {
            char cell[48];
            snprintf(cell, sizeof cell, "%lld:%lld", tid[r * cols + c], reg[r * cols + c]);
            printf("%*s", width, cell);
        }
        printf("\n");
    }
    free(tid);
    free(reg);
}

static void print_check(const ck_distribution *d, const ck_access_layout *lay,
                        const ck_access_report *rep)
{
    printf("\ncheck: %d-byte elements, element strides [", rep->element_bytes);
    for (int i = 0; i < lay->ndim; ++i)
        printf("%s%lld", i ? ", " : "", lay->strides[i]);
    static const char *const modes[] = {"none", "32B", "64B", "128B"};
    printf("], element 0 at byte %lld, swizzle %s\n", lay->base_bytes, modes[lay->swizzle & 3]);
    if (rep->coverage_ok) {
        printf("  coverage:       ok, every element held by exactly %lld thread%s\n",
               rep->expected_holders, rep->expected_holders == 1 ? "" : "s");
    } else {
        printf("  coverage:       FAILED, element X ");
        text_ints(rep->first_bad_x, d->enc.ndim_x);
        printf(" is held by %lld threads, expected %lld\n", rep->first_bad_holders,
               rep->expected_holders);
    }
    if (rep->vector_y_dim >= 0)
        printf("  vectors:        %d elements (%d bytes) along Y%d\n", rep->vector_elems,
               rep->vector_bytes, rep->vector_y_dim);
    else
        printf("  vectors:        scalar (%d bytes)\n", rep->vector_bytes);
    printf("  accesses:       %lld per thread, %d warp%s\n", rep->accesses_per_thread, rep->warps,
           rep->warps == 1 ? "" : "s");
    printf("  global memory:  %lld sectors, minimum %lld (%.1f%% efficiency)\n", rep->sectors_total,
           rep->sectors_min_total,
           rep->sectors_total ? 100.0 * (double)rep->sectors_min_total / (double)rep->sectors_total
                              : 100.0);
    printf("  shared memory:  %lld wavefronts, minimum %lld; worst access %lld-way\n",
           rep->bank_ways_total, rep->bank_ways_min_total, rep->bank_ways_max);
    printf("  per access of warp 0:\n    access  sectors  min  bank-ways  min\n");
    for (long long i = 0; i < rep->num_stats; ++i) {
        const ck_access_stat *s = &rep->stats[i];
        if (s->warp == 0 && s->access < 16)
            printf("    %6lld  %7lld  %3lld  %9lld  %3lld\n", s->access, s->sectors, s->sectors_min,
                   s->bank_ways, s->bank_ways_min);
    }
    if (rep->accesses_per_thread > 16)
        printf("    ... %lld more accesses (--json gives the totals)\n",
               rep->accesses_per_thread - 16);
}

int cmd_dist_svg(const ck_distribution *d, const char *path); /* tools/dist_svg.c */

static int make_pattern(const char *kind, long long block, long long rows, long long cols,
                        long long vec, ck_dist_encoding *e)
{
    ck_dist_pattern pat;
    if (strncmp(kind, "thread", 6) == 0)
        pat = CK_DIST_THREAD_RAKED;
    else if (strncmp(kind, "warp", 4) == 0)
        pat = CK_DIST_WARP_RAKED;
    else if (strncmp(kind, "block", 5) == 0)
        pat = CK_DIST_BLOCK_RAKED;
    else
        return cli_usage_error("dist", "unknown --pattern '%s'; accepted: thread, warp, block",
                               kind);
    if (block < 0 || block > 1024 || rows < 0 || rows > 1 << 20 || cols < 0 || cols > 1 << 20 ||
        vec < 0 || vec > 1 << 20)
        return cli_usage_error("dist", "--block, --tile or --vector is out of range");
    if (ck_dist_make_2d_pattern(pat, (int)block, (int)rows, (int)cols, (int)vec, e) != CK_SUCCESS)
        return cli_library_error("dist");
    return CK_EXIT_OK;
}

int ck_cmd_dist(int argc, char **argv)
{
    static opts o;
    memset(&o, 0, sizeof o);
    o.element_bytes = 4;
    char text[16384] = "";
    size_t tlen = 0;
    const char *p_args[64];
    int np_args = 0, have_enc = 0;
    const char *pattern = NULL;
    long long block = 256, rows = 0, cols = 0, vec = 1;
    ck_dist_encoding enc;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(usage, stdout);
            return CK_EXIT_OK;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--check") == 0) {
            o.check = 1;
        } else if (strcmp(a, "--p") == 0 || strcmp(a, "--dtype") == 0 ||
                   strcmp(a, "--strides") == 0 || strcmp(a, "--svg") == 0 ||
                   strcmp(a, "--base") == 0 || strcmp(a, "--swizzle") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("dist", "option '%s' needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--p") == 0) {
                if (np_args >= 64)
                    return cli_usage_error("dist", "at most 64 --p options");
                p_args[np_args++] = v;
            } else if (strcmp(a, "--dtype") == 0) {
                if ((o.element_bytes = dtype_bytes(v)) < 0)
                    return cli_usage_error("dist",
                                           "unknown --dtype '%s'; accepted: f64 f32 f16 bf16 "
                                           "f8 i8 i16 i32 i64 or a size in bytes (1 to 64)",
                                           v);
            } else if (strcmp(a, "--strides") == 0) {
                int n = parse_ints(v, o.layout.strides, CK_DIST_MAX_X);
                if (n < 1)
                    return cli_usage_error("dist",
                                           "--strides wants comma-separated integers, got '%s'", v);
                o.layout.ndim = n;
                o.have_strides = 1;
            } else if (strcmp(a, "--base") == 0) {
                long long b;
                if (parse_ints(v, &b, 1) != 1)
                    return cli_usage_error("dist", "--base wants an integer, got '%s'", v);
                o.layout.base_bytes = b;
            } else if (strcmp(a, "--swizzle") == 0) {
                static const char *const modes[] = {"none", "32B", "64B", "128B"};
                int m = -1;
                for (int k = 0; k < 4; ++k)
                    if (strcasecmp(v, modes[k]) == 0)
                        m = k;
                if (m < 0)
                    return cli_usage_error(
                        "dist", "unknown --swizzle '%s'; accepted: none, 32B, 64B, 128B", v);
                o.layout.swizzle = (ck_nv_swizzle)m;
            } else {
                o.svg = v;
            }
        } else if (strcmp(a, "--pattern") == 0 || strcmp(a, "--block") == 0 ||
                   strcmp(a, "--tile") == 0 || strcmp(a, "--vector") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("dist", "option '%s' needs a value", a);
            const char *v = argv[++i];
            long long n;
            if (strcmp(a, "--pattern") == 0)
                pattern = v;
            else if (strcmp(a, "--tile") == 0) {
                char tail;
                if (sscanf(v, "%lldx%lld%c", &rows, &cols, &tail) != 2)
                    return cli_usage_error("dist", "--tile wants ROWSxCOLS, got '%s'", v);
            } else if (parse_ints(v, &n, 1) != 1) {
                return cli_usage_error("dist", "%s wants an integer, got '%s'", a, v);
            } else if (strcmp(a, "--block") == 0) {
                block = n;
            } else {
                vec = n;
            }
        } else if (a[0] == '-' && a[1] == '-') {
            return cli_usage_error("dist", "unknown option '%s'", a);
        } else {
            size_t n = strlen(a);
            if (tlen + n + 2 > sizeof text)
                return cli_usage_error("dist", "the encoding text is too long");
            if (tlen)
                text[tlen++] = ' ';
            memcpy(text + tlen, a, n + 1);
            tlen += n;
        }
    }
    if (pattern) {
        int rc = make_pattern(pattern, block, rows, cols, vec, &enc);
        if (rc != CK_EXIT_OK)
            return rc;
        have_enc = 1;
    }
    if (have_enc && tlen)
        return cli_usage_error("dist", "give either ENCODING or --pattern, not both");
    if (!have_enc) {
        if (!tlen)
            return cli_usage_error("dist", "missing ENCODING");
        if (ck_dist_encoding_parse(text, &enc) != CK_SUCCESS)
            return cli_library_error("dist");
    }
    ck_distribution d;
    if (ck_dist_make(&enc, &d) != CK_SUCCESS)
        return cli_library_error("dist");
    for (int k = 0; k < np_args; ++k) {
        long long v[CK_DIST_MAX_P];
        int n = parse_ints(p_args[k], v, CK_DIST_MAX_P);
        if (n != d.enc.ndim_p)
            return cli_usage_error("dist",
                                   "--p '%s' must give %d comma-separated integers (one per P dim)",
                                   p_args[k], d.enc.ndim_p);
        for (int j = 0; j < n; ++j) {
            if (v[j] < 0 || v[j] >= d.p_lengths[j])
                return cli_usage_error("dist", "--p '%s': P%d = %lld is outside [0, %d)", p_args[k],
                                       j, v[j], d.p_lengths[j]);
            o.psel[o.npsel][j] = (int)v[j];
        }
        ++o.npsel;
    }
    if (d.threads * d.elements_per_thread > (1LL << 24))
        return cli_usage_error("dist",
                               "the distribution has %lld (thread, element) pairs; at most 2^24 "
                               "are listed",
                               d.threads * d.elements_per_thread);
    long long *tids = malloc(sizeof *tids * (size_t)(d.threads > 64 ? d.threads : 64));
    if (!tids)
        return CK_EXIT_FAILURE;
    long long ntid = thread_list(&d, &o, tids);
    ck_access_report rep, *repp = NULL;
    if (o.check) {
        if (!o.have_strides) {
            o.layout.ndim = d.enc.ndim_x;
            long long s = 1;
            for (int x = d.enc.ndim_x - 1; x >= 0; --x) {
                o.layout.strides[x] = s;
                s *= d.x_lengths[x];
            }
        }
        if (ck_access_check(&d, &o.layout, o.element_bytes, NULL, &rep) != CK_SUCCESS) {
            free(tids);
            return cli_library_error("dist");
        }
        repp = &rep;
    }
    if (o.json)
        print_json(&d, tids, ntid, repp);
    else
        print_text(&d, &o, tids, ntid);
    if (repp && !o.json)
        print_check(&d, &o.layout, repp);
    int rc = CK_EXIT_OK;
    if (o.svg && cmd_dist_svg(&d, o.svg) != 0)
        rc = CK_EXIT_FAILURE;
    if (repp)
        ck_access_report_free(repp);
    free(tids);
    return rc;
}
