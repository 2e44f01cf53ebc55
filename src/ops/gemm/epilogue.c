/*
 * The GEMM epilogue (CK's CShuffle-less direct epilogue), generated from the accumulator's
 * encoding: the accumulator is a distributed tensor, so the C load, the bias load and the D
 * store, and the loads of the multi-D extras (full matrices like C, vectors like the bias),
 * are tile windows (ck_tile_window_generate) with that same encoding over descriptors
 * with symbolic M, N and leading dimensions; the elementwise chain between them is a loop over
 * the registers.
 *
 * Not expressed by the generated windows (yet): a store through shared memory to widen the
 * accesses (CK's CShuffle) or a TMA store; each thread stores its own fragments (pairs of
 * consecutive columns for the mma layouts) straight to global memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile_kernel.h"
#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm"

static const char *storage_type(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F32:
        return "float";
    case CK_DTYPE_I32:
        return "int";
    case CK_DTYPE_F16:
    case CK_DTYPE_BF16:
        return "unsigned short";
    default:
        return "unsigned char";
    }
}

/* Expression of the value of storage code `c` of type t, in compute type V. */
static void emit_to_value(ck_sbuf *b, ck_dtype t, int f64, const char *c)
{
    const char *V = f64 ? "double" : "float";
    switch (t) {
    case CK_DTYPE_F32:
    case CK_DTYPE_I32:
        ck_sbuf_printf(b, "(%s)%s", V, c);
        break;
    case CK_DTYPE_BF16:
        ck_sbuf_printf(b, "(%s)ck_fast_bf16_to_f32_canon(%s)", V, c);
        break;
    case CK_DTYPE_F16:
        ck_sbuf_printf(b, "(%s)ck_fast_f16_to_f32_canon(%s)", V, c);
        break;
    default:
        ck_sbuf_printf(b, "(%s)ck_nc_to_f32(%d, %s)", V, (int)t, c);
        break;
    }
}

/* Storage code of type t for value v (nearest even; fp8 saturates, f16/bf16 overflow to inf,
 * i32 saturates: ck_convert's defaults). */
static void emit_from_value(ck_sbuf *b, ck_dtype t, int f64, const char *v)
{
    if (t == CK_DTYPE_F32)
        ck_sbuf_printf(b, "(float)%s", v);
    else if (t == CK_DTYPE_BF16 && !f64)
        ck_sbuf_printf(b, "(unsigned short)ck_fast_f32_to_bf16(%s)", v);
    else if (t == CK_DTYPE_F16 && !f64)
        ck_sbuf_printf(b, "(unsigned short)ck_fast_f32_to_f16(%s)", v);
    else
        ck_sbuf_printf(b, "(%s)ck_nc_from_%s(%d, %s, 0, %d, 0u)", storage_type(t),
                       f64 ? "f64" : "f32", (int)t, v,
                       t == CK_DTYPE_FP8_E4M3 || t == CK_DTYPE_FP8_E5M2 ? 0 : 1);
}

const char *ck_gemm_storage_type(ck_dtype t)
{
    return storage_type(t);
}

void ck_gemm_cast_expr(ck_dtype t, int f64, const char *v, char *buf, size_t size)
{
    ck_sbuf b = {0};
    emit_from_value(&b, t, f64, v);
    snprintf(buf, size, "%s", b.s && !b.oom ? b.s : "");
    free(b.s);
}

static const char *unary_fn(ck_ew_opcode op, int f64)
{
    switch (op) {
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
        return NULL;
    }
}

static const char *activation_fn(ck_gemm_activation a, int f64)
{
    static const ck_ew_opcode map[] = {CK_EW_OPCODE_COUNT_, CK_EW_RELU, CK_EW_GELU_TANH,
                                       CK_EW_GELU_ERF,      CK_EW_SILU, CK_EW_SIGMOID};
    return a == CK_GEMM_ACT_NONE ? NULL : unary_fn(map[a], f64);
}

