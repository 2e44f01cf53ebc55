/* ck dist: show, map, verify and draw a tile distribution encoding given in CK's spelling. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ck/tile.h"
#include "cli.h"
#include "dist_cmd.h"

static const char usage[] =
    "Usage: ck dist [OPTIONS] ENCODING\n"
    "       ck dist --pattern thread|warp|block --block N --tile ROWSxCOLS --vector V [OPTIONS]\n"
    "       ck dist --mma INSTRUCTION [--operand a|b|c] [OPTIONS]   |   ck dist --mma list\n\n"
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
    "                    (P, Y)), traits (CK's load/store traits: vector dim and width,\n"
    "                    accesses, access order, for the descriptor and dtype) and check\n"
    "                    (with --check)\n"
    "  --p P0,P1,...     only the thread with this partition index (repeatable)\n"
    "  --check           verify coverage, vector width, global-memory sectors per warp access\n"
    "                    and shared-memory bank conflicts (32 lanes, 32 banks of 4 bytes,\n"
    "                    32-byte sectors)\n"
    "  --dtype T         element type for --check and the traits: a type of `ck types` (f32,\n"
    "                    f16, bf16, fp8e4m3, fp4e2m1, i8, ...; default f32), i16, i64, or a\n"
    "                    size in bytes\n"
    "  --desc 'DESC'     the tensor descriptor of the tile in `ck desc` syntax (see\n"
    "                    ck desc --help), e.g. 'naive(lengths=[64,64], strides=[72,1])' or\n"
    "                    '... | pad(dim=1, left=0, right=4)'; its dims are the X dims with\n"
    "                    the X lengths. --check then uses its offsets, masks accesses to\n"
    "                    padding and takes the vectors of the load/store traits\n"
    "  --strides S0,...  element strides of a plain layout instead of --desc (default packed\n"
    "                    row-major); vectors: the widest aligned one on a stride-1 X dim\n"
    "  --base BYTES      byte address of element 0 for alignment (default 0)\n"
    "  --swizzle MODE    NVIDIA shared-memory swizzle of the layout for --check: none, 32B,\n"
    "                    64B or 128B (16-byte chunks XORed with the 128-byte row index)\n"
    "  --adaptor         also print CK's construction: the ps_ys_to_xs adaptor (top dims P0...\n"
    "                    then Y0..., bottom dims X0...) and the ys_to_d descriptor\n"
    "  --svg FILE        draw the tile: cells coloured by warp, labelled with lane and register\n"
    "  --pattern KIND    generate CK's 2-D encoding pattern (thread, warp or block raked) from\n"
    "                    --block (default 256), --tile and --vector (default 1) instead of\n"
    "                    giving ENCODING\n"
    "  --mma INSTR       the register layout of a tensor-core instruction's operand (CK's\n"
    "                    warp-GEMM attribute), e.g. wgmma.m64n256k16.f32.bf16 or\n"
    "                    mma.m16n8k16.f32.f16: X = (rows, cols) of the operand tile (A: MxK,\n"
    "                    B: KxN, C: MxN), P = lane (mma) or (warp, lane) (wgmma), register d =\n"
    "                    element d (two 16-bit elements per 32-bit register: d, d+1);\n"
    "                    prints the encoding in CK's spelling first. --mma list lists them\n"
    "  --operand OP      a, b or c (default c, the accumulator)\n";

/* Comma-separated integers into v (at most cap); returns the count, -2 for more than cap, or
 * -1 (also for a value beyond 64 bits, which strtoll would clamp). */
