/* Convolution options of `ck prof conv` and `ck desc --conv`, and `ck desc --conv` itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile.h"
#include "cli.h"
#include "conv_cli.h"
#include "prof.h"

const char conv_cli_help[] =
    "  --dir fwd|bwd-data|bwd-weight   direction (default fwd)\n"
    "  --n N --g G --c C --k K         batch, groups, input and output channels (totals)\n"
    "  --w W | --hw HxW | --dhw DxHxW  input spatial lengths (1-, 2- or 3-D)\n"
    "  --x X | --yx YxX | --zyx ZxYxX  filter lengths (same count)\n"
    "  --stride S[xS..] --dilation D[xD..]  per dim (one value: every dim)\n"
    "  --pad P[xP..]                   symmetric padding; --pad-left / --pad-right per side\n"
    "  --dtype f32|f16|bf16|e4m3|e5m2|i8  inputs (default bf16); --out-dtype T the written\n"
    "                                  tensor: Y (forward); with 8-bit inputs also dX / dW\n"
    "                                  (default: the input type, i32 for i8)\n"
    "  --bias --residual --act relu|silu|sigmoid|gelu   forward epilogue\n";

/* fill `dst` from "AxB..." with count values (1 value: every dim) */
static int spatial(const char *sub, const char *opt, const char *v, int ndim, int64_t *dst,
                   long long lo)
{
    long long vals[3];
    int n = prof_parse_list(v, vals, 3, lo, 1LL << 31);
    if (n == 0 || (n != 1 && n != ndim))
        return cli_usage_error(sub, "%s '%s': expected %d value(s) >= %lld separated by 'x'", opt,
                               v, ndim, lo),
               -1;
    for (int d = 0; d < ndim; ++d)
        dst[d] = vals[n == 1 ? 0 : d];
    return 1;
}

