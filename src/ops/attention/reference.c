/*
 * The CPU reference of attention forward: one query row at a time, the scores materialized in
 * double, softmax and P V in double, independent of the kernels' tiling and online softmax.
 * Shared by the tests and `ck prof attention`, with the tolerance derived from the types.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck/types.h"
#include "ops/attention/attn_internal.h"

static double elem(const void *base, ck_dtype t, int64_t i)
{
    uint16_t code = 0;
    if (t == CK_DTYPE_FP8_E4M3)
        code = ((const unsigned char *)base)[i];
    else
        memcpy(&code, (const char *)base + i * 2, 2);
    double v = 0;
    ck_convert_to_f64(t, code, &v);
    return v;
}

/* x in [0, 1] rounded to e4m3 (nearest even), the spacing there (*ulp) and whether x lies within
 * relative distance `near` of a rounding midpoint (a few ulp of f32 in the kernel's x may round
 * either way). */
static double e4m3_round(double x, double near, double *ulp, int *ambiguous)
{
    int e;
    frexp(x, &e);                                             /* x = f 2^e, f in [0.5, 1) */
    double sp = x < 1.0 / 64 ? 1.0 / 512 : ldexp(1.0, e - 4); /* 3 fraction bits */
    double u = x / sp, f = floor(u), r = u - f;
    double q = (r > 0.5 || (r == 0.5 && fmod(f, 2.0) != 0.0)) ? f + 1 : f;
    *ulp = sp;
    *ambiguous = x > 0 && fabs(r - 0.5) * sp <= near * x;
    return q * sp;
}

/* The descale of tensor d (host copy; NULL: 1) for batch b, key/value head hk. */
static double descale(const ck_attention_problem *p, const float *d, int64_t b, int64_t hk)
{
    if (!d)
        return 1.0;
    return p->descale == CK_ATTN_DESCALE_HEAD ? (double)d[b * p->h_k + hk] : (double)d[0];
}

/* The bias element (b, h, i, j) of the problem's bias (host copy). */
static double bias_at(const ck_attention_problem *p, const void *bias, int64_t b, int64_t h,
                      int64_t i, int64_t j)
{
    const ck_attn_bias *bi = &p->var.bias;
    int64_t x = b * bi->strides[0] + h * bi->strides[1] + i * bi->strides[2] + j * bi->strides[3];
    if (bi->dtype == CK_DTYPE_F32)
        return ((const float *)bias)[x];
    return elem(bias, bi->dtype, x);
}

/* Element offset of key row j of sequence b, head hk, in K or V (strides st): through the
 * block table when paged; -1 when its page is outside the pool. */
static int64_t key_offset(const ck_attention_problem *p, const ck_attn_ref_in *in,
                          const ck_attn_strides *st, int64_t b, int64_t k0, int64_t j, int64_t hk)
{
    if (!p->var.page_size)
        return ck_attn_offset(st, b, k0 + j, hk);
    int64_t pg = in->block_table[b * p->var.max_pages + j / p->var.page_size];
    if (pg < 0 || pg >= p->var.num_pages)
        return -1;
    return ck_attn_offset(st, pg, j % p->var.page_size, hk);
}

void ck_attn_reference_row(const ck_attn_prob *prob, const void *q, const void *k, const void *v,
                           const int32_t *cu_q, const int32_t *cu_k, double scale, int64_t b,
                           int64_t h, int64_t i, double *o, double *lse, double *mag, double *smag)
{
    ck_attn_ref_in in;
    memset(&in, 0, sizeof in);
    in.q = q, in.k = k, in.v = v, in.cu_q = cu_q, in.cu_k = cu_k, in.scale = scale;
    ck_attn_reference_row_in(prob, &in, b, h, i, o, lse, mag, smag);
}

/* fp8: softmax and P V of one row from its scores s[0 .. n) (keys jlo ..), max mx, O's descale
 * dv. P exact, or with in->p_tile rounded to e4m3 as the kernel rounds it: relative to the
 * running max of the key tiles of p_tile keys up to its own (in->fp8_out: the error terms). */
