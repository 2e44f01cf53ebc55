/*
 * Quantized GEMM operands (CK's ABQuantGrouped and mixed-precision GEMMs): the checks of scale
 * tensors (per-tensor, per row / column, per block) and of B packed as 4-bit values (int4,
 * uint4 with zero points, fp4 e2m1), their kernel arguments and parameters, the pointer checks
 * of an execution, and how the CPU reference reads such operands.
 *
 * The kernels (sm80_quant_kernel.h) accumulate each K block's products in the tensor cores'
 * type (f32, or i32 for i8), then promote: acc += partial * sa(row, kb) * sb(kb, col). A
 * VECTOR scale is a block of (1, K): one K block, promoted once after the main loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/gemm/gemm_internal.h"

#define OP "ck_gemm"

static const char *const packed_names[] = {"none", "int4", "uint4", "fp4 e2m1"};

ck_status ck_gemm_quant_check_packed(const ck_gemm_problem *p)
{
    if ((int)p->b_packed < 0 || p->b_packed > CK_GEMM_PACKED_FP4_E2M1)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": b_packed = %d; accepted: CK_GEMM_PACKED_NONE (0), _INT4 (1), _UINT4 "
                          "(2) or _FP4_E2M1 (3).",
                       (int)p->b_packed);
    if (p->b_packed == CK_GEMM_PACKED_NONE)
        return CK_SUCCESS;
    const char *name = packed_names[p->b_packed];
    if (p->a.dtype != CK_DTYPE_F16 && p->a.dtype != CK_DTYPE_BF16)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": packed %s B needs f16 or bf16 A (the type B is dequantized to); A "
                          "is %s.",
                       name, ck_dtype_name(p->a.dtype));
    if (p->b.dtype != CK_DTYPE_U8)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": packed %s B is stored as bytes: b.dtype must be CK_DTYPE_U8 (two "
                          "values per byte), not %s.",
                       name, ck_dtype_name(p->b.dtype));
    if (p->b.order != CK_GEMM_COL_MAJOR)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": packed %s B must be column-major (K contiguous, two values per byte "
                          "along K: torch's [N, K / 2] uint8 weight).",
                       name);
    if (p->k % 2)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": packed %s B needs an even K (two values per byte); k = %lld.", name,
                       (long long)p->k);
    if (p->b_zeros && p->b_packed != CK_GEMM_PACKED_UINT4)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": zero points (b_zeros) apply to CK_GEMM_PACKED_UINT4 B only; B is "
                          "%s.",
                       name);
    if (p->b_zeros && p->scale_b.mode == CK_GEMM_SCALE_TENSOR)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": zero points (b_zeros) are laid out as B's scale tensor; scale_b.mode "
                          "must be CK_GEMM_SCALE_VECTOR or _BLOCK, not per-tensor.");
    return CK_SUCCESS;
}

/* Normalize one operand's scale: VECTOR -> block (1, K); check the block and the scale
 * matrix's layout (rows x cols of blocks, A: M x K blocks, B: K x N blocks). */
static ck_status check_scale(const char *name, ck_gemm_scale *s, int64_t mn, int64_t k, int k_step,
                             int is_b)
{
    if ((int)s->mode < 0 || s->mode > CK_GEMM_SCALE_BLOCK)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": scale_%s.mode = %d; accepted: CK_GEMM_SCALE_TENSOR (0), _VECTOR (1) "
                          "or _BLOCK (2).",
                       name, (int)s->mode);
    if (s->mode == CK_GEMM_SCALE_TENSOR) {
        memset(s, 0, sizeof *s);
        return CK_SUCCESS;
    }
    if (s->mode == CK_GEMM_SCALE_VECTOR) {
        s->block_mn = 1;
        s->block_k = (int)k;
    } else if (s->block_mn < 1 || s->block_k < 1 || s->block_k % k_step) {
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": scale_%s blocks of %d x %d; accepted: block_mn >= 1 and block_k a "
                          "positive multiple of %d (the K of one tensor-core step for these "
                          "inputs).",
                       name, s->block_mn, s->block_k, k_step);
    }
    if (s->order != CK_GEMM_ROW_MAJOR && s->order != CK_GEMM_COL_MAJOR)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": scale_%s.order = %d; accepted: CK_GEMM_ROW_MAJOR (0) or "
                          "CK_GEMM_COL_MAJOR (1).",
                       name, (int)s->order);
    int64_t bmn = (mn + s->block_mn - 1) / s->block_mn, bk = (k + s->block_k - 1) / s->block_k;
    int64_t rows = is_b ? bk : bmn, cols = is_b ? bmn : bk;
    int64_t contig = s->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    if (s->ld == 0)
        s->ld = contig;
    if (s->ld < contig || s->ld > (INT64_C(1) << 40))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": scale_%s (a %lld x %lld matrix of f32 scales, %s) has leading "
                          "dimension %lld; accepted: %lld to 2^40 (or 0 for packed).",
                       name, (long long)rows, (long long)cols,
                       s->order == CK_GEMM_ROW_MAJOR ? "row-major" : "column-major",
                       (long long)s->ld, (long long)contig);
    return CK_SUCCESS;
}

