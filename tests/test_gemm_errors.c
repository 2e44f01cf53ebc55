/*
 * ck_gemm's refusals: every bad problem, plan and execution argument returns a ck_status with a
 * sentence (CHECK_STATUS checks both), and nothing is launched.
 */
#include <stdint.h>

#include "ck/ck.h"
#include "ops/gemm/gemm_internal.h"
#include "test.h"

static ck_context *ctx;

static ck_gemm_problem good(void)
{
    ck_gemm_problem p;
    ck_gemm_problem_init(&p);
    p.m = 40;
    p.n = 24;
    p.k = 32;
    return p;
}

static void test_problem_errors(void)
{
    ck_gemm_prob prob;
    ck_gemm_problem p = good();
    CHECK_OK(ck_gemm_prob_make(&p, &prob));
    CHECK_STATUS(ck_gemm_prob_make(NULL, &prob), CK_ERROR_INVALID_ARGUMENT);
    p.k = 0;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = good();
    p.m = -3;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = good();
    p.n = (int64_t)1 << 33; /* overflows 32-bit tile / element indices */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.m = p.n = 2000000000; /* tile count beyond 32 bits */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.a.ld = 31; /* row-major A needs ld >= k = 32 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = good();
    p.d.order = CK_GEMM_COL_MAJOR;
    p.d.ld = 39; /* column-major D needs ld >= m = 40 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = good();
    p.b.order = (ck_gemm_order)7;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    /* dtype combinations */
    p = good();
    p.b.dtype = CK_DTYPE_F16; /* bf16 x f16 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.a.dtype = p.b.dtype = CK_DTYPE_F64;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.a.dtype = CK_DTYPE_I8; /* i8 x bf16 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.d.dtype = CK_DTYPE_I32; /* i32 output only for i8 inputs */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.c.dtype = CK_DTYPE_F16; /* C neither D's type nor f32 */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.compute = CK_GEMM_COMPUTE_F32; /* compute types are for f32 inputs */
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = good();
    p.bias = CK_GEMM_BIAS_ROW;
    p.bias_dtype = CK_DTYPE_I8;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_UNSUPPORTED);
    p = good();
    p.activation = (ck_gemm_activation)42;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    p = good();
    ck_ew_program prog;
    CHECK_OK(ck_ew_parse("x0 + x1", &prog)); /* two inputs: the epilogue has one */
    p.epilogue = &prog;
    CHECK_STATUS(ck_gemm_prob_make(&p, &prob), CK_ERROR_INVALID_ARGUMENT);
    /* the public entry points refuse the same */
    p = good();
    p.k = 0;
    ck_gemm_plan *plan = NULL;
    CHECK_STATUS(ck_gemm_plan_create(ctx, &p, -1, &plan), CK_ERROR_INVALID_ARGUMENT);
    CHECK(plan == NULL);
    ck_gemm_candidate cand[4];
    int n = 0;
    CHECK_STATUS(ck_gemm_candidates(ctx, &p, cand, 4, &n), CK_ERROR_INVALID_ARGUMENT);
    p = good();
    CHECK_STATUS(ck_gemm_candidates(ctx, &p, cand, 0, &n), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_gemm_plan_create(ctx, &p, 123456789, &plan), CK_ERROR_INVALID_ARGUMENT);
}

