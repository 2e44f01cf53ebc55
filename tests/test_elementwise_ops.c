/*
 * ck_elementwise: every op, broadcasting, strided inputs, dtypes (bf16, f16, f64, fp8, fp4
 * output), in place, the parser and the errors. Each output element is compared with the
 * library's CPU reference (src/ops/elementwise/reference.c), which evaluates the program in
 * double precision on the same (rounded) inputs.
 *
 * Tolerance: |got - ref| <= |ref| * (eps_out + eps_cast + 4e-6) + 4e-6 * (1 + max|input|).
 * eps_out (eps_cast) is the epsilon of the destination type (of a cast step's type): the
 * kernel rounds its fp32 result once into that type, and a reference value close to a
 * rounding boundary may land on the other neighbour (at most one unit, = eps relative).
 * 4e-6 covers fp32 arithmetic of a few steps plus expf/tanhf/erff (a few ulp = 1.2e-7 each on
 * the host libm and CUDA's, ~30x margin) and the GPU's fused multiply-adds; the absolute term
 * covers cancellation near zero (gelu of negative inputs, x0 - x1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/elementwise/ew_internal.h"
#include "test.h"

static ck_context *ctx;
static ck_device *dev;
static int on_gpu;
static uint64_t rng = 777;

typedef struct host_t {
    ck_tensor t;      /* device description */
    unsigned char *h; /* host copy of the storage */
    double *v;        /* host values of the storage elements */
    size_t elems;     /* storage elements */
} host_t;

/* A tensor of `shape` with `strides` (NULL: packed), storage of `elems` elements, random
 * values in [lo, hi] rounded to dtype. */
static void make(host_t *x, ck_dtype dt, int rank, const int64_t *shape, const int64_t *strides,
                 size_t elems, double lo, double hi)
{
    memset(x, 0, sizeof *x);
    size_t bytes = 0;
    ck_dtype_storage_size(dt, elems, &bytes);
    float *f = malloc(sizeof(float) * (elems + 1));
    for (size_t i = 0; i < elems; ++i)
        f[i] = (float)(lo + (hi - lo) * (double)(ckt_rand64(&rng) >> 11) * 0x1p-53);
    x->h = malloc(bytes + 1);
    x->v = malloc(sizeof(double) * (elems + 1));
    x->elems = elems;
    CHECK_OK(ck_convert_array(dt, x->h, CK_DTYPE_F32, f, elems, NULL));
    CHECK_OK(ck_convert_array(CK_DTYPE_F64, x->v, dt, x->h, elems, NULL));
    void *d = NULL;
    CHECK_OK(ck_malloc(dev, bytes ? bytes : 1, &d));
    CHECK_OK(ck_memcpy_h2d(dev, d, x->h, bytes, NULL));
    CHECK_OK(ck_tensor_init(&x->t, d, dt, rank, shape, strides));
    free(f);
}

static void drop(host_t *x)
{
    ck_free(dev, x->t.data);
    free(x->h);
    free(x->v);
}

