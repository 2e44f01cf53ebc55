/*
 * Host time per call of ck's one-call C operations with a cached kernel: checks, policy, kernel
 * lookup and the launch (asynchronous; the GPU's work is not waited for inside the timed loop).
 * The floor that a binding (Python) adds to. On a GPU host it measures the real launch; with a
 * stand-in driver (CK_CUDA_DRIVER_PATH pointing at tests/cuda_stub/libcuda_stub.c built as a
 * shared library) it measures ck's own host code alone, on any machine with NVRTC.
 * Build (after building ck in build/):
 *   cc -O2 -std=gnu11 -Iinclude -Ibuild/generated -Isrc bench/call_overhead.c \
 *      build/lib/libck.a -ldl -lpthread -lm -o build/call_overhead && build/call_overhead [iters]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck/ck.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct bench {
    ck_context *ctx;
    ck_tensor x, x2, y, yh, g, b, r, xt;
    ck_ew_program silu;
} bench;

enum { ROWS = 64, COLS = 1024 };

static ck_status op_softmax(bench *s)
{
    return ck_softmax(s->ctx, &s->x, &s->y, NULL);
}

static ck_status op_layernorm(bench *s)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_LAYERNORM;
    d.epsilon = 1e-5f;
    d.x = &s->x, d.gamma = &s->g, d.beta = &s->b, d.y = &s->y;
    return ck_norm_forward(s->ctx, &d);
}

static ck_status op_rmsnorm(bench *s)
{
    ck_norm_forward_desc d;
    memset(&d, 0, sizeof d);
    d.kind = CK_NORM_RMSNORM;
    d.epsilon = 1e-5f;
    d.x = &s->x, d.gamma = &s->g, d.y = &s->y;
    return ck_norm_forward(s->ctx, &d);
}

static ck_status op_sum(bench *s)
{
    int axis = 1;
    return ck_reduce(s->ctx, CK_REDUCE_SUM, &s->x, &axis, 1, &s->r, NULL);
}

static ck_status op_permute(bench *s)
{
    int perm[2] = {1, 0};
    return ck_permute(s->ctx, &s->x, perm, &s->xt);
}

static ck_status op_cast(bench *s)
{
    return ck_cast(s->ctx, &s->x, &s->yh, NULL);
}

static ck_status op_silu(bench *s)
{
    return ck_elementwise(s->ctx, &s->silu, &s->x, 1, &s->y);
}

static ck_status op_mul(bench *s)
{
    ck_tensor in[2] = {s->x, s->x2};
    ck_ew_program p;
    return ck_ew_parse("x0 * x1", &p) ?: ck_elementwise(s->ctx, &p, in, 2, &s->y);
}

static const struct {
    const char *name;
    ck_status (*fn)(bench *);
} ops[] = {
    {"ck_softmax", op_softmax},
    {"ck_norm_forward layernorm", op_layernorm},
    {"ck_norm_forward rmsnorm", op_rmsnorm},
    {"ck_reduce sum", op_sum},
    {"ck_permute (1, 0)", op_permute},
    {"ck_cast f32 -> f16", op_cast},
    {"ck_elementwise silu", op_silu},
    {"ck_elementwise_expr-like x0 * x1", op_mul},
};

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    bench s;
    memset(&s, 0, sizeof s);
    ck_status st = ck_context_create(CK_BACKEND_AUTO, 0, &s.ctx);
    if (st) {
        fprintf(stderr, "context: %s\n", ck_last_error());
        return 1;
    }
    ck_device *dev = ck_context_device(s.ctx);
    void *m[8];
    size_t bytes = (size_t)ROWS * COLS * 4;
    for (int i = 0; i < 8; ++i)
        if (ck_malloc(dev, bytes, &m[i])) {
            fprintf(stderr, "malloc: %s\n", ck_last_error());
            return 1;
        }
    int64_t shape[2] = {ROWS, COLS}, tshape[2] = {COLS, ROWS}, vec[1] = {COLS}, rows[1] = {ROWS};
    ck_tensor_init(&s.x, m[0], CK_DTYPE_F32, 2, shape, NULL);
    ck_tensor_init(&s.x2, m[1], CK_DTYPE_F32, 2, shape, NULL);
    ck_tensor_init(&s.y, m[2], CK_DTYPE_F32, 2, shape, NULL);
    ck_tensor_init(&s.yh, m[3], CK_DTYPE_F16, 2, shape, NULL);
    ck_tensor_init(&s.xt, m[4], CK_DTYPE_F32, 2, tshape, NULL);
    ck_tensor_init(&s.g, m[5], CK_DTYPE_F32, 1, vec, NULL);
    ck_tensor_init(&s.b, m[6], CK_DTYPE_F32, 1, vec, NULL);
    ck_tensor_init(&s.r, m[7], CK_DTYPE_F32, 1, rows, NULL);
    ck_ew_parse("silu(x0)", &s.silu);
    printf("%-40s %10s\n", "one-call C operation (cached kernel)", "us/call");
    int failed = 0;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; ++k) {
        if ((st = ops[k].fn(&s)) != CK_SUCCESS) { /* warm: builds the kernel */
            printf("%-40s %10s  (%s)\n", ops[k].name, "failed", ck_last_error());
            failed = 1;
            continue;
        }
        ck_context_synchronize(s.ctx);
        double best = 1e30;
        for (int rep = 0; rep < 3; ++rep) {
            double t0 = now();
            for (int i = 0; i < iters; ++i)
                ops[k].fn(&s);
            double t = (now() - t0) / iters;
            ck_context_synchronize(s.ctx);
            best = t < best ? t : best;
        }
        printf("%-40s %10.2f\n", ops[k].name, best * 1e6);
    }
    for (int i = 0; i < 8; ++i)
        ck_free(dev, m[i]);
    ck_context_destroy(s.ctx);
    return failed;
}
