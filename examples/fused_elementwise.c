/*
 * A user-written fused elementwise kernel with ck's tile programming API:
 *
 *   y[i][j] = max(alpha * a[i][j] + b[i][j], 0)      (a strided, b and y packed; f32)
 *
 * over an M x N problem whose sizes and a's row stride are run-time symbols. The host builds
 * the descriptors (symbolic M, N, lda) and one distribution (CK's thread-raked 2-D pattern:
 * 128 threads, 32 x 64 tiles, 4-element vectors), ck generates load_a/load_b/store_y, the
 * kernel does the arithmetic on the registers, and each block handles one tile (masked at the
 * edges: M and N need not be multiples of the tile). Checked against a CPU loop.
 *
 * Runs on the GPU when one is usable, else on ck's CPU emulator (CK_DEVICE=host|cuda chooses).
 */
#include <stdio.h>
#include <stdlib.h>

#include <ck/tile_kernel.h>

enum { TM = 32, TN = 64 };

static const char *kernel_source =
    "CK_KERNEL void relu_axpb(float *y, float *a, float *b, float alpha, long long M,\n"
    "                         long long N, long long lda)\n"
    "{\n"
    "    long long row = (long long)ck_block_idx_y() * 32, col = (long long)ck_block_idx_x() * "
    "64;\n"
    "    ck_win_a wa = make_win_a(a, row, col, M, N, lda);\n"
    "    ck_win_b wb = make_win_b(b, row, col, M, N);\n"
    "    ck_win_y wy = make_win_y(y, row, col, M, N);\n"
    "    float ra[CK_NREGS_a], rb[CK_NREGS_b];\n"
    "    load_a(ra, &wa);\n"
    "    load_b(rb, &wb);\n"
    "    for (int i = 0; i < CK_NREGS_a; ++i) {\n"
    "        float v = fmaf(alpha, ra[i], rb[i]);\n"
    "        ra[i] = v > 0.0f ? v : 0.0f;\n"
    "    }\n"
    "    store_y(ra, &wy);\n"
    "}\n";

static int fail(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, ck_last_error());
    return 1;
}

