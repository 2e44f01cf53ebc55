/* ck desc: build a tensor descriptor from its textual form and print it, its
 * element space size, its vector guarantees and the offset/validity of given
 * coordinates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile.h"
#include "cli.h"
#include "conv_cli.h"

static const char usage[] =
    "Usage: ck desc 'DESCRIPTOR' [--at I,J,...]... [--bind NAME=V,...] [--sym "
    "NAME=MIN:MAX[:DIV]]...\n"
    "\n"
    "Build a tensor descriptor, print its stages, transforms, hidden ids and lengths, its\n"
    "element space size, the guaranteed vector length/stride of every dimension, the offset\n"
    "as a C expression of the indices i0, i1, ... with the padding conditions of validity,\n"
    "and the offset and validity of each --at coordinate.\n"
    "\n"
    "DESCRIPTOR is a base followed by stages separated by '|':\n"
    "  naive(lengths=[L0,L1,...], strides=[S0,S1,...])   offset = sum i_k * S_k\n"
    "  packed(lengths=[...])                             row-major, no gaps\n"
    "  aligned(lengths=[...], align=A)                   row stride rounded up to A\n"
    "Each stage applies one transform to the named visible dims; every other dim is kept\n"
    "(pass-through) in order, and the new dims take the place of the first consumed one\n"
    "(or position P with at=P):\n"
    "  pad(dim=D, left=A, right=B)      left_pad(dim=D, left=A)   right_pad(dim=D, right=B)\n"
    "  unmerge(dim=D, lengths=[...])    merge(dims=[D0,D1,...])   merge_magic(dims=[...])\n"
    "  embed(dim=D, lengths=[...], coefs=[...])                   slice(dim=D, begin=B, end=E)\n"
    "  offset(dim=D, offset=O[, length=L])  modulo(dim=D, length=L)  xor(dims=[D0,D1])\n"
    "  freeze(dim=D, value=V)           insert(length=L[, at=P])  replicate(lengths=[...][, "
    "at=P])\n"
    "  indexing(dim=D, table=[...])     pass_through(dim=D)       transpose(perm=[...])\n"
    "  (transpose: new dim k is old dim perm[k])\n"
    "Values are integers, symbols (M, K, lda, ...) or expressions of them with + - * / %\n"
    "and parentheses ('/' and '%' are floor division and modulo).\n"
    "\n"
    "Options:\n"
    "  --at I,J,...              a coordinate to evaluate (repeatable)\n"
    "  --bind NAME=V,...         values of the symbols (needed for --at when symbolic)\n"
    "  --sym NAME=MIN:MAX[:DIV]  declare a symbol's range and divisor (default 1:2^31-1:1)\n"
    "  --conv ...                the im2col descriptor of a convolution (ck desc --conv --help)\n"
    "\n"
    "Example:\n"
    "  ck desc 'naive(lengths=[4,8], strides=[8,1]) | pad(dim=1, left=1, right=2)' --at 1,2\n"
    "  ck desc 'naive(lengths=[M,K], strides=[lda,1]) | unmerge(dim=0, lengths=[M/4,4])' \\\n"
    "      --sym M=4:4096:4 --bind M=64,K=32,lda=40 --at 3,1,5\n";

enum { MAX_AT = 16, MAX_BIND = 32 };

static int parse_ints(const char *s, int64_t *v, int max, int *n)
{
    *n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (end == s || errno || *n >= max)
            return 0;
        v[(*n)++] = x;
        s = end;
        if (*s == ',')
            ++s;
        else if (*s)
            return 0;
    }
    return *n > 0;
}

static void print_vectors(const ck_descriptor *d)
{
    ck_vector_info vi[CK_TILE_MAX_HIDDEN];
    if (ck_descriptor_vector_info(d, vi) != CK_SUCCESS)
        return;
    printf("vector guarantees (aligned runs of LENGTH elements along a dim):\n");
    for (int i = 0; i < ck_descriptor_ndim(d); ++i) {
        if (vi[i].length == 1)
            printf("  dim %d: none (scalar access)\n", i);
        else if (vi[i].length == 0)
            if (vi[i].stride_known)
                printf("  dim %d: any length, offset stride %lld\n", i, (long long)vi[i].stride);
            else
                printf("  dim %d: any length, offset stride symbolic\n", i);
        else if (vi[i].stride_known)
            printf("  dim %d: length %lld, offset stride %lld%s\n", i, (long long)vi[i].length,
                   (long long)vi[i].stride, vi[i].stride == 1 ? " (contiguous)" : "");
        else
            printf("  dim %d: length %lld, offset stride symbolic\n", i, (long long)vi[i].length);
    }
}

/* The offset as an expression of symbolic indices i0, i1, ... and the padding
 * conditions of validity. */