static void test_execute_errors(void)
{
    ck_device *dev = ck_context_device(ctx);
    ck_gemm_problem p = good();
    p.c.dtype = CK_DTYPE_BF16;
    p.bias = CK_GEMM_BIAS_COL;
    ck_gemm_plan *plan = NULL;
    CHECK_OK(ck_gemm_plan_create(ctx, &p, -1, &plan));
    if (!plan)
        return;
    char *mem = NULL;
    CHECK_OK(ck_malloc(dev, 1 << 16, (void **)&mem));
    ck_gemm_args a;
    ck_gemm_args_init(&a);
    a.a = mem;                   /* 40 x 32 bf16: 2560 bytes */
    a.b = mem + 4096;            /* 32 x 24: 1536 bytes */
    a.c = mem + 8192;            /* 40 x 24: 1920 bytes */
    a.d = mem + 12288;
    a.bias = mem + 16384;
    a.beta = 1;
    CHECK_OK(ck_gemm_plan_execute(plan, &a));
    ck_gemm_args b = a;
    b.a = NULL;
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.bias = NULL;
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.a = mem + 2; /* the plan copies A in 16-byte pieces */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.d = mem + 1; /* not even element-aligned */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.d = mem + 2048; /* overlaps A */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.d = mem + 4096 + 512; /* overlaps B */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.bias = mem + 12288 + 64; /* bias inside D */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.c = mem + 12288 + 16; /* C partly overlapping D */
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    b = a;
    b.c = b.d; /* exactly D: in place, allowed */
    CHECK_OK(ck_gemm_plan_execute(plan, &b));
    b = a;
    b.scale_d = 0;
    CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_gemm_plan_execute(plan, NULL), CK_ERROR_INVALID_ARGUMENT);
    ck_gemm_plan_destroy(plan);
    /* in-place C of another type than D */
    p = good();
    p.c.dtype = CK_DTYPE_F32;
    CHECK_OK(ck_gemm_plan_create(ctx, &p, -1, &plan));
    if (plan) {
        b = a;
        b.bias = NULL;
        b.c = b.d;
        CHECK_STATUS(ck_gemm_plan_execute(plan, &b), CK_ERROR_INVALID_ARGUMENT);
        ck_gemm_plan_destroy(plan);
    }
    /* the tensor form: shapes that do not chain, a bias of the wrong length, rank 3 */
    ck_tensor ta, tb, td, tbias;
    int64_t sa[2] = {40, 32}, sb[2] = {31, 24}, sd[2] = {40, 24}, s3[3] = {2, 20, 32};
    CHECK_OK(ck_tensor_init(&ta, mem, CK_DTYPE_BF16, 2, sa, NULL));
    CHECK_OK(ck_tensor_init(&tb, mem + 4096, CK_DTYPE_BF16, 2, sb, NULL));
    CHECK_OK(ck_tensor_init(&td, mem + 12288, CK_DTYPE_F32, 2, sd, NULL));
    CHECK_STATUS(ck_gemm(ctx, &ta, &tb, NULL, &td, NULL), CK_ERROR_INVALID_ARGUMENT);
    sb[0] = 32;
    CHECK_OK(ck_tensor_init(&tb, mem + 4096, CK_DTYPE_BF16, 2, sb, NULL));
    CHECK_OK(ck_gemm(ctx, &ta, &tb, NULL, &td, NULL));
    int64_t blen = 23;
    CHECK_OK(ck_tensor_init(&tbias, mem + 20000, CK_DTYPE_F32, 1, &blen, NULL));
    ck_gemm_options o;
    ck_gemm_options_init(&o);
    o.bias = &tbias;
    o.bias_mode = CK_GEMM_BIAS_COL;
    CHECK_STATUS(ck_gemm(ctx, &ta, &tb, NULL, &td, &o), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_tensor_init(&ta, mem, CK_DTYPE_BF16, 3, s3, NULL));
    CHECK_STATUS(ck_gemm(ctx, &ta, &tb, NULL, &td, NULL), CK_ERROR_INVALID_ARGUMENT);
    int64_t st[2] = {64, 2}; /* neither row- nor column-major */
    CHECK_OK(ck_tensor_init(&ta, mem, CK_DTYPE_BF16, 2, sa, st));
    CHECK_STATUS(ck_gemm(ctx, &ta, &tb, NULL, &td, NULL), CK_ERROR_UNSUPPORTED);
    CHECK_OK(ck_context_synchronize(ctx));
    ck_free(dev, mem);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &ctx));
    if (!ctx)
        return 1;
    RUN_TEST(test_problem_errors);
    RUN_TEST(test_execute_errors);
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