int main(void)
{
    const long long M = 100, N = 150, lda = 160; /* not multiples of the 32 x 64 tile */
    const float alpha = 1.5f;
    ck_expr_arena *ctx = NULL;
    ck_ival m, n, ld;
    ck_descriptor *da = NULL, *dp = NULL;
    if (ck_expr_arena_create(&ctx) != CK_SUCCESS ||
        ck_expr_symbol(ctx, "M", 1, 1 << 30, 1, &m) != CK_SUCCESS ||
        ck_expr_symbol(ctx, "N", 1, 1 << 30, 1, &n) != CK_SUCCESS ||
        ck_expr_symbol(ctx, "lda", 4, 1 << 30, 4, &ld) != CK_SUCCESS) /* lda % 4 == 0 */
        return fail("symbols");
    ck_ival lengths[2] = {m, n}, strides[2] = {ld, ck_ival_int(1)};
    if (ck_descriptor_make_naive(2, lengths, strides, &da) != CK_SUCCESS ||
        ck_descriptor_make_packed(2, lengths, &dp) != CK_SUCCESS)
        return fail("descriptors");
    ck_dist_encoding enc;
    if (ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 128, TM, TN, 4, &enc) != CK_SUCCESS)
        return fail("distribution");

    ck_tile_window_spec w[3] = {{0}, {0}, {0}};
    const char *names[3] = {"a", "b", "y"};
    for (int i = 0; i < 3; ++i) {
        w[i].name = names[i];
        w[i].desc = i == 0 ? da : dp;
        w[i].ctx = ctx;
        w[i].enc = &enc;
        w[i].dtype = CK_DTYPE_F32;
        w[i].origin_align[0] = TM; /* each block's origin is a multiple of the tile */
        w[i].origin_align[1] = TN;
        w[i].ops = i == 2 ? CK_WIN_STORE : CK_WIN_LOAD;
    }

    ck_device *dev = NULL;
    ck_module *mod = NULL;
    ck_kernel *kern = NULL;
    if (ck_device_open(CK_BACKEND_AUTO, 0, &dev) != CK_SUCCESS)
        return fail("device");
    int rc = 1;
    float *a = malloc(sizeof(float) * (size_t)(M * lda)),
          *b = malloc(sizeof(float) * (size_t)(M * N));
    float *y = malloc(sizeof(float) * (size_t)(M * N));
    void *d_a = NULL, *d_b = NULL, *d_y = NULL;
    if (!a || !b || !y)
        goto done;
    for (long long i = 0; i < M * lda; ++i)
        a[i] = (float)((i * 37) % 101 - 50) * 0.25f;
    for (long long i = 0; i < M * N; ++i)
        b[i] = (float)((i * 53) % 89 - 44) * 0.5f;
    if (ck_tile_kernel_load(dev, 3, w, kernel_source, &mod) != CK_SUCCESS ||
        ck_module_get_kernel(mod, "relu_axpb", &kern) != CK_SUCCESS) {
        fail("kernel");
        goto done;
    }
    if (ck_malloc(dev, sizeof(float) * (size_t)(M * lda), &d_a) != CK_SUCCESS ||
        ck_malloc(dev, sizeof(float) * (size_t)(M * N), &d_b) != CK_SUCCESS ||
        ck_malloc(dev, sizeof(float) * (size_t)(M * N), &d_y) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, d_a, a, sizeof(float) * (size_t)(M * lda), NULL) != CK_SUCCESS ||
        ck_memcpy_h2d(dev, d_b, b, sizeof(float) * (size_t)(M * N), NULL) != CK_SUCCESS ||
        ck_memset_d8(dev, d_y, 0xff, sizeof(float) * (size_t)(M * N), NULL) != CK_SUCCESS) {
        fail("memory");
        goto done;
    }
    ck_launch_config cfg = {{(unsigned)((N + TN - 1) / TN), (unsigned)((M + TM - 1) / TM), 1},
                            {128, 1, 1},
                            {0, 0, 0},
                            0,
                            NULL};
    float al = alpha;
    long long pm = M, pn = N, pl = lda;
    void *args[7] = {&d_y, &d_a, &d_b, &al, &pm, &pn, &pl};
    size_t sizes[7] = {sizeof d_y, sizeof d_a, sizeof d_b, sizeof al,
                       sizeof pm,  sizeof pn,  sizeof pl};
    if (ck_launch(kern, &cfg, args, sizes, 7) != CK_SUCCESS ||
        ck_device_synchronize(dev) != CK_SUCCESS ||
        ck_memcpy_d2h(dev, y, d_y, sizeof(float) * (size_t)(M * N), NULL) != CK_SUCCESS) {
        fail("run");
        goto done;
    }
    long long bad = 0;
    for (long long i = 0; i < M; ++i)
        for (long long j = 0; j < N; ++j) {
            float v = (float)((double)alpha * a[i * lda + j] + b[i * N + j]); /* exact here */
            float want = v > 0.0f ? v : 0.0f;
            if (y[i * N + j] != want && bad++ < 5)
                fprintf(stderr, "y[%lld][%lld] = %g, expected %g\n", i, j, y[i * N + j], want);
        }
    printf("relu(%g * a + b) on %lld x %lld (lda %lld) in %u x %u tiles of %d x %d: %s\n", alpha, M,
           N, lda, cfg.grid[1], cfg.grid[0], TM, TN, bad ? "MISMATCH" : "ok");
    rc = bad != 0;
done:
    ck_free(dev, d_a);
    ck_free(dev, d_b);
    ck_free(dev, d_y);
    free(a);
    free(b);
    free(y);
    ck_device_close(dev);
    ck_descriptor_destroy(da);
    ck_descriptor_destroy(dp);
    ck_expr_arena_destroy(ctx);
    return rc;
}