/* gemm_program(x0): the elementwise program, one input (checked by ck_gemm_prob_make). */
static ck_status emit_program(ck_sbuf *b, const ck_ew_program *prog, int f64)
{
    const char *V = f64 ? "double" : "float";
    int stack[CK_EW_MAX_STEPS], sp = 0;
    ck_sbuf_printf(b, "CK_DEVICE %s gemm_program(%s x0)\n{\n", V, V);
    for (int i = 0; i < prog->count; ++i) {
        const ck_ew_step *s = &prog->steps[i];
        int nargs = (s->op >= CK_EW_ADD && s->op <= CK_EW_MIN)       ? 2
                    : (s->op == CK_EW_INPUT || s->op == CK_EW_CONST) ? 0
                                                                     : 1;
        if (sp < nargs)
            return ck_fail(CK_ERROR_INTERNAL, OP ": epilogue program stack underflow.");
        int y = nargs == 2 ? stack[--sp] : -1, x = nargs ? stack[--sp] : -1;
        ck_sbuf_printf(b, "    %s t%d = ", V, i);
        switch (s->op) {
        case CK_EW_INPUT:
            ck_sbuf_printf(b, "x0");
            break;
        case CK_EW_CONST:
            ck_sbuf_printf(b, "(%s)%.17g", V, s->value);
            break;
        case CK_EW_ADD:
        case CK_EW_SUB:
        case CK_EW_MUL:
        case CK_EW_DIV:
            ck_sbuf_printf(b, "t%d %c t%d", x, "+-*/"[s->op - CK_EW_ADD], y);
            break;
        case CK_EW_MAX:
        case CK_EW_MIN:
            ck_sbuf_printf(b, "%s%s(t%d, t%d)", s->op == CK_EW_MAX ? "fmax" : "fmin",
                           f64 ? "" : "f", x, y);
            break;
        case CK_EW_NEG:
            ck_sbuf_printf(b, "-t%d", x);
            break;
        case CK_EW_SCALE:
            ck_sbuf_printf(b, "t%d * (%s)%.17g", x, V, s->value);
            break;
        case CK_EW_CAST:
            if (s->dtype == CK_DTYPE_F32)
                ck_sbuf_printf(b, "(%s)(float)t%d", V, x);
            else if (s->dtype == CK_DTYPE_F64)
                ck_sbuf_printf(b, "(%s)(double)t%d", V, x);
            else
                ck_sbuf_printf(b, "(%s)ck_nc_to_f64(%d, ck_nc_from_%s(%d, t%d, 0, %d, 0u))", V,
                               (int)s->dtype, f64 ? "f64" : "f32", (int)s->dtype, x,
                               s->dtype >= CK_DTYPE_FP8_E4M3 && s->dtype <= CK_DTYPE_FP4_E2M1 ? 0
                                                                                              : 1);
            break;
        default:
            if (!unary_fn(s->op, f64))
                return ck_fail(CK_ERROR_UNSUPPORTED, OP ": epilogue opcode %d is not supported.",
                               (int)s->op);
            ck_sbuf_printf(b, "%s(t%d)", unary_fn(s->op, f64), x);
            break;
        }
        ck_sbuf_printf(b, ";\n");
        stack[sp++] = i;
    }
    if (sp != 1)
        return ck_fail(CK_ERROR_INTERNAL, OP ": epilogue program leaves %d values.", sp);
    ck_sbuf_printf(b, "    return t%d;\n}\n", stack[0]);
    return CK_SUCCESS;
}

/* One window over an M x N matrix (strides per order; ld symbol `ldname` whose values are
 * multiples of ld_div, NULL: the bias vector, stride 0 along the other dim). */
static ck_status gen_window(ck_sbuf *b, ck_expr_arena *ctx, const char *name, ck_dtype dtype,
                            int row_major, const char *ldname, int ld_div, int bias_row,
                            const ck_dist_encoding *acc, int tile_m, int tile_n, unsigned ops)
{
    ck_ival M, N, LD = ck_ival_int(1), len[2], str[2];
    ck_status st = ck_expr_symbol(ctx, "M", 1, INT32_MAX, 1, &M);
    if (!st)
        st = ck_expr_symbol(ctx, "N", 1, INT32_MAX, 1, &N);
    if (!st && ldname)
        st = ck_expr_symbol(ctx, ldname, ld_div, INT64_C(1) << 40, ld_div, &LD);
    if (st)
        return st;
    len[0] = M;
    len[1] = N;
    if (!ldname) {
        str[0] = ck_ival_int(bias_row ? 1 : 0);
        str[1] = ck_ival_int(bias_row ? 0 : 1);
    } else {
        str[0] = row_major ? LD : ck_ival_int(1);
        str[1] = row_major ? ck_ival_int(1) : LD;
    }
    ck_descriptor *desc = NULL;
    if ((st = ck_descriptor_make_naive(2, len, str, &desc)))
        return st;
    ck_tile_window_spec w;
    memset(&w, 0, sizeof w);
    w.name = name;
    w.desc = desc;
    w.ctx = ctx;
    w.enc = acc;
    w.dtype = dtype;
    w.origin_align[0] = tile_m;
    w.origin_align[1] = tile_n;
    w.fill = 0;
    w.ops = ops;
    char *text = NULL;
    st = ck_tile_window_generate(&w, &text);
    ck_descriptor_destroy(desc);
    if (st)
        return ck_fail_context(st, OP ": epilogue window '%s'", name);
    ck_sbuf_printf(b, "%s\n", text);
    ck_tile_free(text);
    return CK_SUCCESS;
}

