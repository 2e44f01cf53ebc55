/*
 * The GEMM CPU reference (shared by the tests and `ck prof gemm`) and its tolerance.
 * Products exact in double, sums in double, the epilogue in double; the inputs rounded as the
 * tensor cores see them (f32 -> tf32 with round-to-nearest-away unless 3xTF32 is asked for).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "ops/elementwise/ew_internal.h"
#include "ops/gemm/gemm_internal.h"

/* f16 bits as a float, exactly (the generic conversion cost most of a large check's time). */
static float f16_value(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u, u;
    float f;
    if (e == 0) { /* zero or subnormal: m * 2^-24, exact in float */
        f = (float)m * 0x1p-24f;
        return s ? -f : f;
    }
    u = e == 31 ? s | 0x7f800000u | (m << 13) : s | ((e + 112u) << 23) | (m << 13);
    memcpy(&f, &u, 4);
    return f;
}

static double load(const void *p, ck_dtype t, int64_t i)
{
    if (t == CK_DTYPE_BF16 || t == CK_DTYPE_F16) {
        uint16_t h;
        memcpy(&h, (const char *)p + i * 2, 2);
        if (t == CK_DTYPE_F16)
            return f16_value(h);
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    if (t == CK_DTYPE_F32) {
        float f;
        memcpy(&f, (const char *)p + i * 4, 4);
        return f;
    }
    int es = ck_gemm_dtype_bytes(t);
    uint64_t code = 0;
    memcpy(&code, (const char *)p + i * es, (size_t)es); /* little-endian */
    if (t == CK_DTYPE_I32)
        return (double)(int32_t)(uint32_t)code;
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

static void store(void *p, ck_dtype t, int64_t i, double v)
{
    uint64_t code = 0;
    ck_convert_from_f64(t, v, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &code);
    memcpy((char *)p + i * ck_gemm_dtype_bytes(t), &code, (size_t)ck_gemm_dtype_bytes(t));
}

static int64_t at(const ck_gemm_matrix *m, int64_t i, int64_t j)
{
    return m->order == CK_GEMM_ROW_MAJOR ? i * m->ld + j : i + j * m->ld;
}

/* The value a tf32 tensor core sees: f32 rounded to nearest, ties away (cvt.rna.tf32.f32), or
 * with the low 13 bits dropped (wgmma reading f32 from shared memory). */
static double tf32(double x, int truncate)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u = (u + (truncate ? 0 : 0x1000u)) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

double ck_gemm_act_f64(ck_gemm_activation a, double x)
{
    switch (a) {
    case CK_GEMM_ACT_RELU:
        return x < 0 ? 0 : x;
    case CK_GEMM_ACT_GELU_TANH:
        return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case CK_GEMM_ACT_GELU_ERF:
        return 0.5 * x * (1 + erf(x * 0.7071067811865476));
    case CK_GEMM_ACT_SILU:
        return x / (1 + exp(-x));
    case CK_GEMM_ACT_SIGMOID:
        return 1 / (1 + exp(-x));
    default:
        return x;
    }
}

/* The elementwise program in double (one input, checked by ck_gemm_prob_make): the elementwise
 * op's reference, so that the GEMM epilogue and ck_elementwise are checked against one
 * evaluator (constants rounded to f32 as the kernels take them). */
double ck_gemm_program_f64(const ck_ew_program *prog, double x0)
{
    return ck_ew_reference(prog, &x0);
}

/* The value before the output cast, in double, for element (i, j) (h: host pointers). */
double ck_gemm_reference_value(const ck_gemm_prob *prob, const ck_gemm_args *h, int64_t i,
                               int64_t j, double *abs_terms)
{
    const ck_gemm_problem *p = &prob->p;
    int round_tf32 = p->a.dtype == CK_DTYPE_F32 && !prob->split3;
    double acc = 0, mag = 0;
    for (int64_t k = 0; k < p->k; ++k) {
        double a = load(h->a, p->a.dtype, at(&p->a, i, k));
        double b = p->b_packed ? 0 : load(h->b, p->b.dtype, at(&p->b, k, j)); /* packed: quant.c */
        if (round_tf32) {
            a = tf32(a, prob->tf32_truncate);
            b = tf32(b, prob->tf32_truncate);
        }
        if (prob->quant) { /* scales (and packed B's values) */
            a = ck_gemm_quant_a(prob, h, a, i, k);
            b = ck_gemm_quant_b(prob, h, b, k, j);
        }
        acc += a * b;
        mag += fabs(a * b);
    }
    double alpha = (double)((float)(h->alpha * h->scale_a * h->scale_b));
    double v = alpha * acc;
    mag *= fabs(alpha);
    if (prob->has_c && h->beta != 0.0f) {
        double c = (double)h->beta * load(h->c, p->c.dtype, at(&p->c, i, j));
        v += c;
        mag += fabs(c);
    }
    if (p->bias != CK_GEMM_BIAS_NONE) {
        double bb = load(h->bias, p->bias_dtype, p->bias == CK_GEMM_BIAS_ROW ? i : j);
        v += bb;
        mag += fabs(bb);
    }
    v = ck_gemm_act_f64(p->activation, v);
    for (int x = 0; x < p->extra_count; ++x) { /* multi-D, in order */
        const ck_gemm_extra *e = &p->extras[x];
        int64_t off = e->broadcast == CK_GEMM_EXTRA_ROW   ? i
                      : e->broadcast == CK_GEMM_EXTRA_COL ? j
                      : e->order == CK_GEMM_ROW_MAJOR     ? i * e->ld + j
                                                          : i + j * e->ld;
        double ev = load(h->extra[x], e->dtype, off);
        if (e->op == CK_GEMM_EXTRA_MUL) {
            v *= ev;
            mag *= fabs(ev);
        } else {
            v += ev;
            mag += fabs(ev);
        }
    }
    if (prob->has_epi)
        v = ck_gemm_program_f64(&prob->epi, v);
    v /= (double)h->scale_d;
    if (abs_terms)
        *abs_terms = mag / fabs((double)h->scale_d);
    return v;
}

static const void *moved(const void *ptr, ck_dtype t, int64_t elems)
{
    return ptr ? (const char *)ptr + elems * ck_gemm_dtype_bytes(t) : NULL;
}

void ck_gemm_args_batch(const ck_gemm_prob *prob, const ck_gemm_args *args, int64_t b,
                        ck_gemm_args *out)
{
    const ck_gemm_problem *p = &prob->p;
    *out = *args;
    out->a = moved(args->a, p->a.dtype, b * p->a.batch_stride);
    out->b = moved(args->b, p->b.dtype, b * p->b.batch_stride);
    if (prob->has_c)
        out->c = moved(args->c, p->c.dtype, b * p->c.batch_stride);
    out->d = (void *)moved(args->d, p->d.dtype, b * p->d.batch_stride);
    if (p->bias != CK_GEMM_BIAS_NONE)
        out->bias = moved(args->bias, p->bias_dtype, b * p->bias_batch_stride);
    for (int x = 0; x < p->extra_count; ++x)
        out->extra[x] = moved(args->extra[x], p->extras[x].dtype, b * p->extras[x].batch_stride);
}

ck_status ck_gemm_reference(const ck_gemm_prob *prob, const ck_gemm_args *h)
{
    if (!prob || !h || !h->a || !h->b || !h->d)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_gemm_reference: NULL argument.");
    const ck_gemm_problem *p = &prob->p;
    for (int64_t b = 0; b < p->batch; ++b) {
        ck_gemm_args hb;
        ck_gemm_args_batch(prob, h, b, &hb);
        for (int64_t i = 0; i < p->m; ++i)
            for (int64_t j = 0; j < p->n; ++j)
                store(hb.d, p->d.dtype, at(&p->d, i, j),
                      ck_gemm_reference_value(prob, &hb, i, j, NULL));
    }
    return CK_SUCCESS;
}

/* Relative precision (unit roundoff) of an output type. */
static double unit(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F16:
        return 0x1p-11;
    case CK_DTYPE_BF16:
        return 0x1p-8;
    case CK_DTYPE_FP8_E4M3:
        return 0x1p-4;
    case CK_DTYPE_FP8_E5M2:
        return 0x1p-3;
    case CK_DTYPE_I32:
        return 0;
    default:
        return 0x1p-24;
    }
}

static double tiny(ck_dtype t)
{
    switch (t) {
    case CK_DTYPE_F16:
        return 0x1p-24;
    case CK_DTYPE_BF16:
        return 0x1p-133;
    case CK_DTYPE_FP8_E4M3:
        return 0x1p-9;
    case CK_DTYPE_FP8_E5M2:
        return 0x1p-16;
    case CK_DTYPE_I32:
        return 1;
    default:
        return 0x1p-149;
    }
}

double ck_gemm_tolerance(const ck_gemm_prob *prob, double abs_dot, double ref_value)
{
    const ck_gemm_problem *p = &prob->p;
    /* f32 accumulation: one rounding per mma k-step on the emulator, a few per step on the GPU
     * (its internal order): (k / 8 + 4) roundings of at most the running magnitude */
    double steps = (double)p->k / 8.0 + 4.0;
    double acc = p->a.dtype == CK_DTYPE_I8 ? 0x1p-24 * abs_dot * 2 : steps * 0x1p-24 * abs_dot;
    if (prob->split3)
        acc += 0x1p-21 * abs_dot; /* the dropped small x small term and the splits' rounding */
    /* quantized: each K block's partial sum is rounded to f32 when promoted */
    if (prob->quant)
        acc += ((double)p->k / prob->q_block_k + 2) * 0x1p-24 * abs_dot;
    /* fp8 inputs: the H100's fp8 tensor cores keep about 14 bits of the running sum within an
     * instruction (the emulator keeps f32; bench/RESULTS.md, fourth session): one such
     * rounding per 32-deep k-step */
    if (p->a.dtype == CK_DTYPE_FP8_E4M3 || p->a.dtype == CK_DTYPE_FP8_E5M2)
        acc += ((double)p->k / 32.0 + 1.0) * 0x1p-13 * abs_dot;
    /* the epilogue's f32 arithmetic (alpha, beta, bias, activation, program): a few ulp */
    double epi = 0x1p-20 * (fabs(ref_value) + abs_dot);
    if (p->d.dtype == CK_DTYPE_I32)
        return 0.5 + 0x1p-40 * abs_dot; /* exact accumulation, epilogue in double */
    /* output rounding: one unit (the value before rounding may cross a rounding boundary) */
    double out = 2 * unit(p->d.dtype) * fabs(ref_value) + tiny(p->d.dtype);
    /* an inner cast in the program loses up to its own precision */
    if (prob->has_epi)
        for (int i = 0; i < prob->epi.count; ++i)
            if (prob->epi.steps[i].op == CK_EW_CAST)
                out += 2 * unit(prob->epi.steps[i].dtype) * (fabs(ref_value) + abs_dot);
    return 2 * (acc + epi) + out;
}