ck_status ck_gemm_quant_check(ck_gemm_prob *prob)
{
    ck_gemm_problem *p = &prob->p;
    ck_status st;
    if ((st = ck_gemm_quant_check_packed(p)))
        return st;
    int any = p->scale_a.mode != CK_GEMM_SCALE_TENSOR || p->scale_b.mode != CK_GEMM_SCALE_TENSOR ||
              p->b_packed != CK_GEMM_PACKED_NONE;
    if (!any) {
        memset(&p->scale_a, 0, sizeof p->scale_a);
        memset(&p->scale_b, 0, sizeof p->scale_b);
        p->b_zeros = 0;
        return CK_SUCCESS;
    }
    ck_dtype a = p->a.dtype;
    if (a == CK_DTYPE_F32)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": scale tensors and packed B are not supported with f32 inputs; "
                          "accepted: fp8, i8, f16 or bf16 A (per-tensor scales: ck_gemm_args).");
    if (p->d.dtype == CK_DTYPE_I32)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": scaled products are real numbers: D must be f32, f16, bf16 or fp8, "
                          "not i32, with scale tensors.");
    if (p->batch > 1)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": scale tensors and packed B are not supported in batched problems "
                          "yet (batch = %lld); run one problem per batch.",
                       (long long)p->batch);
    /* one tensor-core step of K: 32 bytes of A per row (16 f16/bf16, 32 fp8/i8) */
    int k_step = 32 / ck_gemm_dtype_bytes(a);
    if ((st = check_scale("a", &p->scale_a, p->m, p->k, k_step, 0)) ||
        (st = check_scale("b", &p->scale_b, p->n, p->k, k_step, 1)))
        return st;
    int ba = p->scale_a.mode == CK_GEMM_SCALE_BLOCK, bb = p->scale_b.mode == CK_GEMM_SCALE_BLOCK;
    if (ba && bb && p->scale_a.block_k != p->scale_b.block_k)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       OP ": scale_a and scale_b have blocks of %d and %d along K; accepted: the "
                          "same block_k for both (each K block's partial sum is scaled once).",
                       p->scale_a.block_k, p->scale_b.block_k);
    if (p->b_packed && bb && p->k % p->scale_b.block_k)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       OP ": the group size %d of packed B's scales does not divide k = %lld; "
                          "accepted: groups that tile K exactly.",
                       p->scale_b.block_k, (long long)p->k);
    if (!p->b_packed)
        p->b_zeros = 0;
    prob->quant = 1;
    prob->q_block_k = ba ? p->scale_a.block_k : bb ? p->scale_b.block_k : (int)p->k;
    return CK_SUCCESS;
}

/* Element strides of a scale matrix along its MN blocks and its K blocks (0 along K for a
 * VECTOR scale: one block). */
static void scale_strides(const ck_gemm_scale *s, int is_b, long long *mn, long long *k)
{
    int row = s->order == CK_GEMM_ROW_MAJOR;
    /* A's matrix: rows = MN blocks; B's: rows = K blocks */
    long long rstride = row ? s->ld : 1, cstride = row ? 1 : s->ld;
    *mn = is_b ? cstride : rstride;
    *k = s->mode == CK_GEMM_SCALE_VECTOR ? 0 : is_b ? rstride : cstride;
}