static void fp8_pv(const ck_attn_prob *prob, const ck_attn_ref_in *in, double *s, int64_t n,
                   int64_t jlo, double mx, double dv, double smag, int64_t b, int64_t k0,
                   int64_t hk, double *o, double *lse, double *mag)
{
    const ck_attention_problem *p = &prob->p;
    double l = 0, run = -INFINITY, near = ck_attn_fp8_near(prob, smag);
    double *w = malloc((size_t)n * 2 * sizeof *w), *amb = w + n;
    if (!w) {
        for (int64_t c = 0; c < p->d_v; ++c)
            o[c] = NAN;
        *lse = NAN;
        return;
    }
    for (int64_t j = 0, t_end = -1; j < n; ++j) {
        if (in->p_tile > 0 && jlo + j > t_end) { /* a new key tile: its running max */
            t_end = ((jlo + j) / in->p_tile + 1) * in->p_tile - 1;
            for (int64_t x = j; x < n && jlo + x <= t_end; ++x)
                run = s[x] > run ? s[x] : run;
        }
        double e = exp(s[j] - mx), ulp = 0;
        int ambiguous = 0;
        w[j] = e, amb[j] = 0;
        if (in->p_tile > 0) { /* rounded in the running max's units, then rescaled */
            double f = exp(run - mx);
            w[j] = e4m3_round(exp(s[j] - run), near, &ulp, &ambiguous) * f;
            amb[j] = ambiguous ? ulp * f : 0;
        }
        s[j] = e;
        l += e;
    }
    *lse = mx + log(l);
    double vsum_max = 0, amb_max = 0;
    for (int64_t c = 0; c < p->d_v; ++c) {
        double acc = 0, aacc = 0, vsum = 0, asum = 0;
        for (int64_t j = 0; j < n; ++j) {
            int64_t vo = ck_attn_offset(&p->v, b, k0 + jlo + j, hk);
            double v = elem(in->v, p->dtype, vo + c) * dv;
            acc += w[j] * v;
            aacc += fabs(s[j] * v);
            vsum += fabs(v);
            asum += amb[j] * fabs(v);
        }
        o[c] = acc / l;
        *mag = aacc / l > *mag ? aacc / l : *mag;
        vsum_max = vsum / l > vsum_max ? vsum / l : vsum_max;
        amb_max = asum / l > amb_max ? asum / l : amb_max;
    }
    if (in->fp8_out)
        in->fp8_out->vsum = vsum_max, in->fp8_out->amb = amb_max;
    free(w);
}

void ck_attn_reference_row_in(const ck_attn_prob *prob, const ck_attn_ref_in *in, int64_t b,
                              int64_t h, int64_t i, double *o, double *lse, double *mag,
                              double *smag)
{
    const ck_attention_problem *p = &prob->p;
    const ck_attn_variants *var = &p->var;
    double scale = in->scale;
    int64_t hk = h / (p->h_q / p->h_k), sq, sk, q0, k0, lo, hi;
    ck_attn_seq(prob, in->cu_q, p->total_q, p->s_q, b, &sq, &q0);
    ck_attn_seq(prob, in->cu_k, p->total_k, p->s_k, b, &sk, &k0);
    if (var->page_size) { /* seqlens_k clamped to [0, s_k]; a page outside the pool: NaN */
        sk = in->seqlens_k ? in->seqlens_k[b] : p->s_k;
        sk = sk < 0 ? 0 : sk > p->s_k ? p->s_k : sk;
        for (int64_t j = 0; j < sk; j += var->page_size)
            if (key_offset(p, in, &p->k, b, 0, j, hk) < 0) {
                for (int64_t c = 0; c < p->d_v; ++c)
                    o[c] = NAN;
                *lse = NAN, *mag = *smag = 0;
                return;
            }
    }
    ck_attn_band(prob, sq, sk, &lo, &hi);
    int64_t off = p->align == CK_ATTN_BOTTOM_RIGHT ? sk - sq : 0;
    int64_t jlo = i + lo < 0 ? 0 : i + lo;
    int64_t jhi = i + hi > sk - 1 ? sk - 1 : i + hi;
    for (int64_t c = 0; c < p->d_v; ++c)
        o[c] = 0;
    *mag = *smag = 0;
    *lse = -INFINITY;
    if (jhi < jlo)
        return;
    int64_t n = jhi - jlo + 1;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) { /* the reference cannot fail silently: NaN fails every comparison */
        for (int64_t c = 0; c < p->d_v; ++c)
            o[c] = NAN;
        *lse = NAN;
        return;
    }
    int64_t qo = ck_attn_offset(&p->q, b, q0 + i, h);
    double mx = -INFINITY, dqk = 1.0, dv = 1.0;
    if (p->dtype == CK_DTYPE_FP8_E4M3) {
        dqk = descale(p, in->descale_q, b, hk) * descale(p, in->descale_k, b, hk);
        dv = descale(p, in->descale_v, b, hk);
    }
    for (int64_t j = 0; j < n; ++j) {
        int64_t ko = key_offset(p, in, &p->k, b, k0, jlo + j, hk);
        double dot = 0, adot = 0;
        for (int64_t c = 0; c < p->d; ++c) {
            double x = elem(in->q, p->dtype, qo + c) * elem(in->k, p->dtype, ko + c);
            dot += x;
            adot += fabs(x);
        }
        s[j] = scale * dqk * dot;
        adot *= dqk;
        if (p->softcap > 0.0f)
            s[j] = p->softcap * tanh(s[j] / p->softcap);
        double add = 0;
        if (in->bias && ck_attn_bias_code(prob))
            add += bias_at(p, in->bias, b, h, i, jlo + j);
        if (var->alibi)
            add -= (double)in->alibi[h] * (double)llabs(jlo + j - i - off);
        s[j] += add;
        if (scale * adot + fabs(add) > *smag)
            *smag = scale * adot + fabs(add);
        if (s[j] > mx)
            mx = s[j];
    }
    if (mx == -INFINITY) { /* every visible key masked by a -inf bias: as no key */
        free(s);
        *mag = *smag = 0;
        return;
    }
    if (p->dtype == CK_DTYPE_FP8_E4M3) {
        fp8_pv(prob, in, s, n, jlo, mx, dv, *smag, b, k0, hk, o, lse, mag);
        free(s);
        return;
    }
    double l = 0;
    for (int64_t j = 0; j < n; ++j) {
        s[j] = exp(s[j] - mx);
        l += s[j];
    }
    *lse = mx + log(l);
    if (var->dropout_p > 0.0f) /* P_ij dropped or scaled; l (and LSE) are the undropped */
        for (int64_t j = 0; j < n; ++j)
            s[j] = ck_attn_dropout_keep(prob, in->seed, in->offset, b, h, i, jlo + j)
                       ? s[j] / (1.0 - (double)var->dropout_p)
                       : 0.0;
    for (int64_t c = 0; c < p->d_v; ++c) {
        double acc = 0, aacc = 0;
        for (int64_t j = 0; j < n; ++j) {
            int64_t vo = key_offset(p, in, &p->v, b, k0, jlo + j, hk);
            double x = s[j] * elem(in->v, p->dtype, vo + c);
            acc += x;
            aacc += fabs(x);
        }
        o[c] = acc / l;
        if (aacc / l > *mag)
            *mag = aacc / l;
    }
    free(s);
}