static int parse_ints(const char *s, long long *v, int cap)
{
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (end == s || errno == ERANGE)
            return -1;
        if (n >= cap)
            return -2;
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

/* Threads to list: the selected ones, or all. Returns the count; tid[] filled. */
static long long thread_list(const ck_distribution *d, const dist_opts *o, long long *tid)
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

/* --dtype: a ck_dtype name, or one of the old byte-size names / a size in bytes. Returns 0 or
 * -1. A size of 1, 2, 4 or 8 bytes stands for a type of that size for the traits. */
static int parse_dtype(const char *t, dist_opts *o)
{
    ck_dtype dt;
    if (ck_dtype_from_name(t, &dt) == CK_SUCCESS) {
        int bits = ck_dtype_get(dt)->storage_bits;
        o->dtype = dt;
        o->have_dtype = 1;
        o->element_bytes = bits % 8 ? 0 : bits / 8; /* 0: sub-byte, refused by --check */
        return 0;
    }
    int b = dtype_bytes(t);
    if (b < 0)
        return -1;
    o->element_bytes = b;
    o->have_dtype = b == 1 || b == 2 || b == 4 || b == 8;
    o->dtype = b == 1 ? CK_DTYPE_I8 : b == 2 ? CK_DTYPE_F16 : b == 4 ? CK_DTYPE_F32 : CK_DTYPE_F64;
    return 0;
}

/* The descriptor for the traits and --desc checks: --desc, or naive over the layout strides. */
static int build_desc(const ck_distribution *d, const dist_opts *o, ck_expr_arena **ctx,
                      ck_descriptor **desc)
{
    if (o->desc_text) {
        if (ck_expr_arena_create(ctx) != CK_SUCCESS ||
            ck_descriptor_parse(o->desc_text, *ctx, desc) != CK_SUCCESS)
            return cli_library_error("dist");
        if (!ck_descriptor_is_concrete(*desc))
            return cli_usage_error("dist",
                                   "--desc '%s' has symbolic sizes; give numbers (the window "
                                   "of one tile)",
                                   o->desc_text);
        return CK_EXIT_OK;
    }
    ck_ival len[CK_DIST_MAX_X], str[CK_DIST_MAX_X];
    for (int x = 0; x < d->enc.ndim_x; ++x) {
        len[x] = ck_ival_int(d->x_lengths[x]);
        str[x] = ck_ival_int(o->layout.strides[x]);
    }
    if (ck_descriptor_make_naive(d->enc.ndim_x, len, str, desc) != CK_SUCCESS)
        *desc = NULL; /* no traits for this layout */
    return CK_EXIT_OK;
}

/* --adaptor: the ps_ys_to_xs adaptor and the ys_to_d descriptor, as tile.h prints them. */
static int print_construction(const ck_distribution *d)
{
    ck_adaptor *a = NULL;
    ck_descriptor *yd = NULL;
    char *as = NULL, *ds = NULL;
    int rc = -1;
    if (ck_dist_make_ps_ys_to_xs_adaptor(d, &a) == CK_SUCCESS &&
        ck_dist_make_ys_to_d_descriptor(d, &yd) == CK_SUCCESS &&
        ck_adaptor_to_string(a, &as) == CK_SUCCESS &&
        ck_descriptor_to_string(yd, &ds) == CK_SUCCESS) {
        printf("\nps_ys_to_xs %s\nys_to_d %s", as, ds);
        rc = 0;
    }
    ck_tile_free(as);
    ck_tile_free(ds);
    ck_adaptor_destroy(a);
    ck_descriptor_destroy(yd);
    return rc;
}

static int run_check(const ck_distribution *d, dist_opts *o, const ck_descriptor *desc,
                     ck_access_report *rep)
{
    if (o->desc_text) {
        if (ck_access_check_desc(d, desc, o->dtype, o->layout.base_bytes, o->layout.swizzle, NULL,
                                 rep) != CK_SUCCESS)
            return cli_library_error("dist");
        return CK_EXIT_OK;
    }
    if (o->element_bytes < 1)
        return cli_usage_error("dist",
                               "--check counts whole bytes; %s elements take %d bits (its "
                               "vectors are in --json's traits)",
                               ck_dtype_name(o->dtype), ck_dtype_get(o->dtype)->storage_bits);
    if (ck_access_check(d, &o->layout, o->element_bytes, NULL, rep) != CK_SUCCESS)
        return cli_library_error("dist");
    return CK_EXIT_OK;
}

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
    if (block < 1 || block > 1024)
        return cli_usage_error("dist", "--block %lld is out of range; accepted: 1 to 1024 threads.",
                               block);
    if (rows < 1 || rows > 1 << 20 || cols < 1 || cols > 1 << 20)
        return cli_usage_error("dist",
                               "--tile %lldx%lld is out of range; accepted: ROWSxCOLS with each "
                               "from 1 to 1048576.",
                               rows, cols);
    if (vec < 1 || vec > 1 << 20)
        return cli_usage_error("dist", "--vector %lld is out of range; accepted: 1 to 1048576.",
                               vec);
    if (ck_dist_make_2d_pattern(pat, (int)block, (int)rows, (int)cols, (int)vec, e) != CK_SUCCESS)
        return cli_library_error("dist");
    return CK_EXIT_OK;
}

