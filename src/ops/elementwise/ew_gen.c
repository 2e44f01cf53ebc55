/*
 * Generation of the copy/cast/elementwise kernels (device C).
 *
 * Every kernel is built around one generated element function
 *     CK_DEVICE <code> ew_f(<code> c0, ..., unsigned long long i)
 * from the input codes (storage bits) to the output code; i is the element's row-major index
 * (stochastic rounding's random word). Two layouts call it:
 *   - ck_ew_vec: every tensor contiguous and 16-byte aligned. A pack is V = 16 / (smallest
 *     storage size) consecutive elements: one 16-byte access of the smallest type, s/smin
 *     accesses of a type of size s. Each thread keeps `unroll` packs in flight (loads of all
 *     of them first, then the arithmetic, then streaming stores); the grid strides over packs;
 *     the last n % V elements are done by scalar code.
 *   - ck_ew_strided: any strides (rank <= 8 after collapsing); each thread handles the
 *     destination's pack (1 element, 2 for fp4, 4 for fp6) and decomposes the row-major index
 *     with divisions by the run-time lengths (32-bit when the problem fits).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/numeric_conv.h"
#include "gen/sbuf.h"
#include "ops/elementwise/ew_internal.h"

int ck_ew_elem_bytes(ck_dtype t)
{
    const ck_dtype_info *info = ck_dtype_get(t);
    return info && info->pack_elements == 1 ? info->pack_bytes : 0;
}

static int is_fast(ck_dtype t)
{
    return t == CK_DTYPE_F32 || t == CK_DTYPE_BF16 || t == CK_DTYPE_F16;
}

static int default_ovf(ck_dtype t)
{
    return ck_dtype_get(t)->default_overflow == CK_OVERFLOW_SATURATE ? CK_NC_SATURATE
                                                                     : CK_NC_NONSAT;
}

static const char *code_type(ck_dtype t)
{
    return ck_ew_elem_bytes(t) == 8 ? "uint64_t" : "uint32_t";
}

int ck_ew_vec_elems(const ew_spec *s)
{
    int smin = ck_ew_elem_bytes(s->out);
    for (int k = 0; k < s->nin; ++k)
        if (ck_ew_elem_bytes(s->in[k]) < smin)
            smin = ck_ew_elem_bytes(s->in[k]);
    return smin > 0 ? 16 / smin : 0;
}

char *ck_ew_key(const ew_spec *s)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "ew/%s/%s/out=%s/in=", s->mode == EW_MODE_CAST ? "cast" : "expr",
                   s->layout == EW_LAYOUT_VEC ? "vec" : "strided", ck_dtype_name(s->out));
    for (int k = 0; k < s->nin; ++k)
        ck_sbuf_printf(&b, "%s%s", k ? "," : "", ck_dtype_name(s->in[k]));
    if (s->mode == EW_MODE_CAST) {
        ck_sbuf_printf(&b, "/r=%d/o=%d/s=%a/seed=%llu", s->round, s->ovf, (double)s->scale,
                       (unsigned long long)s->seed);
    } else {
        ck_sbuf_printf(&b, "/f64=%d/p=", s->f64);
        for (int i = 0; i < s->prog->count; ++i) {
            const ck_ew_step *st = &s->prog->steps[i];
            ck_sbuf_printf(&b, "%d:%d:%a:%d;", (int)st->op, st->input, st->value, (int)st->dtype);
        }
    }
    if (s->layout == EW_LAYOUT_VEC) {
        ck_sbuf_printf(&b, "/alias=%d/u=%d/t=%d/cs=%d/i32=%d/b=", s->alias, s->unroll, s->block,
                       s->cs, s->idx32);
        for (int k = 0; k < s->nin; ++k)
            ck_sbuf_printf(&b, "%d", s->bmode[k]);
    }
    else
        ck_sbuf_printf(&b, "/rank=%d/i32=%d", s->rank, s->idx32);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- value <-> code in the compute type ------------------------------------------------- */