/* Run expr over dst (packed, `rank`/`shape`, dtype dt) and check every element. */
static void run_case(const char *expr, ck_dtype dt, int rank, const int64_t *shape, host_t *in,
                     int nin, int in_place)
{
    ck_ew_program prog;
    CHECK_OK(ck_ew_parse(expr, &prog));
    host_t out;
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
        n *= shape[d];
    if (in_place)
        out = in[0];
    else
        make(&out, dt, rank, shape, NULL, (size_t)n, 0, 0);
    ck_tensor ins[CK_EW_MAX_INPUTS];
    for (int k = 0; k < nin; ++k)
        ins[k] = in[k].t;
    ck_status st = ck_elementwise(ctx, &prog, ins, nin, &out.t);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", expr, ck_last_error());
    size_t bytes = 0;
    ck_dtype_storage_size(dt, (size_t)n, &bytes);
    unsigned char *g = malloc(bytes + 1);
    double *gv = malloc(sizeof(double) * ((size_t)n + 1));
    CHECK_OK(ck_memcpy_d2h(dev, g, out.t.data, bytes, NULL));
    CHECK_OK(ck_convert_array(CK_DTYPE_F64, gv, dt, g, (size_t)n, NULL));
    double eps_out = ck_dtype_get(dt)->epsilon, eps_cast = 0;
    if (ck_dtype_get(dt)->is_float == 0)
        eps_out = 0;
    for (int i = 0; i < prog.count; ++i)
        if (prog.steps[i].op == CK_EW_CAST)
            eps_cast += ck_dtype_get(prog.steps[i].dtype)->epsilon;
    long bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
        double x[CK_EW_MAX_INPUTS] = {0}, mx = 0;
        for (int k = 0; k < nin; ++k) {
            const ck_tensor *t = &in[k].t;
            int64_t rem = i, off = 0;
            for (int d = rank - 1; d >= 0; --d) {
                int64_t c = rem % shape[d];
                rem /= shape[d];
                int td = d - (rank - t->rank);
                if (td >= 0 && t->shape[td] > 1)
                    off += c * t->strides[td];
            }
            x[k] = in[k].v[off];
            mx = fmax(mx, fabs(x[k]));
        }
        double ref = ck_ew_reference(&prog, x);
        uint64_t c;
        double refq = ref;
        if (ck_convert_from_f64(dt, ref, CK_ROUND_NEAREST_EVEN, CK_OVERFLOW_DEFAULT, 0, &c) ==
            CK_SUCCESS)
            ck_convert_to_f64(dt, c, &refq); /* the saturated/rounded reference */
        double err = fabs(gv[i] - refq);
        double tol = fabs(refq) * (eps_out + eps_cast + 4e-6) + 4e-6 * (1 + mx);
        if (ck_dtype_get(dt)->is_float == 0)
            tol = 1.0; /* integers: one step of rounding */
        if (!(err <= tol)) {
            if (bad++ < 3)
                fprintf(stderr, "%s [%lld]: got %.9g, expected %.9g (x0 %.9g)\n", expr,
                        (long long)i, gv[i], refq, x[0]);
        }
        if (err > worst)
            worst = err;
    }
    CHECK_MSG(bad == 0, "%s -> %s: %ld of %lld wrong", expr, ck_dtype_name(dt), bad, (long long)n);
    free(g);
    free(gv);
    if (!in_place)
        drop(&out);
}

static void test_each_op(void)
{
    static const char *exprs[] = {"x0 + x1",
                                  "x0 - x1",
                                  "x0 * x1",
                                  "x0 / x1",
                                  "max(x0, x1)",
                                  "min(x0, x1)",
                                  "-x0 + 0*x1",
                                  "relu(x0) + 0*x1",
                                  "gelu(x0) + 0*x1",
                                  "gelu_erf(x0) + 0*x1",
                                  "silu(x0) + 0*x1",
                                  "sigmoid(x0) + 0*x1",
                                  "exp(x0) + 0*x1",
                                  "scale(x0, 0.3) + x1",
                                  "cast(x0, bf16) + 0*x1"};
    int64_t shape[1] = {1023};
    host_t in[2];
    make(&in[0], CK_DTYPE_F32, 1, shape, NULL, 1023, -5, 5);
    make(&in[1], CK_DTYPE_F32, 1, shape, NULL, 1023, 0.5, 2);
    for (size_t e = 0; e < sizeof exprs / sizeof exprs[0]; ++e)
        run_case(exprs[e], CK_DTYPE_F32, 1, shape, in, 2, 0);
    drop(&in[0]);
    /* the exp2 forms of silu/sigmoid/gelu over a wide range (large exponents, underflow,
     * overflow of 2^(x k) to infinity) */
    make(&in[0], CK_DTYPE_F32, 1, shape, NULL, 1023, -120, 120);
    run_case("silu(x0) + 0*x1", CK_DTYPE_F32, 1, shape, in, 2, 0);
    run_case("sigmoid(x0) + 0*x1", CK_DTYPE_F32, 1, shape, in, 2, 0);
    run_case("gelu(x0) + 0*x1", CK_DTYPE_F32, 1, shape, in, 2, 0);
    drop(&in[0]);
    drop(&in[1]);
}