/* --mma list: the supported spellings (N: any multiple of 8 up to 256). */
static int print_mma_list(void)
{
    const char *names[64];
    int n = ck_mma_spellings(names, 64);
    for (int i = 0; i < n && i < 64; ++i)
        printf("%s\n", names[i]);
    printf("(N: any multiple of 8 in 8..256; operands a, b, c; wgmma's b is in shared memory)\n");
    return CK_EXIT_OK;
}

int ck_cmd_dist(int argc, char **argv)
{
    static dist_opts o;
    memset(&o, 0, sizeof o);
    o.element_bytes = 4;
    o.have_dtype = 1;
    o.dtype = CK_DTYPE_F32;
    char text[16384] = "";
    size_t tlen = 0;
    const char *p_args[64];
    int np_args = 0, have_enc = 0, show_adaptor = 0;
    const char *pattern = NULL, *mma = NULL;
    int operand = CK_MMA_C;
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
        } else if (strcmp(a, "--adaptor") == 0) {
            show_adaptor = 1;
        } else if (strcmp(a, "--p") == 0 || strcmp(a, "--dtype") == 0 ||
                   strcmp(a, "--strides") == 0 || strcmp(a, "--svg") == 0 ||
                   strcmp(a, "--base") == 0 || strcmp(a, "--swizzle") == 0 ||
                   strcmp(a, "--desc") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("dist", "option '%s' needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--p") == 0) {
                if (np_args >= 64)
                    return cli_usage_error("dist", "at most 64 --p options");
                p_args[np_args++] = v;
            } else if (strcmp(a, "--dtype") == 0) {
                if (parse_dtype(v, &o) < 0)
                    return cli_usage_error("dist",
                                           "unknown --dtype '%s'; accepted: the types of `ck "
                                           "types` (f32 f16 bf16 fp8e4m3 fp4e2m1 i8 ...), i16, "
                                           "i64 or a size in bytes (1 to 64)",
                                           v);
            } else if (strcmp(a, "--desc") == 0) {
                o.desc_text = v;
            } else if (strcmp(a, "--strides") == 0) {
                int n = parse_ints(v, o.layout.strides, CK_DIST_MAX_X);
                if (n < 1)
                    return cli_usage_error(
                        "dist", "--strides wants comma-separated 64-bit integers, got '%s'", v);
                o.layout.ndim = n;
                o.have_strides = 1;
            } else if (strcmp(a, "--base") == 0) {
                long long b;
                if (parse_ints(v, &b, 1) != 1)
                    return cli_usage_error("dist", "--base wants a 64-bit integer, got '%s'", v);
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
        } else if (strcmp(a, "--mma") == 0 || strcmp(a, "--operand") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("dist", "option '%s' needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--mma") == 0)
                mma = v;
            else if (strcasecmp(v, "a") == 0 || strcasecmp(v, "b") == 0 ||
                     strcasecmp(v, "c") == 0 || strcasecmp(v, "d") == 0)
                operand = tolower((unsigned char)v[0]) == 'a'   ? CK_MMA_A
                          : tolower((unsigned char)v[0]) == 'b' ? CK_MMA_B
                                                                : CK_MMA_C;
            else
                return cli_usage_error("dist", "unknown --operand '%s'; accepted: a, b, c", v);
        } else if (strcmp(a, "--pattern") == 0 || strcmp(a, "--block") == 0 ||
                   strcmp(a, "--tile") == 0 || strcmp(a, "--vector") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("dist", "option '%s' needs a value", a);
            const char *v = argv[++i];
            long long n;
            if (strcmp(a, "--pattern") == 0)
                pattern = v;
            else if (strcmp(a, "--tile") == 0) {
                char rtext[32];
                const char *x = strchr(v, 'x');
                if (!x || (size_t)(x - v) >= sizeof rtext)
                    return cli_usage_error("dist", "--tile wants ROWSxCOLS, got '%s'", v);
                memcpy(rtext, v, (size_t)(x - v));
                rtext[x - v] = '\0';
                if (parse_ints(rtext, &rows, 1) != 1 || parse_ints(x + 1, &cols, 1) != 1)
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
    if (mma && strcmp(mma, "list") == 0)
        return print_mma_list();
    if (mma && (pattern || tlen))
        return cli_usage_error("dist", "give one of ENCODING, --pattern and --mma");
    if (mma) {
        if (ck_mma_encoding(mma, (ck_mma_operand)operand, &enc) != CK_SUCCESS)
            return cli_library_error("dist");
        have_enc = 1;
        if (!o.json) /* the text output goes on with the encoding in CK's spelling */
            printf("%s, operand %c\n", mma, "ABC"[operand]);
    }
    if (pattern) {
        int rc = make_pattern(pattern, block, rows, cols, vec, &enc);
        if (rc != CK_EXIT_OK)
            return rc;
        have_enc = 1;
    }
    if (o.desc_text && o.have_strides)
        return cli_usage_error("dist", "give either --desc or --strides, not both");
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
        if (n == -1)
            return cli_usage_error("dist", "--p '%s': expected comma-separated 64-bit integers",
                                   p_args[k]);
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
    if (o.have_strides && o.layout.ndim != d.enc.ndim_x) {
        free(tids);
        return cli_usage_error("dist",
                               "--strides gives %d strides but the distribution has %d X dims",
                               o.layout.ndim, d.enc.ndim_x);
    }
    if (!o.have_strides) {
        o.layout.ndim = d.enc.ndim_x;
        long long s = 1;
        for (int x = d.enc.ndim_x - 1; x >= 0; --x) {
            o.layout.strides[x] = s;
            s *= d.x_lengths[x];
        }
    }
    ck_expr_arena *ctx = NULL;
    ck_descriptor *desc = NULL;
    ck_access_report rep, *repp = NULL;
    ck_load_store_traits traits, *tp = NULL;
    int rc = build_desc(&d, &o, &ctx, &desc);
    if (rc == CK_EXIT_OK && desc && o.have_dtype) {
        if (ck_load_store_traits_make(&d.enc, desc, o.dtype, &traits) == CK_SUCCESS)
            tp = &traits;
        else if (o.desc_text)
            rc = cli_library_error("dist");
    }
    if (rc == CK_EXIT_OK && o.check && (rc = run_check(&d, &o, desc, &rep)) == CK_EXIT_OK)
        repp = &rep;
    if (rc == CK_EXIT_OK) {
        if (o.json)
            dist_print_json(&d, tids, ntid, repp, tp);
        else
            dist_print_text(&d, &o, tids, ntid);
        if (show_adaptor && !o.json && print_construction(&d) != 0)
            rc = cli_library_error("dist");
        if (repp && !o.json)
            dist_print_check(&d, &o, repp, tp);
        if (o.svg && cmd_dist_svg(&d, o.svg) != 0)
            rc = CK_EXIT_FAILURE;
    }
    if (repp)
        ck_access_report_free(repp);
    ck_descriptor_destroy(desc);
    ck_expr_arena_destroy(ctx);
    free(tids);
    return rc;
}