static ck_status emit_all(ck_sbuf *b, ck_expr_arena *ctx, const ck_gemm_prob *prob,
                          const ck_dist_encoding *acc, int tm, int tn)
{
    const ck_gemm_problem *p = &prob->p;
    /* i8 accumulates in int, unless quantized (then promoted to f32 with the scales) */
    int int_acc = p->a.dtype == CK_DTYPE_I8 && !prob->quant;
    int f64 = p->d.dtype == CK_DTYPE_I32; /* exact integers up to 2^53 */
    const char *V = f64 ? "double" : "float";
    ck_status st;
    char dens[1024];
    if (ck_dist_encoding_format(acc, dens, sizeof dens))
        snprintf(dens, sizeof dens, "(encoding too long to print)");
    ck_sbuf_printf(b, "/* gemm epilogue: accumulator %d x %d, encoding %s */\n", tm, tn, dens);
    ck_sbuf_printf(b, "#include \"ops/elementwise/ew_kernel.h\"\n");
    /* a batch's matrix starts batch * batch_stride elements in: the divisor covers both */
    if ((st = gen_window(b, ctx, "d", p->d.dtype, p->d.order == CK_GEMM_ROW_MAJOR, "LDD",
                         ck_gemm_matrix_div(&p->d), 0, acc, tm, tn, CK_WIN_STORE)))
        return st;
    if (prob->has_c &&
        (st = gen_window(b, ctx, "c", p->c.dtype, p->c.order == CK_GEMM_ROW_MAJOR, "LDC",
                         ck_gemm_matrix_div(&p->c), 0, acc, tm, tn, CK_WIN_LOAD)))
        return st;
    if (p->bias != CK_GEMM_BIAS_NONE &&
        (st = gen_window(b, ctx, "bias", p->bias_dtype, 1, NULL, 0, p->bias == CK_GEMM_BIAS_ROW,
                         acc, tm, tn, CK_WIN_LOAD)))
        return st;
    /* multi-D extras: full matrices like C (own order, ld symbol LDXi), vectors like the bias */
    for (int x = 0; x < p->extra_count; ++x) {
        const ck_gemm_extra *e = &p->extras[x];
        char wname[16], ldname[16];
        snprintf(wname, sizeof wname, "x%d", x);
        snprintf(ldname, sizeof ldname, "LDX%d", x);
        int full = e->broadcast == CK_GEMM_EXTRA_FULL;
        ck_gemm_matrix mt = {e->dtype, e->order, e->ld, e->batch_stride};
        if ((st = gen_window(b, ctx, wname, e->dtype, e->order == CK_GEMM_ROW_MAJOR,
                             full ? ldname : NULL, full ? ck_gemm_matrix_div(&mt) : 0,
                             e->broadcast == CK_GEMM_EXTRA_ROW, acc, tm, tn, CK_WIN_LOAD)))
            return st;
    }
    if (prob->has_epi && (st = emit_program(b, &prob->epi, f64)))
        return st;
    const char *Td = storage_type(p->d.dtype);
    ck_sbuf_printf(b,
                   "CK_DEVICE void gemm_epilogue(const %s *acc, const ck_gemm_kargs *ka, "
                   "long long batch, long long m0, long long n0)\n{\n",
                   int_acc ? "int" : "float");
    ck_sbuf_printf(
        b,
        "    ck_win_d wd = make_win_d((%s *)ka->d + batch * ka->batch_d, m0, n0, ka->ldd, "
        "ka->m, ka->n);\n",
        Td);
    if (prob->has_c) {
        const char *Tc = storage_type(p->c.dtype);
        ck_sbuf_printf(b,
                       "    %s rc[CK_NREGS_c];\n"
                       "    int with_c = ka->beta != 0.0f;\n"
                       "    if (with_c) {\n"
                       "        ck_win_c wc = make_win_c((%s *)ka->c + batch * ka->batch_c, "
                       "m0, n0, ka->ldc, ka->m, ka->n);\n"
                       "        load_c(rc, &wc);\n"
                       "    }\n",
                       Tc, Tc);
    }
    if (p->bias != CK_GEMM_BIAS_NONE) {
        const char *Tb = storage_type(p->bias_dtype);
        ck_sbuf_printf(b,
                       "    %s rb[CK_NREGS_bias];\n"
                       "    ck_win_bias wb = make_win_bias((%s *)ka->bias + batch * "
                       "ka->batch_bias, m0, n0, ka->m, ka->n);\n"
                       "    load_bias(rb, &wb);\n",
                       Tb, Tb);
    }
    for (int x = 0; x < p->extra_count; ++x) {
        const ck_gemm_extra *e = &p->extras[x];
        const char *Tx = storage_type(e->dtype);
        ck_sbuf_printf(b,
                       "    %s rx%d[CK_NREGS_x%d];\n"
                       "    ck_win_x%d wx%d = make_win_x%d((%s *)ka->extra[%d] + batch * "
                       "ka->batch_extra[%d], m0, n0, ",
                       Tx, x, x, x, x, x, Tx, x, x);
        if (e->broadcast == CK_GEMM_EXTRA_FULL)
            ck_sbuf_printf(b, "ka->ld_extra[%d], ", x);
        ck_sbuf_printf(b, "ka->m, ka->n);\n    load_x%d(rx%d, &wx%d);\n", x, x, x);
    }
    ck_sbuf_printf(b, "    %s out[CK_NREGS_d];\n", Td);
    ck_sbuf_printf(b, "    CK_UNROLL for (int i = 0; i < CK_NREGS_d; ++i) {\n");
    ck_sbuf_printf(b, "        %s v = (%s)ka->alpha * (%s)acc[i];\n", V, V, V);
    if (prob->has_c) {
        ck_sbuf_printf(b, "        if (with_c)\n            v += (%s)ka->beta * ", V);
        emit_to_value(b, p->c.dtype, f64, "rc[i]");
        ck_sbuf_printf(b, ";\n");
    }
    if (p->bias != CK_GEMM_BIAS_NONE) {
        ck_sbuf_printf(b, "        v += ");
        emit_to_value(b, p->bias_dtype, f64, "rb[i]");
        ck_sbuf_printf(b, ";\n");
    }
    if (activation_fn(p->activation, f64))
        ck_sbuf_printf(b, "        v = %s(v);\n", activation_fn(p->activation, f64));
    for (int x = 0; x < p->extra_count; ++x) {
        char reg[16];
        snprintf(reg, sizeof reg, "rx%d[i]", x);
        ck_sbuf_printf(b, "        v %s= ", p->extras[x].op == CK_GEMM_EXTRA_MUL ? "*" : "+");
        emit_to_value(b, p->extras[x].dtype, f64, reg);
        ck_sbuf_printf(b, ";\n");
    }
    if (prob->has_epi)
        ck_sbuf_printf(b, "        v = gemm_program(v);\n");
    ck_sbuf_printf(b, "        v = v * (%s)ka->inv_scale_d;\n        out[i] = ", V);
    emit_from_value(b, p->d.dtype, f64, "v");
    ck_sbuf_printf(b, ";\n    }\n    store_d(out, &wd);\n}\n");
    return CK_SUCCESS;
}