static void print_offset_expr(const ck_descriptor *d, ck_expr_arena *ctx)
{
    int n = ck_descriptor_ndim(d);
    ck_ival idx[CK_TILE_MAX_HIDDEN], off;
    for (int i = 0; i < n; ++i) {
        char name[16];
        int64_t mn, mx;
        ck_ival_range(ck_descriptor_length(d, i), &mn, &mx);
        snprintf(name, sizeof name, "i%d", i);
        if (ck_expr_symbol(ctx, name, 0, mx == INT64_MAX ? mx : mx - 1, 1, &idx[i]) != CK_SUCCESS)
            return;
    }
    ck_index_condition conds[64];
    int nc = 0;
    if (ck_descriptor_calculate_offset_expr(d, idx, &off, conds, 64, &nc) != CK_SUCCESS) {
        printf("offset expression: not available (%s)\n", ck_last_error());
        return;
    }
    char buf[4096];
    ck_ival_print(off, buf, sizeof buf);
    printf("offset(");
    for (int i = 0; i < n; ++i)
        printf("%si%d", i ? ", " : "", i);
    printf(") = %s\n", buf);
    for (int c = 0; c < nc; ++c) {
        char lo[256], hi[256];
        ck_ival_print(conds[c].value, buf, sizeof buf);
        ck_ival_print(conds[c].lo, lo, sizeof lo);
        ck_ival_print(conds[c].hi, hi, sizeof hi);
        if (ck_ival_is_const(conds[c].lo) && conds[c].lo.v == INT64_MIN)
            printf("  valid only if %s < %s   (stage %d, transform %d)\n", buf, hi, conds[c].stage,
                   conds[c].transform);
        else if (ck_ival_is_const(conds[c].hi) && conds[c].hi.v == INT64_MAX)
            printf("  valid only if %s <= %s   (stage %d, transform %d)\n", lo, buf, conds[c].stage,
                   conds[c].transform);
        else
            printf("  valid only if %s <= %s < %s   (stage %d, transform %d)\n", lo, buf, hi,
                   conds[c].stage, conds[c].transform);
    }
}