static void emit_load(ck_sbuf *b, int f64, ck_dtype t, const char *code)
{
    if (!f64) {
        if (t == CK_DTYPE_F32)
            ck_sbuf_printf(b, "ck_u32_as_f32(%s)", code);
        else if (t == CK_DTYPE_BF16)
            ck_sbuf_printf(b, "ck_fast_bf16_to_f32_canon(%s)", code);
        else if (t == CK_DTYPE_F16)
            ck_sbuf_printf(b, "ck_fast_f16_to_f32_canon(%s)", code);
        else
            ck_sbuf_printf(b, "ck_nc_to_f32(%d, %s)", (int)t, code);
    } else {
        if (t == CK_DTYPE_F64)
            ck_sbuf_printf(b, "ck_nc_bits_f64(%s)", code);
        else if (t == CK_DTYPE_F32)
            ck_sbuf_printf(b, "(double)ck_u32_as_f32(%s)", code);
        else if (t == CK_DTYPE_BF16)
            ck_sbuf_printf(b, "(double)ck_fast_bf16_to_f32_canon(%s)", code);
        else if (t == CK_DTYPE_F16)
            ck_sbuf_printf(b, "(double)ck_fast_f16_to_f32_canon(%s)", code);
        else
            ck_sbuf_printf(b, "ck_nc_to_f64(%d, %s)", (int)t, code);
    }
}

/* value -> code of type t (nearest even, t's default overflow). */
static void emit_store(ck_sbuf *b, int f64, ck_dtype t, const char *value)
{
    if (f64 && t == CK_DTYPE_F64)
        ck_sbuf_printf(b, "ck_nc_f64_bits(%s)", value);
    else if (!f64 && t == CK_DTYPE_F32)
        ck_sbuf_printf(b, "ck_f32_as_u32(%s)", value);
    else if (!f64 && t == CK_DTYPE_BF16)
        ck_sbuf_printf(b, "ck_fast_f32_to_bf16(%s)", value);
    else if (!f64 && t == CK_DTYPE_F16)
        ck_sbuf_printf(b, "ck_fast_f32_to_f16(%s)", value);
    else {
        ck_sbuf_printf(b, "(%s)ck_nc_from_%s(%d, %s, 0, %d, 0u)", code_type(t), f64 ? "f64" : "f32",
                       (int)t, value, default_ovf(t));
    }
}

static void emit_const(ck_sbuf *b, int f64, double v)
{
    if (f64) {
        uint64_t u;
        memcpy(&u, &v, sizeof u);
        ck_sbuf_printf(b, "ck_nc_bits_f64(0x%016llxull) /* %.17g */", (unsigned long long)u, v);
    } else {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        ck_sbuf_printf(b, "ck_u32_as_f32(0x%08xu) /* %.9g */", u, (double)f);
    }
}

/* ---- the element function --------------------------------------------------------------- */
static void emit_elem_cast(ck_sbuf *b, const ew_spec *s)
{
    ck_dtype src = s->in[0], dst = s->out;
    if (src == dst && s->scale == 1.0f) {
        ck_sbuf_printf(b, "    (void)i;\n    return c0;\n");
    } else if (is_fast(src) && is_fast(dst) && s->round == CK_NC_ROUND_NEAREST_EVEN &&
               s->ovf == CK_NC_NONSAT && s->scale == 1.0f) {
        ck_sbuf_printf(b, "    (void)i;\n    float v = ");
        emit_load(b, 0, src, "c0");
        ck_sbuf_printf(b, ";\n    return ");
        emit_store(b, 0, dst, "v");
        ck_sbuf_printf(b, ";\n");
    } else {
        ck_sbuf_printf(b, "    ck_nc_unpacked u = ck_nc_decode(%d, c0);\n", (int)src);
        if (s->scale != 1.0f) {
            uint32_t u;
            memcpy(&u, &s->scale, sizeof u);
            ck_sbuf_printf(b, "    u = ck_nc_scale(u, ck_u32_as_f32(0x%08xu));\n", u);
        }
        if (s->round == CK_NC_ROUND_STOCHASTIC)
            ck_sbuf_printf(b, "    uint32_t rnd = ck_nc_rand_word(%lluull, i);\n",
                           (unsigned long long)s->seed);
        else
            ck_sbuf_printf(b, "    uint32_t rnd = 0u;\n    (void)i;\n");
        ck_sbuf_printf(b, "    return (%s)ck_nc_encode(%d, u, %d, %d, rnd);\n", code_type(dst),
                       (int)dst, s->round, s->ovf);
    }
}

