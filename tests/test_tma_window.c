/* TMA windows (ck_tma_window_make / _generate / _encode): tensor maps derived from descriptors
 * and tiles, the refusals, and a generated load + store of out-of-bounds boxes on the device
 * CK_DEVICE chooses (the emulator in CI), checked element by element. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile.h"
#include "ck/tile_kernel.h"
#include "kernel_harness.h"

static ck_descriptor *naive2(int64_t l0, int64_t l1, int64_t s0, int64_t s1)
{
    ck_ival len[2] = {ck_ival_int(l0), ck_ival_int(l1)},
            str[2] = {ck_ival_int(s0), ck_ival_int(s1)};
    ck_descriptor *d = NULL;
    CHECK_OK(ck_descriptor_make_naive(2, len, str, &d));
    return d;
}

static void test_row_and_column_major_maps(void)
{
    ck_descriptor *row = naive2(100, 72, 80, 1), *col = naive2(100, 72, 1, 104);
    ck_tma_window_spec s = {row, {64, 64}, CK_DTYPE_BF16, 3};
    ck_tma_window w;
    CHECK_OK(ck_tma_window_make(&s, &w));
    CHECK_EQ_INT(w.rank, 2);
    CHECK_EQ_INT(w.perm[0], 1);
    CHECK_EQ_INT(w.perm[1], 0);
    CHECK(w.map.dims[0] == 72 && w.map.dims[1] == 100);
    CHECK(w.map.strides[0] == 160);
    CHECK(w.map.box[0] == 64 && w.map.box[1] == 64);
    CHECK(w.box_bytes == 64 * 64 * 2);
    s.desc = col;
    s.tile[0] = 32, s.tile[1] = 16;
    s.swizzle = 2;
    CHECK_OK(ck_tma_window_make(&s, &w));
    CHECK_EQ_INT(w.perm[0], 0);
    CHECK(w.map.dims[0] == 100 && w.map.dims[1] == 72 && w.map.strides[0] == 208);
    CHECK(w.map.box[0] == 32 && w.map.box[1] == 16);
    ck_descriptor_destroy(row);
    ck_descriptor_destroy(col);
}

static void test_refusals(void)
{
    ck_tma_window w;
    ck_descriptor *odd = naive2(10, 10, 11, 1); /* 22-byte rows */
    ck_tma_window_spec s = {odd, {8, 8}, CK_DTYPE_BF16, 0};
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_UNSUPPORTED);
    ck_descriptor *nounit = naive2(10, 10, 16, 2);
    s.desc = nounit;
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_UNSUPPORTED);
    ck_descriptor *ok = naive2(10, 16, 16, 1);
    s.desc = ok;
    s.tile[1] = 300;
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_INVALID_ARGUMENT);
    s.tile[1] = 4; /* 8-byte inner row */
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_UNSUPPORTED);
    s.tile[1] = 128; /* 256-byte row with a 128-byte swizzle */
    s.swizzle = 3;
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_UNSUPPORTED);
    s.tile[1] = 8, s.swizzle = 7;
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_INVALID_ARGUMENT);
    s.swizzle = 0, s.dtype = CK_DTYPE_FP4_E2M1;
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_UNSUPPORTED);
    /* a padded view is not a strided box */
    ck_transform pad, pt;
    CHECK_OK(ck_make_pad_transform(ck_ival_int(10), ck_ival_int(2), ck_ival_int(2), &pad));
    CHECK_OK(ck_make_pass_through_transform(ck_ival_int(16), &pt));
    ck_transform ts[2] = {pad, pt};
    int lower[2] = {0, 1}, upper[2] = {0, 1};
    ck_descriptor *padded = NULL;
    CHECK_OK(ck_descriptor_transform(ok, 2, ts, lower, upper, &padded));
    s.desc = padded, s.dtype = CK_DTYPE_BF16;
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_UNSUPPORTED);
    /* a symbolic descriptor needs binding first */
    ck_expr_arena *ctx = NULL;
    ck_ival M;
    CHECK_OK(ck_expr_arena_create(&ctx));
    CHECK_OK(ck_expr_symbol(ctx, "M", 1, 1000, 1, &M));
    ck_ival len[2] = {M, ck_ival_int(16)}, str[2] = {ck_ival_int(16), ck_ival_int(1)};
    ck_descriptor *sym = NULL;
    CHECK_OK(ck_descriptor_make_naive(2, len, str, &sym));
    s.desc = sym;
    CHECK_STATUS(ck_tma_window_make(&s, &w), CK_ERROR_INVALID_ARGUMENT);
    char *src = NULL;
    CHECK_STATUS(ck_tma_window_generate("bad name", &w, &src), CK_ERROR_INVALID_ARGUMENT);
    ck_descriptor_destroy(sym);
    ck_expr_arena_destroy(ctx);
    ck_descriptor_destroy(padded);
    ck_descriptor_destroy(odd);
    ck_descriptor_destroy(nounit);
    ck_descriptor_destroy(ok);
}

/* Load a 16 x 32 box of a 37 x 45 row-major u16 matrix (ld 48) at an origin reaching past the
 * bottom-right corner, and store it back into a second matrix at another origin. */