void ck_gemm_quant_kargs(const ck_gemm_plan *plan, const ck_gemm_args *args, ck_gemm_kargs *ka)
{
    const ck_gemm_prob *prob = &plan->prob;
    if (!prob->quant)
        return;
    const ck_gemm_problem *p = &prob->p;
    if (p->scale_a.mode != CK_GEMM_SCALE_TENSOR) {
        ka->sa = args->a_scales;
        ka->sa_bmn = p->scale_a.block_mn;
        scale_strides(&p->scale_a, 0, &ka->sa_mn, &ka->sa_k);
    }
    if (p->scale_b.mode != CK_GEMM_SCALE_TENSOR) {
        ka->sb = args->b_scales;
        ka->sb_bmn = p->scale_b.block_mn;
        scale_strides(&p->scale_b, 1, &ka->sb_mn, &ka->sb_k);
    }
    ka->zb = p->b_zeros ? args->b_zeros : NULL;
    ka->q_bk = prob->q_block_k;
    ka->q_kblocks = (int)((p->k + prob->q_block_k - 1) / prob->q_block_k);
}

/* Byte span of an operand's scale matrix. */
static void scale_span(const ck_gemm_scale *s, int64_t mn, int64_t k, int is_b, int es,
                       const void *ptr, uintptr_t *lo, uintptr_t *hi)
{
    int64_t bmn = (mn + s->block_mn - 1) / s->block_mn, bk = (k + s->block_k - 1) / s->block_k;
    int64_t rows = is_b ? bk : bmn, cols = is_b ? bmn : bk;
    int64_t contig = s->order == CK_GEMM_ROW_MAJOR ? cols : rows;
    int64_t lines = s->order == CK_GEMM_ROW_MAJOR ? rows : cols;
    *lo = (uintptr_t)ptr;
    *hi = *lo + (uintptr_t)(((lines - 1) * s->ld + contig) * es);
}

ck_status ck_gemm_quant_check_args(const ck_gemm_plan *plan, const ck_gemm_args *args)
{
    const ck_gemm_prob *prob = &plan->prob;
    if (!prob->quant)
        return CK_SUCCESS;
    const ck_gemm_problem *p = &prob->p;
    uintptr_t dlo = (uintptr_t)args->d, dhi, lo, hi;
    {
        int64_t contig = p->d.order == CK_GEMM_ROW_MAJOR ? p->n : p->m;
        int64_t lines = p->d.order == CK_GEMM_ROW_MAJOR ? p->m : p->n;
        dhi = dlo + (uintptr_t)(((lines - 1) * p->d.ld + contig) * ck_gemm_dtype_bytes(p->d.dtype));
    }
    struct {
        const char *name;
        const ck_gemm_scale *s;
        const void *ptr;
        int is_b, es;
        int64_t mn;
    } t[3] = {
        {"a_scales", &p->scale_a, args->a_scales, 0, 4, p->m},
        {"b_scales", &p->scale_b, args->b_scales, 1, 4, p->n},
        {"b_zeros", &p->scale_b, args->b_zeros, 1, 1, p->n},
    };
    for (int i = 0; i < 3; ++i) {
        if (t[i].s->mode == CK_GEMM_SCALE_TENSOR || (i == 2 && !p->b_zeros))
            continue;
        if (!t[i].ptr)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_gemm_plan_execute: pointer %s is NULL; the problem's scale mode "
                           "needs it.",
                           t[i].name);
        if ((uintptr_t)t[i].ptr % (unsigned)t[i].es)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_gemm_plan_execute: pointer %s = %p is not %d-byte aligned.",
                           t[i].name, t[i].ptr, t[i].es);
        scale_span(t[i].s, t[i].mn, p->k, t[i].is_b, t[i].es, t[i].ptr, &lo, &hi);
        if (lo < dhi && dlo < hi)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_gemm_plan_execute: %s overlaps D; scale tensors and zero points "
                           "must not share memory with D.",
                           t[i].name);
    }
    return CK_SUCCESS;
}

int ck_gemm_quant_params(const ck_gemm_prob *prob, ck_gemm_param *out, int max)
{
    if (!prob->quant)
        return 0;
    const ck_gemm_problem *p = &prob->p;
    int k_step = 32 / ck_gemm_dtype_bytes(p->a.dtype);
    int blocked = p->scale_a.mode == CK_GEMM_SCALE_BLOCK || p->scale_b.mode == CK_GEMM_SCALE_BLOCK;
    ck_gemm_param t[] = {
        {"GEMM_QUANT", 1},
        {"GEMM_SCALE_A", p->scale_a.mode},
        {"GEMM_SCALE_B", p->scale_b.mode},
        /* tensor-core steps per K block (0: one block, promoted after the main loop) */
        {"GEMM_QK_STEPS", blocked ? prob->q_block_k / k_step : 0},
        {"GEMM_B_PACKED", p->b_packed},
        {"GEMM_B_ZEROS", p->b_zeros},
    };
    int n = (int)(sizeof t / sizeof t[0]);
    if (n > max)
        return -1;
    memcpy(out, t, sizeof t);
    return n;
}