static const char *fn_name(ck_ew_opcode op, int f64)
{
    switch (op) {
    case CK_EW_MAX:
        return f64 ? "fmax" : "fmaxf";
    case CK_EW_MIN:
        return f64 ? "fmin" : "fminf";
    case CK_EW_RELU:
        return f64 ? "ew_relu_f64" : "ew_relu_f32";
    case CK_EW_GELU_TANH:
        return f64 ? "ew_gelu_tanh_f64" : "ew_gelu_tanh_f32";
    case CK_EW_GELU_ERF:
        return f64 ? "ew_gelu_erf_f64" : "ew_gelu_erf_f32";
    case CK_EW_SILU:
        return f64 ? "ew_silu_f64" : "ew_silu_f32";
    case CK_EW_SIGMOID:
        return f64 ? "ew_sigmoid_f64" : "ew_sigmoid_f32";
    case CK_EW_EXP:
        return f64 ? "exp" : "expf";
    default:
        return "";
    }
}

static ck_status emit_elem_expr(ck_sbuf *b, const ew_spec *s)
{
    const char *T = s->f64 ? "double" : "float";
    int stack[CK_EW_MAX_STEPS], sp = 0;
    ck_sbuf_printf(b, "    (void)i;\n");
    for (int k = 0; k < s->nin; ++k) {
        char code[16];
        snprintf(code, sizeof code, "c%d", k);
        ck_sbuf_printf(b, "    %s x%d = ", T, k);
        emit_load(b, s->f64, s->in[k], code);
        ck_sbuf_printf(b, ";\n");
    }
    for (int i = 0; i < s->prog->count; ++i) {
        const ck_ew_step *st = &s->prog->steps[i];
        ck_sbuf_printf(b, "    %s t%d = ", T, i);
        int a = -1, c = -1;
        switch (st->op) {
        case CK_EW_INPUT:
            ck_sbuf_printf(b, "x%d", st->input);
            break;
        case CK_EW_CONST:
            emit_const(b, s->f64, st->value);
            break;
        case CK_EW_ADD:
        case CK_EW_SUB:
        case CK_EW_MUL:
        case CK_EW_DIV:
            if (sp < 2)
                return ck_fail(CK_ERROR_INTERNAL, "elementwise: stack underflow in generation.");
            c = stack[--sp];
            a = stack[--sp];
            ck_sbuf_printf(b, "t%d %c t%d", a,
                           "+-*/"[st->op == CK_EW_ADD   ? 0
                                  : st->op == CK_EW_SUB ? 1
                                  : st->op == CK_EW_MUL ? 2
                                                        : 3],
                           c);
            break;
        case CK_EW_MAX:
        case CK_EW_MIN:
            if (sp < 2)
                return ck_fail(CK_ERROR_INTERNAL, "elementwise: stack underflow in generation.");
            c = stack[--sp];
            a = stack[--sp];
            ck_sbuf_printf(b, "%s(t%d, t%d)", fn_name(st->op, s->f64), a, c);
            break;
        default:
            if (sp < 1)
                return ck_fail(CK_ERROR_INTERNAL, "elementwise: stack underflow in generation.");
            a = stack[--sp];
            if (st->op == CK_EW_NEG) {
                ck_sbuf_printf(b, "-t%d", a);
            } else if (st->op == CK_EW_SCALE) {
                ck_sbuf_printf(b, "t%d * ", a);
                emit_const(b, s->f64, st->value);
            } else if (st->op == CK_EW_CAST) {
                char v[16];
                snprintf(v, sizeof v, "t%d", a);
                ck_sbuf_printf(b, "/* cast to %s */ ", ck_dtype_name(st->dtype));
                ck_sbuf_printf(b, s->f64 ? "ck_nc_to_f64(%d, " : "ck_nc_to_f32(%d, ",
                               (int)st->dtype);
                ck_sbuf_printf(b, "(uint64_t)");
                emit_store(b, s->f64, st->dtype, v);
                ck_sbuf_printf(b, ")");
            } else {
                ck_sbuf_printf(b, "%s(t%d)", fn_name(st->op, s->f64), a);
            }
            break;
        }
        ck_sbuf_printf(b, ";\n");
        stack[sp++] = i;
    }
    if (sp != 1)
        return ck_fail(CK_ERROR_INTERNAL, "elementwise: the program leaves %d values.", sp);
    char v[16];
    snprintf(v, sizeof v, "t%d", stack[0]);
    ck_sbuf_printf(b, "    return ");
    emit_store(b, s->f64, s->out, v);
    ck_sbuf_printf(b, ";\n");
    return CK_SUCCESS;
}