ck_status ck_gemm_epilogue_source(const ck_gemm_prob *prob, const ck_dist_encoding *acc, int tile_m,
                                  int tile_n, char **src)
{
    if (!prob || !acc || !src)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, OP ": epilogue: NULL argument.");
    *src = NULL;
    ck_expr_arena *ctx = NULL;
    ck_status st = ck_expr_arena_create(&ctx);
    if (st)
        return st;
    ck_sbuf b = {0};
    st = emit_all(&b, ctx, prob, acc, tile_m, tile_n);
    ck_expr_arena_destroy(ctx);
    if (!st && b.oom)
        st = ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the epilogue source.");
    if (st) {
        free(b.s);
        return st;
    }
    *src = b.s;
    return CK_SUCCESS;
}

ck_status ck_gemm_source_parts(const ck_gemm_prob *prob, const ck_gemm_instance *inst,
                               const ck_dist_encoding *acc, char **defs, char **epi)
{
    *defs = *epi = NULL;
    ck_gemm_param params[CK_GEMM_MAX_PARAMS];
    int np = ck_gemm_params(prob, inst, params, CK_GEMM_MAX_PARAMS);
    if (np < 0)
        return ck_fail(CK_ERROR_INTERNAL, OP ": parameter table overflow.");
    char *d = ck_gemm_params_defines(params, np);
    if (!d)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, OP ": out of host memory for the defines.");
    ck_status st = ck_gemm_epilogue_source(prob, acc, inst->tile_m, inst->tile_n, epi);
    if (st) {
        free(d);
        return st;
    }
    *defs = d;
    return CK_SUCCESS;
}