int ck_gemm_quant_supported_by(const ck_gemm_prob *prob, int family, char *reason, size_t size)
{
    const ck_gemm_problem *p = &prob->p;
    if (!prob->quant || family == CK_GEMM_FAMILY_SM80)
        return 1;
    if (p->b_packed) {
        snprintf(reason, size,
                 "the sm90 family does not take packed %s B yet (the sm80 family does)",
                 packed_names[p->b_packed]);
        return 0;
    }
    if (p->a.dtype != CK_DTYPE_FP8_E4M3 && p->a.dtype != CK_DTYPE_FP8_E5M2) {
        snprintf(reason, size,
                 "the sm90 family takes scale tensors with fp8 inputs only (A is %s; the sm80 "
                 "family takes them)",
                 ck_dtype_name(p->a.dtype));
        return 0;
    }
    int blocked = p->scale_a.mode == CK_GEMM_SCALE_BLOCK || p->scale_b.mode == CK_GEMM_SCALE_BLOCK;
    if (blocked && prob->q_block_k % 128) {
        snprintf(reason, size,
                 "the sm90 family promotes whole k-tiles of 128: block_k %d is not a multiple of "
                 "128 (the sm80 family takes it)",
                 prob->q_block_k);
        return 0;
    }
    return 1;
}

int ck_gemm_quant_filter(const ck_gemm_prob *prob, ck_gemm_instance *in, int n)
{
    if (!prob->quant || n <= 0 || in[0].family != CK_GEMM_FAMILY_SM90)
        return n;
    /* two accumulators (the total and the K block's) must fit the consumer's registers: tiles
     * of 128 x 128; whole tiles only (a split or stream-K share of K starts inside a K block) */
    int w = 0;
    for (int i = 0; i < n; ++i)
        if (in[i].tile_n <= 128 && in[i].split_k <= 1 && in[i].decomp == 0)
            in[w++] = in[i];
    return w;
}

/* ---- the CPU reference's view of quantized operands -------------------------------------- */

static double scale_at(const ck_gemm_scale *s, const float *ptr, int is_b, int64_t mn, int64_t k)
{
    if (s->mode == CK_GEMM_SCALE_TENSOR)
        return 1.0;
    int64_t bm = mn / s->block_mn, bk = k / s->block_k;
    int64_t r = is_b ? bk : bm, c = is_b ? bm : bk;
    return ptr[s->order == CK_GEMM_ROW_MAJOR ? r * s->ld + c : r + c * s->ld];
}

static double fp4_value(unsigned q)
{
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (q & 8u) ? -mag[q & 7u] : mag[q & 7u];
}

double ck_gemm_quant_a(const ck_gemm_prob *prob, const ck_gemm_args *h, double a, int64_t i,
                       int64_t k)
{
    return a * scale_at(&prob->p.scale_a, h->a_scales, 0, i, k);
}

double ck_gemm_quant_b(const ck_gemm_prob *prob, const ck_gemm_args *h, double b, int64_t k,
                       int64_t j)
{
    const ck_gemm_problem *p = &prob->p;
    if (p->b_packed) {
        const unsigned char *bytes = h->b;
        unsigned byte = bytes[j * p->b.ld + k / 2], q = (k % 2 ? byte >> 4 : byte) & 15u;
        if (p->b_packed == CK_GEMM_PACKED_INT4)
            b = (double)((int)q - ((q & 8u) ? 16 : 0));
        else if (p->b_packed == CK_GEMM_PACKED_FP4_E2M1)
            b = fp4_value(q);
        else {
            b = (double)q;
            if (p->b_zeros) {
                const ck_gemm_scale *s = &p->scale_b;
                int64_t r = k / s->block_k, c = j / s->block_mn;
                int64_t kst = s->mode == CK_GEMM_SCALE_VECTOR ? 0 : 1;
                b -= h->b_zeros[s->order == CK_GEMM_ROW_MAJOR ? r * kst * s->ld + c
                                                              : r * kst + c * s->ld];
            }
        }
    }
    return b * scale_at(&p->scale_b, h->b_scales, 1, j, k);
}