/* ---- the vector layout ------------------------------------------------------------------ */
/* Expression of element k of a pack held in ck_u32x4 array `arr` (index prefix `pre`). */
static void emit_lane(ck_sbuf *b, const char *arr, int size, int k)
{
    static const char comp[] = "xyzw";
    int byte = k * size, v = byte / 16, w = (byte % 16) / 4, sh = (byte % 4) * 8;
    if (size == 8)
        ck_sbuf_printf(b, "((uint64_t)%s[%d].%c << 32 | %s[%d].%c)", arr, v, comp[w + 1], arr, v,
                       comp[w]);
    else if (size == 4)
        ck_sbuf_printf(b, "%s[%d].%c", arr, v, comp[w]);
    else
        ck_sbuf_printf(b, "((%s[%d].%c >> %d) & 0x%xu)", arr, v, comp[w], sh,
                       size == 2 ? 0xFFFFu : 0xFFu);
}

static int any_bmode(const ew_spec *s, int mode)
{
    for (int k = 0; k < s->nin; ++k)
        if (s->bmode[k] == mode)
            return 1;
    return 0;
}

static void emit_vec(ck_sbuf *b, const ew_spec *s)
{
    int V = ck_ew_vec_elems(s), so = ck_ew_elem_bytes(s->out), nwo = V * so / 16;
    int U = s->unroll;
    int nw[CK_EW_MAX_INPUTS];
    /* pack indices: 32-bit when they fit (fewer registers, cheaper row arithmetic) */
    const char *I = s->idx32 ? "unsigned" : "unsigned long long";
    ck_sbuf_printf(b, "CK_KERNEL void CK_LAUNCH_BOUNDS(%d) ck_ew_vec(void *out", s->block);
    for (int k = 0; k < s->nin; ++k) {
        nw[k] = V * ck_ew_elem_bytes(s->in[k]) / 16;
        ck_sbuf_printf(b, ", const void *in%d", k);
    }
    ck_sbuf_printf(b, ", long long npacks_, long long n, long long bn)\n{\n    (void)bn;\n");
    ck_sbuf_printf(b,
                   "    /* %d elements per pack; %d packs per thread in flight; %s indices */\n"
                   "    const %s npacks = (%s)npacks_;\n"
                   "    const %s nt = (%s)ck_block_dim_x();\n"
                   "    const %s step = (%s)ck_grid_dim_x() * nt * %du;\n",
                   V, U, s->idx32 ? "32-bit" : "64-bit", I, I, I, I, I, I, U);
    if (any_bmode(s, EW_BCAST_ROW) || any_bmode(s, EW_BCAST_COL)) /* bn % V == 0 */
        ck_sbuf_printf(b, "    const %s pr = (%s)(bn / %d); /* packs per row */\n", I, I, V);
    ck_sbuf_printf(b,
                   "    for (%s p = (%s)ck_block_idx_x() * nt * %du + ck_thread_idx_x(); "
                   "p < npacks; p += step) {\n",
                   I, I, U);
    for (int k = 0; k < s->nin; ++k) {
        if (s->bmode[k] == EW_BCAST_COL || s->bmode[k] == EW_BCAST_SCALAR)
            ck_sbuf_printf(b, "        %s a%d[%d];\n", code_type(s->in[k]), k, U);
        else
            ck_sbuf_printf(b, "        ck_u32x4 a%d[%d][%d];\n", k, U, nw[k]);
    }
    const char *ld = s->alias ? "ck_ld16" : "ck_ld16_nc";
    ck_sbuf_printf(b,
                   "        CK_UNROLL for (int u = 0; u < %d; ++u) {\n"
                   "            %s q = p + (unsigned)u * nt;\n"
                   "            if (q < npacks) {\n",
                   U, I);
    for (int k = 0; k < s->nin; ++k) {
        int sk = ck_ew_elem_bytes(s->in[k]);
        int cls = sk == 1 ? 0 : sk == 2 ? 1 : sk == 4 ? 2 : 3;
        if (s->bmode[k] == EW_BCAST_ROW) /* bn % V == 0: a pack never crosses a row */
            ck_sbuf_printf(b,
                           "                CK_UNROLL for (int w = 0; w < %d; ++w)\n"
                           "                    a%d[u][w] = %s((const char *)in%d + "
                           "((unsigned long long)(q %% pr) * %du + (unsigned)w) * 16u);\n",
                           nw[k], k, ld, k, nw[k]);
        else if (s->bmode[k] == EW_BCAST_COL)
            ck_sbuf_printf(b,
                           "                a%d[u] = (%s)ew_ld_code(in%d, %d, (unsigned long "
                           "long)(q / pr));\n",
                           k, code_type(s->in[k]), k, cls);
        else if (s->bmode[k] == EW_BCAST_SCALAR)
            ck_sbuf_printf(b, "                a%d[u] = (%s)ew_ld_code(in%d, %d, 0ull);\n", k,
                           code_type(s->in[k]), k, cls);
        else
            ck_sbuf_printf(b,
                           "                CK_UNROLL for (int w = 0; w < %d; ++w)\n"
                           "                    a%d[u][w] = %s((const char *)in%d + "
                           "((unsigned long long)q * %du + (unsigned)w) * 16u);\n",
                           nw[k], k, ld, k, nw[k]);
    }
    ck_sbuf_printf(b, "            }\n        }\n");
    ck_sbuf_printf(b,
                   "        CK_UNROLL for (int u = 0; u < %d; ++u) {\n"
                   "            %s q = p + (unsigned)u * nt;\n"
                   "            if (q < npacks) {\n"
                   "                unsigned long long e = (unsigned long long)q * %du;\n"
                   "                (void)e;\n",
                   U, I, V);
    for (int e = 0; e < V; ++e) {
        ck_sbuf_printf(b, "                %s r%d = ew_f(", code_type(s->out), e);
        for (int k = 0; k < s->nin; ++k) {
            char arr[16];
            snprintf(arr, sizeof arr, "a%d[u]", k);
            if (s->bmode[k] == EW_BCAST_COL || s->bmode[k] == EW_BCAST_SCALAR)
                ck_sbuf_printf(b, "%s", arr);
            else
                emit_lane(b, arr, ck_ew_elem_bytes(s->in[k]), e);
            ck_sbuf_printf(b, ", ");
        }
        ck_sbuf_printf(b, "e + %du);\n", (unsigned)e);
    }
    ck_sbuf_printf(b, "                ck_u32x4 o[%d];\n", nwo);
    static const char comp[] = "xyzw";
    for (int w = 0; w < nwo * 4; ++w) {
        ck_sbuf_printf(b, "                o[%d].%c = ", w / 4, comp[w % 4]);
        if (so == 8)
            ck_sbuf_printf(b, "(uint32_t)(r%d >> %d)", w / 2, (w % 2) * 32);
        else if (so == 4)
            ck_sbuf_printf(b, "r%d", w);
        else
            for (int e = 0; e < 4 / so; ++e)
                ck_sbuf_printf(b, "%sr%d << %d", e ? " | " : "", w * (4 / so) + e, e * so * 8);
        ck_sbuf_printf(b, ";\n");
    }
    ck_sbuf_printf(b,
                   "                CK_UNROLL for (int w = 0; w < %d; ++w)\n"
                   "                    %s((char *)out + ((unsigned long long)q * %du + "
                   "(unsigned)w) * 16u, o[w]);\n"
                   "            }\n        }\n    }\n",
                   nwo, s->cs ? "ck_st16_cs" : "ck_st16", nwo);
    /* the last n % V elements */
    ck_sbuf_printf(b,
                   "    long long t = npacks_ * %d + (long long)ck_block_idx_x() * "
                   "(long long)ck_block_dim_x() + ck_thread_idx_x();\n"
                   "    if (t < n)\n",
                   V);
    ck_sbuf_printf(b, "        ew_st_code(out, %d, (unsigned long long)t, ew_f(",
                   so == 1   ? 0
                   : so == 2 ? 1
                   : so == 4 ? 2
                             : 3);
    for (int k = 0; k < s->nin; ++k) {
        int sk = ck_ew_elem_bytes(s->in[k]);
        const char *idx = s->bmode[k] == EW_BCAST_ROW      ? "t % bn"
                          : s->bmode[k] == EW_BCAST_COL    ? "t / bn"
                          : s->bmode[k] == EW_BCAST_SCALAR ? "0"
                                                           : "t";
        ck_sbuf_printf(b, "(%s)ew_ld_code(in%d, %d, (unsigned long long)(%s)), ",
                       code_type(s->in[k]), k,
                       sk == 1   ? 0
                       : sk == 2 ? 1
                       : sk == 4 ? 2
                                 : 3,
                       idx);
    }
    ck_sbuf_printf(b, "(unsigned long long)t));\n}\n");
}