int conv_cli_option(const char *sub, int argc, char **argv, int *i, ck_conv_problem *p)
{
    const char *a = argv[*i];
    static const char *const flags[] = {"--bias", "--residual"};
    if (strcmp(a, flags[0]) == 0)
        return p->bias = 1, 1;
    if (strcmp(a, flags[1]) == 0)
        return p->residual = 1, 1;
    static const char *const with_value[] = {
        "--dir",      "--n",         "--g",     "--c",         "--k",      "--w",        "--hw",
        "--dhw",      "--x",         "--yx",    "--zyx",       "--stride", "--dilation", "--pad",
        "--pad-left", "--pad-right", "--dtype", "--out-dtype", "--act"};
    int known = 0;
    for (size_t j = 0; j < sizeof with_value / sizeof with_value[0]; ++j)
        known |= strcmp(a, with_value[j]) == 0;
    if (!known)
        return 0;
    if (*i + 1 >= argc)
        return cli_usage_error(sub, "option '%s' needs a value", a), -1;
    const char *v = argv[++*i];
    long long x;
    if (strcmp(a, "--dir") == 0) {
        if (strcmp(v, "fwd") == 0)
            p->direction = CK_CONV_FWD;
        else if (strcmp(v, "bwd-data") == 0)
            p->direction = CK_CONV_BWD_DATA;
        else if (strcmp(v, "bwd-weight") == 0)
            p->direction = CK_CONV_BWD_WEIGHT;
        else
            return cli_usage_error(sub, "--dir '%s': expected fwd, bwd-data or bwd-weight", v), -1;
        return 1;
    }
    if (!strcmp(a, "--n") || !strcmp(a, "--g") || !strcmp(a, "--c") || !strcmp(a, "--k")) {
        if (prof_parse_list(v, &x, 1, 1, 1LL << 31) != 1)
            return cli_usage_error(sub, "%s '%s': expected a whole number >= 1", a, v), -1;
        int64_t *f = a[2] == 'n' ? &p->n : a[2] == 'g' ? &p->g : a[2] == 'c' ? &p->c : &p->k;
        *f = x;
        return 1;
    }
    if (!strcmp(a, "--w") || !strcmp(a, "--hw") || !strcmp(a, "--dhw")) {
        p->ndim = (int)strlen(a) - 2;
        return spatial(sub, a, v, p->ndim, p->in, 1);
    }
    if (!strcmp(a, "--x") || !strcmp(a, "--yx") || !strcmp(a, "--zyx"))
        return spatial(sub, a, v, (int)strlen(a) - 2, p->filter, 1);
    if (!strcmp(a, "--stride"))
        return spatial(sub, a, v, p->ndim, p->stride, 0);
    if (!strcmp(a, "--dilation"))
        return spatial(sub, a, v, p->ndim, p->dilation, 0);
    if (!strcmp(a, "--pad")) {
        int r = spatial(sub, a, v, p->ndim, p->pad_left, 0);
        memcpy(p->pad_right, p->pad_left, sizeof p->pad_left);
        return r;
    }
    if (!strcmp(a, "--pad-left"))
        return spatial(sub, a, v, p->ndim, p->pad_left, 0);
    if (!strcmp(a, "--pad-right"))
        return spatial(sub, a, v, p->ndim, p->pad_right, 0);
    if (!strcmp(a, "--act")) {
        static const char *const names[] = {"none", "relu", "gelu", "gelu-erf", "silu", "sigmoid"};
        for (int j = 0; j < 6; ++j)
            if (!strcmp(v, names[j]))
                return p->activation = (ck_gemm_activation)j, 1;
        return cli_usage_error(sub,
                               "--act '%s': expected none, relu, gelu, gelu-erf, silu, sigmoid", v),
               -1;
    }
    ck_dtype t = !strcmp(v, "f32")    ? CK_DTYPE_F32
                 : !strcmp(v, "f16")  ? CK_DTYPE_F16
                 : !strcmp(v, "bf16") ? CK_DTYPE_BF16
                 : !strcmp(v, "e4m3") ? CK_DTYPE_FP8_E4M3
                 : !strcmp(v, "e5m2") ? CK_DTYPE_FP8_E5M2
                 : !strcmp(v, "i8")   ? CK_DTYPE_I8
                 : !strcmp(v, "i32")  ? CK_DTYPE_I32
                                      : CK_DTYPE_COUNT;
    if (t == CK_DTYPE_COUNT || (t == CK_DTYPE_I32 && !strcmp(a, "--dtype")))
        return cli_usage_error(sub, "%s '%s': expected f32, f16, bf16, e4m3, e5m2, i8%s", a, v,
                               strcmp(a, "--dtype") ? " or i32" : ""),
               -1;
    if (!strcmp(a, "--dtype")) {
        if (p->out_dtype == p->in_dtype)
            p->out_dtype = t;
        p->in_dtype = p->wei_dtype = t;
    } else {
        p->out_dtype = t;
    }
    return 1;
}

static int is_8bit(ck_dtype t)
{
    return t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2 || t == CK_DTYPE_I8;
}

void conv_cli_finish(ck_conv_problem *p)
{
    if (!is_8bit(p->in_dtype))
        return;
    /* out_dtype holds --out-dtype, or the input type when none was given */
    ck_dtype w =
        p->out_dtype == p->in_dtype && p->in_dtype == CK_DTYPE_I8 ? CK_DTYPE_I32 : p->out_dtype;
    if (p->direction == CK_CONV_FWD) {
        p->out_dtype = w;
    } else {
        p->out_dtype = p->in_dtype; /* dY is read */
        if (p->direction == CK_CONV_BWD_DATA)
            p->in_dtype = w;
        else
            p->wei_dtype = w;
    }
}

/* "AxBxC" of the first n values */
static size_t dims_str(char *buf, size_t size, const char *label, const int64_t *v, int n)
{
    size_t u = (size_t)snprintf(buf, size, "%s", label);
    for (int d = 0; d < n && u < size; ++d)
        u += (size_t)snprintf(buf + u, size - u, "%s%lld", d ? "x" : "", (long long)v[d]);
    return u;
}