static void test_sizes_bf16(void)
{
    const int64_t sizes[] = {1, 3, 17, 1023, 4097};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        host_t in[3];
        for (int k = 0; k < 3; ++k)
            make(&in[k], CK_DTYPE_BF16, 1, &sizes[s], NULL, (size_t)sizes[s], -3, 3);
        run_case("relu(x0 * x1 + x2)", CK_DTYPE_BF16, 1, &sizes[s], in, 3, 0);
        run_case("silu(x0)", CK_DTYPE_F16, 1, &sizes[s], in, 1, 0);
        for (int k = 0; k < 3; ++k)
            drop(&in[k]);
    }
    if (on_gpu) {
        int64_t big[2] = {16384, 8192};
        host_t in[3];
        for (int k = 0; k < 3; ++k)
            make(&in[k], CK_DTYPE_BF16, 2, big, NULL, (size_t)(big[0] * big[1]), -3, 3);
        run_case("relu(x0 * x1 + x2)", CK_DTYPE_BF16, 2, big, in, 3, 0);
        run_case("gelu(x0)", CK_DTYPE_BF16, 2, big, in, 1, 0);
        for (int k = 0; k < 3; ++k)
            drop(&in[k]);
    }
}

/* numpy broadcasting, size-1 dimensions, strided (transposed) input, rank-0 input. */
static void test_broadcast(void)
{
    int64_t shape[3] = {3, 1, 17};
    int64_t s1[1] = {17}, s2[3] = {3, 1, 1};
    host_t in[4];
    make(&in[0], CK_DTYPE_BF16, 3, shape, NULL, 51, -2, 2);
    make(&in[1], CK_DTYPE_F16, 1, s1, NULL, 17, -2, 2);
    make(&in[2], CK_DTYPE_F32, 3, s2, NULL, 3, -2, 2);
    make(&in[3], CK_DTYPE_F32, 0, NULL, NULL, 1, -2, 2);
    run_case("x0 * x1 + x2 - x3", CK_DTYPE_F32, 3, shape, in, 4, 0);
    run_case("max(x1, x3)", CK_DTYPE_BF16, 3, shape, in, 4, 0);
    for (int k = 0; k < 4; ++k)
        drop(&in[k]);
    /* a transposed input: shape [33, 40] with strides [1, 35] over a 40 x 35 buffer */
    int64_t sh2[2] = {33, 40}, tstr[2] = {1, 35}, bias[1] = {40};
    host_t t2[2];
    make(&t2[0], CK_DTYPE_F32, 2, sh2, tstr, 40 * 35, -3, 3);
    make(&t2[1], CK_DTYPE_BF16, 1, bias, NULL, 40, -3, 3);
    run_case("gelu_erf(x0 + x1)", CK_DTYPE_BF16, 2, sh2, t2, 2, 0);
    /* an input with an explicit stride-0 dimension */
    int64_t zstr[2] = {0, 1};
    host_t z;
    make(&z, CK_DTYPE_F32, 2, sh2, zstr, 40, -3, 3);
    run_case("sigmoid(x0)", CK_DTYPE_F32, 2, sh2, &z, 1, 0);
    drop(&z);
    drop(&t2[0]);
    drop(&t2[1]);
}

/* The vector path's broadcast modes (a row vector, one value per row, one value) next to a full
 * input: rows whose length is a multiple of the 16-byte pack, an odd row count. */
static void test_broadcast_vector(void)
{
    int64_t shape[2] = {37, 64}, row[1] = {64}, col[2] = {37, 1};
    host_t in[4];
    make(&in[0], CK_DTYPE_BF16, 2, shape, NULL, 37 * 64, -2, 2);
    make(&in[1], CK_DTYPE_BF16, 1, row, NULL, 64, -2, 2);
    make(&in[2], CK_DTYPE_F32, 2, col, NULL, 37, -2, 2);
    make(&in[3], CK_DTYPE_F32, 0, NULL, NULL, 1, -2, 2);
    run_case("x0 * x1 + x2 - x3", CK_DTYPE_BF16, 2, shape, in, 4, 0);
    run_case("silu(x1 + x2)", CK_DTYPE_F32, 2, shape, in, 4, 0);
    run_case("x3 * x1", CK_DTYPE_F16, 2, shape, in, 4, 0);
    for (int k = 0; k < 4; ++k)
        drop(&in[k]);
    /* rank 1: a scalar against a vector whose length is not a multiple of the pack (tail) */
    int64_t n[1] = {1003};
    host_t v[2];
    make(&v[0], CK_DTYPE_F32, 1, n, NULL, 1003, -3, 3);
    make(&v[1], CK_DTYPE_BF16, 0, NULL, NULL, 1, -3, 3);
    run_case("max(x0, x1)", CK_DTYPE_BF16, 1, n, v, 2, 0);
    drop(&v[0]);
    drop(&v[1]);
}