static const char *user_kernel =
    "CK_KERNEL void tma_win_k(CK_GRID_CONSTANT const ck_tensor_map in, CK_GRID_CONSTANT const "
    "ck_tensor_map out, unsigned short *box_out, long long r0, long long c0, long long r1, long "
    "long c1)\n{\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned short, tile, 16 * 32, 128);\n"
    "    CK_SHARED_ARRAY_ALIGNED(unsigned long long, bar, 1, 8);\n"
    "    if (ck_thread_idx_x() == 0) {\n"
    "        ck_mbar_init(bar, 1);\n        ck_mbar_fence_init();\n    }\n"
    "    ck_sync_threads();\n"
    "    if (ck_thread_idx_x() == 0) {\n"
    "        ck_mbar_arrive_expect_tx(bar, CK_TMA_BYTES_w);\n"
    "        tma_load_w(tile, &in, bar, r0, c0);\n    }\n"
    "    ck_mbar_wait_parity(bar, 0);\n"
    "    for (int i = ck_thread_idx_x(); i < 16 * 32; i += ck_block_dim_x())\n"
    "        box_out[i] = tile[i];\n"
    "    ck_fence_proxy_async();\n    ck_sync_threads();\n"
    "    if (ck_thread_idx_x() == 0) {\n"
    "        tma_store_w(&out, tile, r1, c1);\n        ck_tma_store_commit();\n"
    "        ck_tma_store_wait(0);\n    }\n}\n";

static void test_generated_load_and_store(void)
{
    if (!ckk_open())
        return;
    enum { M = 37, N = 45, LD = 48, BR = 16, BC = 32 };
    ck_descriptor *d = naive2(M, N, LD, 1);
    ck_tma_window_spec s = {d, {BR, BC}, CK_DTYPE_BF16, 0};
    ck_tma_window w;
    CHECK_OK(ck_tma_window_make(&s, &w));
    char *gen = NULL;
    CHECK_OK(ck_tma_window_generate("w", &w, &gen));
    size_t n = strlen(gen) + strlen(user_kernel) + 64;
    char *src = malloc(n);
    snprintf(src, n, "#include \"ck_device.h\"\n%s%s", gen, user_kernel);
    CHECK(strstr(gen, "ck_tma_load_2d(smem, map, bar, (int)o1, (int)o0)") != NULL);
    unsigned short *h = malloc(sizeof *h * M * LD), *box = malloc(sizeof *box * BR * BC),
                   *back = malloc(sizeof *back * M * LD);
    for (int i = 0; i < M * LD; ++i)
        h[i] = (unsigned short)(1 + i * 7 % 60000);
    void *din = ckk_upload(h, sizeof *h * M * LD), *dout = ckk_upload(NULL, sizeof *h * M * LD),
         *dbox = ckk_upload(NULL, sizeof *box * BR * BC);
    ck_tensor_map min, mout;
    CHECK_OK(ck_tma_window_encode(ckk_device, &w, din, &min));
    CHECK_OK(ck_tma_window_encode(ckk_device, &w, dout, &mout));
    ck_module *mod = NULL;
    ck_kernel *k = NULL;
    ck_status st = ck_module_load(ckk_device, src, NULL, 0, &mod);
    CHECK_MSG(st == CK_SUCCESS, "%s", ck_last_error());
    if (st == CK_SUCCESS)
        CHECK_OK(ck_module_get_kernel(mod, "tma_win_k", &k));
    long long r0 = 30, c0 = 32, r1 = 8, c1 = 16; /* rows 30..45 and columns 32..63 */
    if (k) {
        CHECK_OK(ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 7, &min, sizeof min, &mout, sizeof mout,
                            &dbox, sizeof dbox, &r0, sizeof r0, &c0, sizeof c0, &r1, sizeof r1, &c1,
                            sizeof c1));
        ckk_download(box, dbox, sizeof *box * BR * BC);
        ckk_download(back, dout, sizeof *back * M * LD);
        for (int i = 0; i < BR; ++i)
            for (int j = 0; j < BC; ++j) {
                long long r = r0 + i, c = c0 + j;
                unsigned short want = r < M && c < N ? h[r * LD + c] : 0;
                CHECK_MSG(box[i * BC + j] == want, "box (%d, %d) = %u, expected %u", i, j,
                          box[i * BC + j], want);
            }
        for (int r = 0; r < M; ++r)
            for (int c = 0; c < N; ++c) {
                int in_box = r >= r1 && r < r1 + BR && c >= c1 && c < c1 + BC;
                unsigned short want = in_box ? box[(r - r1) * BC + (c - c1)] : 0x5A5A;
                CHECK_MSG(back[r * LD + c] == want, "out (%d, %d) = %u, expected %u", r, c,
                          back[r * LD + c], want);
            }
    }
    ck_free(ckk_device, din);
    ck_free(ckk_device, dout);
    ck_free(ckk_device, dbox);
    free(h);
    free(box);
    free(back);
    free(src);
    ck_tile_free(gen);
    ck_descriptor_destroy(d);
}

int main(void)
{
    RUN_TEST(test_row_and_column_major_maps);
    RUN_TEST(test_refusals);
    RUN_TEST(test_generated_load_and_store);
    ckk_close();
    return CK_TEST_REPORT();
}