/* ---- the strided layout ----------------------------------------------------------------- */
static int st_class(ck_dtype t)
{
    const ck_dtype_info *info = ck_dtype_get(t);
    if (info->pack_elements == 2)
        return 4;
    if (info->pack_elements == 4)
        return 5;
    int s = info->pack_bytes;
    return s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : 3;
}

static void emit_strided(ck_sbuf *b, const ew_spec *s)
{
    int r = s->rank, upe = ck_dtype_get(s->out)->pack_elements;
    const char *I = s->idx32 ? "unsigned" : "unsigned long long";
    ck_sbuf_printf(b, "CK_KERNEL void ck_ew_strided(void *out");
    for (int k = 0; k < s->nin; ++k)
        ck_sbuf_printf(b, ", const void *in%d", k);
    ck_sbuf_printf(b, ", long long units");
    for (int d = 0; d < r; ++d)
        ck_sbuf_printf(b, ", long long l%d", d);
    for (int k = 0; k <= s->nin; ++k)
        for (int d = 0; d < r; ++d)
            ck_sbuf_printf(b, ", long long s%d_%d", k, d); /* tensor nin is the output */
    ck_sbuf_printf(b, ")\n{\n");
    ck_sbuf_printf(b,
                   "    /* %d element(s) of the destination per unit; rank %d; %s indices */\n"
                   "    const long long step = (long long)ck_grid_dim_x() * ck_block_dim_x();\n"
                   "    for (long long e = (long long)ck_block_idx_x() * ck_block_dim_x() + "
                   "ck_thread_idx_x(); e < units; e += step) {\n",
                   upe, r, s->idx32 ? "32-bit" : "64-bit");
    if (upe > 1)
        ck_sbuf_printf(b, "        uint32_t c[4] = {0u, 0u, 0u, 0u};\n");
    ck_sbuf_printf(b, "        CK_UNROLL for (int j = 0; j < %d; ++j) {\n", upe);
    ck_sbuf_printf(b, "            %s rem = (%s)e * %du + (unsigned)j;\n", I, I, upe);
    ck_sbuf_printf(b, "            unsigned long long i = rem;\n");
    for (int k = 0; k <= s->nin; ++k)
        ck_sbuf_printf(b, "            unsigned long long o%d = 0;\n", k);
    for (int d = r - 1; d >= 0; --d) {
        if (d > 0)
            ck_sbuf_printf(b,
                           "            { %s q = rem / (%s)l%d, x = rem - q * (%s)l%d; rem = q;\n",
                           I, I, d, I, d);
        else
            ck_sbuf_printf(b, "            { %s x = rem;\n", I);
        for (int k = 0; k <= s->nin; ++k)
            ck_sbuf_printf(b,
                           "              o%d += (unsigned long long)x * (unsigned long long)"
                           "s%d_%d;\n",
                           k, k, d);
        ck_sbuf_printf(b, "            }\n");
    }
    ck_sbuf_printf(b, "            %s v = ew_f(", code_type(s->out));
    for (int k = 0; k < s->nin; ++k) {
        int cls = st_class(s->in[k]);
        if (cls == 4)
            ck_sbuf_printf(b, "ew_ld_fp4(in%d, o%d), ", k, k);
        else if (cls == 5)
            ck_sbuf_printf(b, "ew_ld_fp6(in%d, o%d), ", k, k);
        else
            ck_sbuf_printf(b, "(%s)ew_ld_code(in%d, %d, o%d), ", code_type(s->in[k]), k, cls, k);
    }
    ck_sbuf_printf(b, "i);\n");
    int oc = st_class(s->out);
    if (upe == 1)
        ck_sbuf_printf(b, "            ew_st_code(out, %d, o%d, v);\n", oc, s->nin);
    else
        ck_sbuf_printf(b, "            c[j] = (uint32_t)v;\n");
    ck_sbuf_printf(b, "        }\n");
    if (oc == 4)
        ck_sbuf_printf(b, "        ew_st_fp4_pack(out, (unsigned long long)e, c[0], c[1]);\n");
    else if (oc == 5)
        ck_sbuf_printf(b, "        ew_st_fp6_pack(out, (unsigned long long)e, c[0], c[1], c[2], "
                          "c[3]);\n");
    ck_sbuf_printf(b, "    }\n}\n");
}