static void test_dtypes(void)
{
    int64_t n[1] = {1001}, n4[1] = {1000};
    host_t a[2];
    make(&a[0], CK_DTYPE_F64, 1, n, NULL, 1001, -3, 3);
    make(&a[1], CK_DTYPE_F32, 1, n, NULL, 1001, -3, 3);
    run_case("exp(x0) * x1", CK_DTYPE_F64, 1, n, a, 2, 0); /* fp64 compute */
    drop(&a[0]);
    drop(&a[1]);
    make(&a[0], CK_DTYPE_FP8_E4M3, 1, n, NULL, 1001, -3, 3);
    make(&a[1], CK_DTYPE_I8, 1, n, NULL, 1001, -100, 100);
    run_case("x0 + x1 * 0.25", CK_DTYPE_BF16, 1, n, a, 2, 0);
    run_case("x0 * 4", CK_DTYPE_FP8_E5M2, 1, n, a, 1, 0);
    drop(&a[0]);
    drop(&a[1]);
    make(&a[0], CK_DTYPE_F32, 1, n4, NULL, 1000, -3, 3);
    run_case("relu(x0)", CK_DTYPE_FP4_E2M1, 1, n4, a, 1, 0); /* packed output */
    run_case("x0", CK_DTYPE_FP6_E2M3, 1, n4, a, 1, 0);
    drop(&a[0]);
    /* in place: dst is input 0 */
    make(&a[0], CK_DTYPE_BF16, 1, n, NULL, 1001, -3, 3);
    run_case("x0 * 2 + 1", CK_DTYPE_BF16, 1, n, a, 1, 1);
    drop(&a[0]);
}

static void test_parse(void)
{
    ck_ew_program p;
    char buf[256];
    CHECK_OK(ck_ew_parse("relu(x0 * x1 + x2)", &p));
    CHECK_EQ_INT(p.count, 6);
    CHECK_OK(ck_ew_format(&p, buf, sizeof buf));
    CHECK_EQ_STR(buf, "relu(((x0 * x1) + x2))");
    CHECK_OK(ck_ew_parse("cast(silu(a), bf16) * -b / 2", &p));
    CHECK_OK(ck_ew_format(&p, buf, sizeof buf));
    CHECK_EQ_STR(buf, "(cast(silu(x0), bf16) * neg(x1)) / 2");
    CHECK_STATUS(ck_ew_parse("relu(x0", &p), CK_ERROR_PARSE);
    CHECK(strstr(ck_last_error(), "expected ')'") != NULL);
    CHECK_STATUS(ck_ew_parse("x0 + foo(x1)", &p), CK_ERROR_PARSE);
    CHECK_STATUS(ck_ew_parse("x9", &p), CK_ERROR_PARSE);
    CHECK_STATUS(ck_ew_parse("cast(x0, i8)", &p), CK_ERROR_PARSE);
    CHECK_STATUS(ck_ew_parse("x0 +", &p), CK_ERROR_PARSE);
    CHECK_STATUS(ck_ew_parse("x0 x1", &p), CK_ERROR_PARSE);
    char longx[600] = "x0";
    for (int i = 0; i < 70; ++i)
        strcat(longx, "+x0");
    CHECK_STATUS(ck_ew_parse(longx, &p), CK_ERROR_UNSUPPORTED);
    CHECK_OK(ck_ew_parse("x0 + x1", &p));
    CHECK_STATUS(ck_ew_check(&p, 1), CK_ERROR_INVALID_ARGUMENT); /* x1 with one input */
    p.count = 2;
    CHECK_STATUS(ck_ew_check(&p, 2), CK_ERROR_INVALID_ARGUMENT); /* two values left */
    p.steps[0].op = CK_EW_ADD;
    CHECK_STATUS(ck_ew_check(&p, 2), CK_ERROR_INVALID_ARGUMENT); /* underflow */
}