int ck_cmd_desc(int argc, char **argv)
{
    const char *text = NULL;
    int64_t at[MAX_AT][CK_TILE_MAX_HIDDEN];
    int nat[MAX_AT], nats = 0;
    ck_binding bind[MAX_BIND];
    char bind_names[MAX_BIND][CK_TILE_MAX_SYMBOL_NAME + 1];
    int nbind = 0;
    const char *syms[MAX_BIND];
    int nsyms = 0;
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "--conv") == 0)
            return ck_cmd_desc_conv(argc, argv); /* tools/conv_cli.c */
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(usage, stdout);
            return CK_EXIT_OK;
        }
        if (strcmp(a, "--at") == 0 || strcmp(a, "--bind") == 0 || strcmp(a, "--sym") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("desc", "option '%s' needs a value", a);
            const char *v = argv[++i];
            if (a[2] == 'a') {
                if (nats >= MAX_AT || !parse_ints(v, at[nats], CK_TILE_MAX_HIDDEN, &nat[nats]))
                    return cli_usage_error("desc",
                                           "--at '%s': expected integers separated by commas "
                                           "(at most %d coordinates)",
                                           v, MAX_AT);
                ++nats;
            } else if (a[2] == 'b') {
                char buf[1024];
                snprintf(buf, sizeof buf, "%s", v);
                for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                    char *eq = strchr(tok, '='), *end;
                    if (!eq || eq == tok || (size_t)(eq - tok) > CK_TILE_MAX_SYMBOL_NAME ||
                        nbind >= MAX_BIND)
                        return cli_usage_error("desc", "--bind '%s': expected NAME=VALUE,...", v);
                    *eq = '\0';
                    errno = 0;
                    long long x = strtoll(eq + 1, &end, 10);
                    if (end == eq + 1 || *end || errno)
                        return cli_usage_error("desc", "--bind: '%s' is not an integer", eq + 1);
                    snprintf(bind_names[nbind], sizeof bind_names[nbind], "%s", tok);
                    bind[nbind].name = bind_names[nbind];
                    bind[nbind].value = x;
                    ++nbind;
                }
            } else {
                if (nsyms >= MAX_BIND)
                    return cli_usage_error("desc", "too many --sym options");
                syms[nsyms++] = v;
            }
            continue;
        }
        if (a[0] == '-' && a[1] != '\0')
            return cli_usage_error("desc", "unknown option '%s'", a);
        if (text)
            return cli_usage_error("desc", "one DESCRIPTOR expected, got a second: '%s'", a);
        text = a;
    }
    if (!text)
        return cli_usage_error("desc", "missing DESCRIPTOR");

    ck_expr_arena *ctx = NULL;
    ck_descriptor *d = NULL, *bound = NULL;
    char *dump = NULL;
    int rc = CK_EXIT_OK;
    if (ck_expr_arena_create(&ctx) != CK_SUCCESS)
        return cli_library_error("desc");
    for (int i = 0; i < nsyms; ++i) {
        char name[CK_TILE_MAX_SYMBOL_NAME + 1];
        long long mn, mx, dv = 1;
        int n = sscanf(syms[i], "%63[A-Za-z0-9_]=%lld:%lld:%lld", name, &mn, &mx, &dv);
        ck_ival s;
        if (n < 3) {
            rc = cli_usage_error("desc", "--sym '%s': expected NAME=MIN:MAX[:DIV]", syms[i]);
            goto out;
        }
        if (ck_expr_symbol(ctx, name, mn, mx, dv, &s) != CK_SUCCESS) {
            rc = cli_library_error("desc");
            goto out;
        }
    }
    if (ck_descriptor_parse(text, ctx, &d) != CK_SUCCESS ||
        ck_descriptor_to_string(d, &dump) != CK_SUCCESS) {
        rc = cli_library_error("desc");
        goto out;
    }
    fputs(dump, stdout);
    print_vectors(d);
    print_offset_expr(d, ctx);
    const ck_descriptor *eval = d;
    if (nbind > 0) {
        if (ck_descriptor_bind(d, bind, nbind, &bound) != CK_SUCCESS) {
            rc = cli_library_error("desc");
            goto out;
        }
        ck_tile_free(dump);
        dump = NULL;
        char lens[512] = "";
        size_t used = 0;
        for (int i = 0; i < ck_descriptor_ndim(bound) && used < sizeof lens; ++i) {
            char one[128];
            ck_ival_print(ck_descriptor_length(bound, i), one, sizeof one);
            used += (size_t)snprintf(lens + used, sizeof lens - used, "%s%s", i ? ", " : "", one);
        }
        char es[128];
        ck_ival_print(ck_descriptor_element_space_size(bound), es, sizeof es);
        printf("bound: dims [%s], element space size %s\n", lens, es);
        print_vectors(bound);
        eval = bound;
    }
    if (nats > 0 && !ck_descriptor_is_concrete(eval)) {
        rc = cli_usage_error("desc", "the descriptor has symbols without values; give them with "
                                     "--bind NAME=VALUE,... to evaluate --at");
        goto out;
    }
    for (int k = 0; k < nats; ++k) {
        if (nat[k] != ck_descriptor_ndim(eval)) {
            rc = cli_usage_error("desc", "--at has %d values but the descriptor has %d dims",
                                 nat[k], ck_descriptor_ndim(eval));
            goto out;
        }
        int64_t off;
        int valid;
        if (ck_descriptor_calculate_offset(eval, at[k], &off) != CK_SUCCESS ||
            ck_descriptor_is_valid_index(eval, at[k], &valid) != CK_SUCCESS) {
            rc = cli_library_error("desc");
            goto out;
        }
        printf("at [");
        for (int i = 0; i < nat[k]; ++i)
            printf("%s%lld", i ? ", " : "", (long long)at[k][i]);
        printf("]: offset %lld, %s\n", (long long)off,
               valid ? "valid" : "invalid (padding or out of range)");
    }
out:
    ck_tile_free(dump);
    ck_descriptor_destroy(bound);
    ck_descriptor_destroy(d);
    ck_expr_arena_destroy(ctx);
    return rc;
}