static double fp8_acc(const ck_attn_prob *prob);

/* Unit roundoff of the 16-bit types. */
static double unit(ck_dtype t)
{
    return t == CK_DTYPE_BF16 ? 1.0 / 256 : 1.0 / 2048;
}

/* The error of O relative to its magnitude: P rounded to the input type (u), the scores' f32
 * accumulation (d terms, the error of each a multiple of smag * 2^-24, which moves p by as
 * much relative), exp2's approximation and the rescaling chain of the online softmax over the
 * key tiles (a few ulp of f32 each), and O's own rounding to the output type. */
double ck_attn_tolerance_o(const ck_attn_prob *prob, double mag, double smag, double ref)
{
    const ck_attention_problem *p = &prob->p;
    double f32 = 1.0 / 16777216.0;
    double score = (double)p->d * smag * f32 * 2 + (double)p->softcap * 8 * f32;
    double chain = (double)(p->s_k / 16 + 8) * 4 * f32;
    return mag * (unit(p->dtype) + score + chain) + fabs(ref) * unit(p->dtype) + 1e-6;
}

double ck_attn_tolerance_lse(const ck_attn_prob *prob, double smag, double ref)
{
    const ck_attention_problem *p = &prob->p;
    double f32 = 1.0 / 16777216.0;
    return (double)p->d * smag * f32 * 2 + (double)p->softcap * 8 * f32 +
           (double)(p->s_k / 16 + 8) * 4 * f32 + fabs(ref) * 4 * f32 + fp8_acc(prob) * smag + 1e-6;
}

/* fp8: the tensor cores' accumulation of e4m3 products, which keeps about 14 bits of each
 * partial sum on the H100 (DeepSeek-V3's measurement; the emulator sums exactly): 2^-13 of the
 * magnitude per k-step of 32, over d (S) and the key tiles' k-steps (O). 0 for other types. */
static double fp8_acc(const ck_attn_prob *prob)
{
    const ck_attention_problem *p = &prob->p;
    if (p->dtype != CK_DTYPE_FP8_E4M3)
        return 0;
    return (double)(p->d / 32 + p->s_k / 32 + 2) / 8192.0;
}

double ck_attn_fp8_near(const ck_attn_prob *prob, double smag)
{
    const ck_attention_problem *p = &prob->p;
    double f32 = 1.0 / 16777216.0;
    return (double)p->d * smag * f32 * 4 + (double)(p->s_k / 16 + 8) * 8 * f32 +
           fp8_acc(prob) * smag;
}

double ck_attn_tolerance_o_fp8(const ck_attn_prob *prob, double mag, double smag, double vsum,
                               double amb, double ref, int quantized)
{
    const ck_attention_problem *p = &prob->p;
    double f32 = 1.0 / 16777216.0, score = (double)p->d * smag * f32 * 2 + fp8_acc(prob) * smag;
    double chain = (double)(p->s_k / 16 + 8) * 4 * f32 + fp8_acc(prob);
    double pq = quantized ? 2 * score : 1.0 / 16; /* P's rounding, or only the shifts of p */
    double sub = quantized ? amb : vsum / 1024;   /* subnormal P, or the ambiguous roundings */
    return mag * (pq + score + chain) + sub + fabs(ref) / 256 + 1e-6;
}