static void test_errors(void)
{
    int64_t s4[2] = {4, 8}, s3[1] = {3}, s0[1] = {0}, s5[3] = {2, 4, 8};
    host_t a, b, c, big;
    make(&a, CK_DTYPE_F32, 2, s4, NULL, 32, -1, 1);
    make(&b, CK_DTYPE_F32, 1, s3, NULL, 3, -1, 1);
    make(&c, CK_DTYPE_F32, 2, s4, NULL, 32, -1, 1);
    make(&big, CK_DTYPE_F32, 3, s5, NULL, 64, -1, 1);
    ck_ew_program p;
    CHECK_OK(ck_ew_parse("x0 + x1", &p));
    ck_tensor ins[5] = {a.t, b.t, a.t, a.t, a.t};
    CHECK_STATUS(ck_elementwise(ctx, &p, ins, 2, &c.t), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "does not broadcast") != NULL);
    ins[1] = big.t;
    CHECK_STATUS(ck_elementwise(ctx, &p, ins, 2, &c.t), CK_ERROR_INVALID_ARGUMENT); /* rank */
    CHECK_STATUS(ck_elementwise(ctx, &p, ins, 5, &c.t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_elementwise(ctx, &p, ins, 0, &c.t), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_elementwise(ctx, &p, ins, 1, &c.t), CK_ERROR_INVALID_ARGUMENT); /* x1 */
    CHECK_STATUS(ck_elementwise(ctx, NULL, ins, 2, &c.t), CK_ERROR_INVALID_ARGUMENT);
    /* partial overlap: input 0 is dst shifted by one element */
    ins[0] = c.t;
    ins[0].data = (float *)c.t.data + 1;
    ins[0].shape[0] = 3;
    ins[1] = ins[0];
    ck_tensor d3 = c.t;
    d3.shape[0] = 3;
    CHECK_STATUS(ck_elementwise(ctx, &p, ins, 2, &d3), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "overlaps") != NULL);
    /* misaligned pointer */
    ins[0] = a.t;
    ins[0].data = (char *)a.t.data + 2;
    CHECK_STATUS(ck_elementwise(ctx, &p, ins, 2, &c.t), CK_ERROR_INVALID_ARGUMENT);
    /* zero-size: no-op */
    ck_tensor z;
    CHECK_OK(ck_tensor_init(&z, NULL, CK_DTYPE_F32, 1, s0, NULL));
    ins[0] = z;
    ins[1] = z;
    int before = ck_context_kernel_count(ctx);
    CHECK_OK(ck_elementwise(ctx, &p, ins, 2, &z));
    CHECK_EQ_INT(ck_context_kernel_count(ctx), before);
    CHECK_STATUS(ck_elementwise_expr(ctx, "x0 +* x1", ins, 2, &c.t), CK_ERROR_PARSE);
    drop(&a);
    drop(&b);
    drop(&c);
    drop(&big);
}

int main(void)
{
    if (ck_context_create(CK_BACKEND_AUTO, 0, &ctx) != CK_SUCCESS) {
        printf("no device: %s\n", ck_last_error());
        return 1;
    }
    dev = ck_context_device(ctx);
    on_gpu = ck_context_backend(ctx) == CK_BACKEND_CUDA;
    RUN_TEST(test_parse);
    RUN_TEST(test_each_op);
    RUN_TEST(test_sizes_bf16);
    RUN_TEST(test_broadcast);
    RUN_TEST(test_broadcast_vector);
    RUN_TEST(test_dtypes);
    RUN_TEST(test_errors);
    printf("%d kernels built\n", ck_context_kernel_count(ctx));
    ck_context_destroy(ctx);
    return CK_TEST_REPORT();
}