void conv_cli_describe(const ck_conv_problem *p, char *buf, size_t size)
{
    static const char *const dirs[] = {"fwd", "bwd-data", "bwd-weight"};
    const char *dir = p->direction >= CK_CONV_FWD && p->direction <= CK_CONV_BWD_WEIGHT
                          ? dirs[p->direction]
                          : "?";
    size_t u = (size_t)snprintf(buf, size, "%s %d-D n%lld g%lld c%lld k%lld", dir, p->ndim,
                                (long long)p->n, (long long)p->g, (long long)p->c, (long long)p->k);
    int nd = p->ndim >= 1 && p->ndim <= 3 ? p->ndim : 1;
    const char *label[6] = {" in ", " filter ", " stride ", " dilation ", " pad ", "/"};
    const int64_t *v[6] = {p->in, p->filter, p->stride, p->dilation, p->pad_left, p->pad_right};
    for (int i = 0; i < 6 && u < size; ++i)
        u += dims_str(buf + u, size - u, label[i], v[i], nd);
    if (u < size && p->wei_dtype == p->in_dtype && p->out_dtype == p->in_dtype)
        snprintf(buf + u, size - u, " %s", ck_dtype_name(p->in_dtype));
    else if (u < size) /* X/W/Y types */
        snprintf(buf + u, size - u, " %s/%s/%s", ck_dtype_name(p->in_dtype),
                 ck_dtype_name(p->wei_dtype), ck_dtype_name(p->out_dtype));
}

int ck_cmd_desc_conv(int argc, char **argv)
{
    ck_conv_problem p;
    ck_conv_problem_init(&p);
    p.ndim = 2;
    int64_t at[16][2];
    int nat = 0;
    for (int i = 1; i < argc; ++i) {
        if (cli_is_help(argv[i])) {
            printf("Usage: ck desc --conv [options] [--at M,K]...\n\nPrint the im2col descriptor "
                   "(pad -> embed -> merge) of one group of a forward convolution:\nthe GEMM's A "
                   "operand, M = N * out, K = filter * C per group.\n\n%s",
                   conv_cli_help);
            return CK_EXIT_OK;
        }
        if (!strcmp(argv[i], "--conv"))
            continue;
        if (!strcmp(argv[i], "--at")) {
            long long v[2];
            if (i + 1 >= argc || nat >= 16 || prof_parse_list(argv[i + 1], v, 2, 0, 1LL << 40) != 2)
                return cli_usage_error("desc", "--at: expected M,K");
            at[nat][0] = v[0], at[nat][1] = v[1], ++nat, ++i;
            continue;
        }
        int r = conv_cli_option("desc", argc, argv, &i, &p);
        if (r < 0)
            return CK_EXIT_USAGE;
        if (r == 0)
            return cli_usage_error("desc", "unknown option '%s'", argv[i]);
    }
    ck_descriptor *d = NULL;
    char *s = NULL;
    if (ck_conv_im2col_descriptor(&p, &d) != CK_SUCCESS ||
        ck_descriptor_to_string(d, &s) != CK_SUCCESS) {
        ck_descriptor_destroy(d);
        return cli_library_error("desc");
    }
    char what[256];
    conv_cli_describe(&p, what, sizeof what);
    printf("im2col view of %s (one group)\n%s", what, s);
    int rc = CK_EXIT_OK;
    for (int k = 0; k < nat; ++k) {
        int64_t off = 0;
        int valid = 0;
        if (ck_descriptor_calculate_offset(d, at[k], &off) != CK_SUCCESS ||
            ck_descriptor_is_valid_index(d, at[k], &valid) != CK_SUCCESS) {
            rc = cli_library_error("desc");
            break;
        }
        printf("at [%lld, %lld]: offset %lld, %s\n", (long long)at[k][0], (long long)at[k][1],
               (long long)off, valid ? "valid" : "invalid (padding: reads zero)");
    }
    ck_tile_free(s);
    ck_descriptor_destroy(d);
    return rc;
}