ck_status ck_ew_generate(const ew_spec *s, char **source)
{
    *source = NULL;
    ck_sbuf b = {0};
    char *key = ck_ew_key(s);
    ck_sbuf_printf(&b, "/* Generated by ck (src/ops/elementwise/ew_gen.c): %s */\n",
                   key ? key : "");
    free(key);
    ck_sbuf_printf(&b, "#include \"ck_device.h\"\n#include \"ops/elementwise/ew_kernel.h\"\n\n");
    ck_sbuf_printf(&b, "CK_DEVICE %s ew_f(", code_type(s->out));
    for (int k = 0; k < s->nin; ++k)
        ck_sbuf_printf(&b, "%s c%d, ", code_type(s->in[k]), k);
    ck_sbuf_printf(&b, "unsigned long long i)\n{\n");
    ck_status st = CK_SUCCESS;
    if (s->mode == EW_MODE_CAST)
        emit_elem_cast(&b, s);
    else
        st = emit_elem_expr(&b, s);
    ck_sbuf_printf(&b, "}\n\n");
    if (s->layout == EW_LAYOUT_VEC)
        emit_vec(&b, s);
    else
        emit_strided(&b, s);
    if (st == CK_SUCCESS && b.oom)
        st = ck_fail(CK_ERROR_OUT_OF_MEMORY, "elementwise: out of host memory generating a "
                                             "kernel.");
    if (st != CK_SUCCESS) {
        free(b.s);
        return st;
    }
    *source = b.s;
    return CK_SUCCESS;
}
