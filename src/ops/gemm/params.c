/*
 * THE parameter table of the GEMM kernels: every quantity a kernel source depends on, as one
 * list of (name, value). The generated #defines and the kernel cache key are both printed from
 * this list, so a key can never miss a field the source uses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gen/sbuf.h"
#include "ops/gemm/gemm_internal.h"

int ck_gemm_ld_div(int64_t ld)
{
    int d = 1;
    while (d < 16 && ld % (2 * d) == 0)
        d *= 2;
    return d;
}

int ck_gemm_matrix_div(const ck_gemm_matrix *m)
{
    int d = ck_gemm_ld_div(m->ld), s = m->batch_stride ? ck_gemm_ld_div(m->batch_stride) : 16;
    return d < s ? d : s;
}

int ck_gemm_copy_vec(const ck_gemm_prob *prob, int operand)
{
    const ck_gemm_matrix *m = operand == 0 ? &prob->p.a : &prob->p.b;
    int es = ck_gemm_dtype_bytes(m->dtype);
    return (m->ld * es) % 16 == 0 && (m->batch_stride * es) % 16 == 0 &&
           !(prob->scalar_copy & (1 << operand));
}

/* FNV-1a over the program's steps (opcode, input, value bits, dtype), for the key. */
static long long program_hash(const ck_gemm_prob *prob)
{
    if (!prob->has_epi)
        return 0;
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < prob->epi.count; ++i) {
        const ck_ew_step *s = &prob->epi.steps[i];
        unsigned long long w[4] = {(unsigned long long)s->op, (unsigned long long)s->input, 0,
                                   (unsigned long long)s->dtype};
        memcpy(&w[2], &s->value, sizeof w[2]);
        for (int k = 0; k < 4; ++k)
            for (int b = 0; b < 8; ++b) {
                h ^= (w[k] >> (8 * b)) & 0xff;
                h *= 1099511628211ull;
            }
    }
    return (long long)(h & 0x7fffffffffffffffull);
}

int ck_gemm_params(const ck_gemm_prob *prob, const ck_gemm_instance *inst, ck_gemm_param *out,
                   int max)
{
    const ck_gemm_problem *p = &prob->p;
    ck_gemm_param t[] = {
        {"GEMM_FAMILY", inst->family},
        {"GEMM_TILE_M", inst->tile_m},
        {"GEMM_TILE_N", inst->tile_n},
        {"GEMM_TILE_K", inst->tile_k},
        {"GEMM_STAGES", inst->stages},
        {"GEMM_WARPS_M", inst->warps_m},
        {"GEMM_WARPS_N", inst->warps_n},
        {"GEMM_CLUSTER", inst->cluster},
        {"GEMM_RASTER", inst->raster},
        {"GEMM_GROUP", inst->group},
        {"GEMM_PERSISTENT", inst->persistent},
        {"GEMM_SPLIT_K", inst->split_k > 1}, /* the count itself is a kernel argument */
        {"GEMM_DECOMP", inst->decomp},       /* 3 atomic split-K, 4 stream-K (ck/gemm.h) */
        {"GEMM_A_TYPE", p->a.dtype},
        {"GEMM_B_TYPE", p->b.dtype},
        {"GEMM_C_TYPE", prob->has_c ? (long long)p->c.dtype : -1},
        {"GEMM_D_TYPE", p->d.dtype},
        {"GEMM_A_KMAJOR", prob->a_kmajor},
        {"GEMM_B_KMAJOR", prob->b_kmajor},
        {"GEMM_C_ROW", prob->has_c ? p->c.order == CK_GEMM_ROW_MAJOR : -1},
        {"GEMM_D_ROW", p->d.order == CK_GEMM_ROW_MAJOR},
        {"GEMM_COMPUTE_IN", prob->compute_in},
        {"GEMM_SPLIT3", prob->split3},
        {"GEMM_A_VEC", ck_gemm_copy_vec(prob, 0)},
        {"GEMM_B_VEC", ck_gemm_copy_vec(prob, 1)},
        {"GEMM_LDA_DIV", ck_gemm_matrix_div(&p->a)},
        {"GEMM_LDB_DIV", ck_gemm_matrix_div(&p->b)},
        {"GEMM_LDC_DIV", prob->has_c ? ck_gemm_matrix_div(&p->c) : 0},
        {"GEMM_LDD_DIV", ck_gemm_matrix_div(&p->d)},
        {"GEMM_BATCHED", p->batch > 1},       /* the count and strides are kernel arguments */
        {"GEMM_N_DIV", ck_gemm_ld_div(p->n)}, /* whole 16-byte chunks per row of D (TMA store) */
        {"GEMM_BIAS", p->bias},
        {"GEMM_BIAS_TYPE", p->bias != CK_GEMM_BIAS_NONE ? (long long)p->bias_dtype : -1},
        {"GEMM_ACT", p->activation},
        {"GEMM_EPI_STEPS", prob->has_epi ? prob->epi.count : 0},
        {"GEMM_EPI_HASH", program_hash(prob)},
    };
    int n = (int)(sizeof t / sizeof t[0]);
    if (n + 1 + 5 * p->extra_count > max)
        return -1;
    memcpy(out, t, sizeof t);
    /* multi-D: the count, then per used extra its op, broadcast, type, order and divisor (of
     * ld and batch stride, as for C) */
    static const char *const names[CK_GEMM_MAX_EXTRAS][5] = {
        {"GEMM_X0_OP", "GEMM_X0_BCAST", "GEMM_X0_TYPE", "GEMM_X0_ROW", "GEMM_X0_DIV"},
        {"GEMM_X1_OP", "GEMM_X1_BCAST", "GEMM_X1_TYPE", "GEMM_X1_ROW", "GEMM_X1_DIV"},
        {"GEMM_X2_OP", "GEMM_X2_BCAST", "GEMM_X2_TYPE", "GEMM_X2_ROW", "GEMM_X2_DIV"},
        {"GEMM_X3_OP", "GEMM_X3_BCAST", "GEMM_X3_TYPE", "GEMM_X3_ROW", "GEMM_X3_DIV"},
    };
    out[n].name = "GEMM_EXTRAS";
    out[n++].value = p->extra_count;
    for (int x = 0; x < p->extra_count; ++x) {
        const ck_gemm_extra *e = &p->extras[x];
        int full = e->broadcast == CK_GEMM_EXTRA_FULL;
        ck_gemm_matrix mt = {e->dtype, e->order, e->ld, e->batch_stride};
        long long v[5] = {e->op, e->broadcast, e->dtype, full ? e->order == CK_GEMM_ROW_MAJOR : -1,
                          full ? ck_gemm_matrix_div(&mt) : 0};
        for (int k = 0; k < 5; ++k) {
            out[n].name = names[x][k];
            out[n++].value = v[k];
        }
    }
    int q = ck_gemm_quant_params(prob, out + n, max - n);
    return q < 0 ? -1 : n + q;
}

static char *take(ck_sbuf *b)
{
    if (b->oom) {
        free(b->s);
        return NULL;
    }
    return b->s ? b->s : calloc(1, 1);
}

char *ck_gemm_params_defines(const ck_gemm_param *params, int count)
{
    ck_sbuf b = {0};
    for (int i = 0; i < count; ++i)
        ck_sbuf_printf(&b, "#define %s %lld\n", params[i].name, params[i].value);
    return take(&b);
}

char *ck_gemm_params_key(const ck_gemm_param *params, int count)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "gemm");
    for (int i = 0; i < count; ++i)
        ck_sbuf_printf(&b, "/%s=%lld", params[i].name + 5, params[i].value);
    return take(&b);
}
