/* Copy windows (ck_tile_copy_generate): global -> shared copies with cp.async. Tiles over odd-size
 * corners of random matrices (masked, zero-filled) are copied into swizzled and plain shared tiles
 * on the device CK_DEVICE chooses (the emulator in CI) and every element of the shared tile is
 * checked against the source through the tile's descriptor; the vector width chosen in each case
 * is asserted from the generated source; refusals with their reasons; NVRTC compiles the
 * generated sources for sm_80 and sm_90a. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/tile.h"
#include "ck/tile_kernel.h"
#include "kernel_harness.h"
#include "rt/runtime_internal.h"

/* One case: a rows x cols window of an M x N row-major matrix with leading dimension ld (all
 * three run-time symbols; ld's divisor decides the provable alignment) copied into a shared tile
 * (a ck_smem_tile, or a row-major tile with `pad` elements after each row when swizzle < 0). */
typedef struct copy_case {
    const char *what;
    ck_dtype dtype;
    int rows, cols, threads, vector; /* window and the thread-raked distribution */
    int ld_div, col_align;           /* divisor of ld; source origin alignment along dim 1 */
    int swizzle, pad;                /* ck_nv_swizzle, or -1 with pad */
    long long M, N, ld;              /* the run-time sizes */
    const char *expect;              /* a call the generated source must contain */
    int expect_bytes, expect_async;
} copy_case;

static unsigned long long rng = 0x2545F4914F6CDD1DULL;
static unsigned next_rand(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng >> 33);
}

typedef struct built {
    ck_expr_arena *ctx;
    ck_descriptor *src, *dst;
    ck_dist_encoding enc;
    ck_tile_copy_spec spec;
    long long smem_elems;
    int ebytes;
} built;

static int build(const copy_case *k, built *b)
{
    memset(b, 0, sizeof *b);
    ck_ival m, n, ld;
    CHECK_OK(ck_expr_arena_create(&b->ctx));
    CHECK_OK(ck_expr_symbol(b->ctx, "M", 1, 1 << 20, 1, &m));
    CHECK_OK(ck_expr_symbol(b->ctx, "N", 1, 1 << 20, 1, &n));
    CHECK_OK(ck_expr_symbol(b->ctx, "ld", 1, 1 << 20, k->ld_div, &ld));
    ck_ival len[2] = {m, n}, str[2] = {ld, ck_ival_int(1)};
    CHECK_OK(ck_descriptor_make_naive(2, len, str, &b->src));
    b->ebytes = ck_dtype_get(k->dtype)->storage_bits / 8;
    if (k->swizzle >= 0) {
        ck_smem_tile t = {k->rows, k->cols, b->ebytes, (ck_nv_swizzle)k->swizzle, 1, 0, 0, 0, 0, 0};
        CHECK_OK(ck_smem_tile_make(&t, &b->dst));
        b->smem_elems = t.bytes / b->ebytes;
    } else {
        ck_ival l2[2] = {ck_ival_int(k->rows), ck_ival_int(k->cols)},
                s2[2] = {ck_ival_int(k->cols + k->pad), ck_ival_int(1)};
        CHECK_OK(ck_descriptor_make_naive(2, l2, s2, &b->dst));
        b->smem_elems = (long long)k->rows * (k->cols + k->pad);
    }
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, k->threads, k->rows, k->cols, k->vector,
                                     &b->enc));
    ck_tile_copy_spec *s = &b->spec;
    s->name = "c", s->enc = &b->enc, s->dtype = k->dtype, s->src = b->src, s->ctx = b->ctx;
    s->src_origin_align[0] = 1, s->src_origin_align[1] = k->col_align;
    s->dst = b->dst, s->dst_origin_align[0] = k->rows, s->dst_origin_align[1] = k->cols;
    return b->src && b->dst;
}

static void unbuild(built *b)
{
    ck_descriptor_destroy(b->src);
    ck_descriptor_destroy(b->dst);
    ck_expr_arena_destroy(b->ctx);
}

/* Fill the tile with a sentinel, copy, wait, publish, write the raw tile out. */
static const char *user_kernel_fmt =
    "CK_KERNEL void copy_k(%s *src, %s *out, long long o0, long long o1, long long M, long long "
    "N,\n"
    "                      long long ld)\n{\n"
    "    CK_SHARED_ARRAY_ALIGNED(%s, tile, %lld, 1024);\n"
    "    for (int i = ck_thread_linear(); i < %lld; i += %d)\n"
    "        tile[i] = (%s)%d;\n"
    "    ck_sync_threads();\n"
    "    ck_copy_c c = make_copy_c(src, o0, o1, M, N, ld, tile, 0, 0);\n"
    "    copy_c(&c);\n"
    "    ck_cp_async_commit();\n"
    "    ck_cp_async_wait(0);\n"
    "    ck_sync_threads();\n"
    "    for (int i = ck_thread_linear(); i < %lld; i += %d)\n"
    "        out[i] = tile[i];\n}\n";

static long long raw(const unsigned char *p, int eb, long long i)
{
    long long v = 0;
    memcpy(&v, p + i * eb, (size_t)eb); /* little-endian: the low bytes */
    return v;
}

static void run_case(const copy_case *k)
{
    built b;
    if (!build(k, &b)) {
        unbuild(&b);
        return;
    }
    char *gen = NULL;
    ck_tile_copy_info info;
    ck_status st = ck_tile_copy_generate(&b.spec, &gen, &info);
    CHECK_MSG(st == CK_SUCCESS, "%s: %s", k->what, ck_last_error());
    if (st) {
        unbuild(&b);
        return;
    }
    /* the vector width, from the generated source and from info */
    CHECK_MSG(strstr(gen, k->expect) != NULL, "%s: no %s in the generated source", k->what,
              k->expect);
    CHECK_MSG(info.vector_bytes == k->expect_bytes && info.async == k->expect_async,
              "%s: %d bytes, async %d; expected %d, %d (%s)", k->what, info.vector_bytes,
              info.async, k->expect_bytes, k->expect_async, info.reason);
    if (!k->expect_async)
        CHECK_MSG(!strstr(gen, "ck_cp_async_4(") && !strstr(gen, "ck_cp_async_8(") &&
                      !strstr(gen, "ck_cp_async_16") && strstr(gen, "plain loads and stores"),
                  "%s: the fallback must say so and issue no cp.async", k->what);
    /* NVRTC, when present: sm_80 and sm_90a */
    int major, minor;
    char *full = NULL;
    char user[2048];
    const char *ctype = b.ebytes == 1   ? "unsigned char"
                        : b.ebytes == 2 ? "unsigned short"
                        : b.ebytes == 4 ? "float"
                                        : "double";
    snprintf(user, sizeof user, user_kernel_fmt, ctype, ctype, ctype, b.smem_elems, b.smem_elems,
             k->threads, ctype, 77, b.smem_elems, k->threads);
    CHECK_OK(ck_tile_kernel_source_copies(0, NULL, 1, &b.spec, user, &full));
    if (full && ck_nvrtc_version(&major, &minor) == CK_SUCCESS) {
        const char *arch[2] = {"sm_80", "sm_90a"};
        for (int a = 0; a < 2; ++a) {
            void *cubin = NULL;
            size_t size = 0;
            st = ck_nvrtc_compile(full, arch[a], NULL, 0, &cubin, &size);
            CHECK_MSG(st == CK_SUCCESS, "%s for %s: %s", k->what, arch[a], ck_last_error());
            free(cubin);
        }
    } else {
        ck_clear_error();
    }
    /* run on the device at origins inside, over the bottom-right corner and past it */
    ck_module *mod = NULL;
    ck_kernel *kern = NULL;
    if (full && ckk_open()) {
        st = ck_module_load(ckk_device, full, NULL, 0, &mod);
        CHECK_MSG(st == CK_SUCCESS, "%s: %s", k->what, ck_last_error());
        if (!st)
            CHECK_OK(ck_module_get_kernel(mod, "copy_k", &kern));
    }
    const int eb = b.ebytes;
    size_t src_bytes = (size_t)(k->M * k->ld) * (size_t)eb;
    unsigned char *h = malloc(src_bytes), *tile = malloc((size_t)b.smem_elems * (size_t)eb);
    for (size_t i = 0; i < src_bytes; ++i)
        h[i] = (unsigned char)(next_rand() | 1); /* no zero bytes: zero-fill is visible */
    void *dsrc = kern ? ckk_upload(h, src_bytes) : NULL,
         *dout = kern ? ckk_upload(NULL, (size_t)b.smem_elems * (size_t)eb) : NULL;
    long long origins[4][2] = {
        {0, 0},
        {k->M - k->rows / 2 - 1, (k->N - k->cols / 2) / k->col_align * k->col_align},
        {k->M - 1, (k->N - 1) / k->col_align * k->col_align},
        {k->M + 3, 0}};
    for (int o = 0; o < 4 && kern; ++o) {
        long long o0 = origins[o][0], o1 = origins[o][1], M = k->M, N = k->N, ld = k->ld;
        CHECK_OK(ckk_launch(kern, 1, 1, 1, (unsigned)k->threads, 1, 1, 0, 7, CKK_ARG(dsrc),
                            CKK_ARG(dout), CKK_ARG(o0), CKK_ARG(o1), CKK_ARG(M), CKK_ARG(N),
                            CKK_ARG(ld)));
        ckk_download(tile, dout, (size_t)b.smem_elems * (size_t)eb);
        long long bad = 0;
        for (int i = 0; i < k->rows; ++i)
            for (int j = 0; j < k->cols; ++j) {
                int64_t idx[2] = {i, j}, off = 0;
                ck_descriptor_calculate_offset(b.dst, idx, &off);
                long long r = o0 + i, c = o1 + j;
                long long want = r < M && c < N ? raw(h, eb, r * ld + c) : 0;
                long long got = raw(tile, eb, off);
                if (got != want && bad++ < 4)
                    CHECK_MSG(0, "%s, origin (%lld, %lld): tile (%d, %d) = %llx, expected %llx",
                              k->what, o0, o1, i, j, got, want);
            }
        CHECK_MSG(bad == 0, "%s: %lld wrong elements at origin (%lld, %lld)", k->what, bad, o0, o1);
    }
    if (kern && info.masked_accesses == 0)
        CHECK_MSG(0, "%s: no masked access generated for a symbolic-size source", k->what);
    ck_free(ckk_device, dsrc);
    ck_free(ckk_device, dout);
    free(h);
    free(tile);
    ck_tile_free(full);
    ck_tile_free(gen);
    unbuild(&b);
}

static void test_copies(void)
{
    static const copy_case cases[] = {
        /* f16 into 128B-swizzled rows: 16-byte cp.async, partial vectors by src-size */
        {"f16 128B swizzle", CK_DTYPE_F16, 32, 64, 128, 8, 8, 8, CK_NV_SWIZZLE_128B, 0, 77, 45, 48,
         "ck_cp_async_16_zfill(", 16, 1},
        /* f16 into 64B-swizzled rows, odd M and N */
        {"f16 64B swizzle", CK_DTYPE_F16, 64, 32, 128, 8, 8, 8, CK_NV_SWIZZLE_64B, 0, 99, 37, 40,
         "ck_cp_async_16_zfill(", 16, 1},
        /* u8 into an unswizzled core-matrix tile */
        {"u8 core matrices", CK_DTYPE_U8, 16, 64, 64, 16, 16, 16, CK_NV_SWIZZLE_NONE, 0, 21, 50, 64,
         "ck_cp_async_16_zfill(", 16, 1},
        /* f32, padded plain rows of 36 floats (144 bytes): 16 bytes */
        {"f32 padded rows", CK_DTYPE_F32, 16, 32, 64, 4, 4, 4, -1, 4, 19, 29, 32,
         "ck_cp_async_16_zfill(", 16, 1},
        /* f32, ld only even: 8-byte cp.async.ca, element by element at the edges */
        {"f32 8-byte", CK_DTYPE_F32, 16, 32, 64, 4, 2, 2, -1, 0, 23, 31, 34, "ck_cp_async_8(", 8,
         1},
        /* f16 into rows padded by 2 elements (68 bytes): 4 bytes */
        {"f16 4-byte (padded tile)", CK_DTYPE_F16, 16, 32, 64, 8, 8, 8, -1, 2, 20, 27, 32,
         "ck_cp_async_4(", 4, 1},
        /* f64: 16-byte pairs into a 32B-swizzled tile */
        {"f64 32B swizzle", CK_DTYPE_F64, 16, 4, 32, 2, 2, 2, CK_NV_SWIZZLE_32B, 0, 17, 7, 8,
         "ck_cp_async_16_zfill(", 16, 1},
        /* f16 with an odd ld: nothing of 4 bytes is provable, plain loads and stores */
        {"f16 plain fallback", CK_DTYPE_F16, 16, 32, 64, 8, 1, 1, -1, 0, 19, 27, 29, "= (", 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run_case(&cases[i]);
}

/* A 16-byte request refused with the reason; the same copy accepted at 8 bytes; and the others. */
static void test_refusals(void)
{
    copy_case k = {"refusals", CK_DTYPE_F16, 16, 32, 64, 8, 8, 8, -1, 4, 20, 27, 32, "", 0, 0};
    built b;
    char *src = NULL;
    ck_tile_copy_info info;
    if (!build(&k, &b)) { /* rows padded by 4 f16: 72-byte rows, 8-byte aligned */
        unbuild(&b);
        return;
    }
    b.spec.vector_bytes = 16;
    CHECK_STATUS(ck_tile_copy_generate(&b.spec, &src, &info), CK_ERROR_UNSUPPORTED);
    CHECK_MSG(strstr(ck_last_error(), "destination (the shared tile)") &&
                  strstr(ck_last_error(), "multiples of 8 bytes only"),
              "reason: %s", ck_last_error());
    b.spec.vector_bytes = 8;
    CHECK_OK(ck_tile_copy_generate(&b.spec, &src, &info));
    CHECK(info.vector_bytes == 8 && src && strstr(src, "ck_cp_async_8("));
    ck_tile_free(src);
    b.spec.vector_bytes = 0;
    CHECK_OK(ck_tile_copy_generate(&b.spec, &src, &info));
    CHECK(info.vector_bytes == 8 && strstr(info.reason, "destination"));
    ck_tile_free(src);
    b.spec.vector_bytes = 12;
    CHECK_STATUS(ck_tile_copy_generate(&b.spec, &src, &info), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "4, 8 or 16") != NULL);
    b.spec.vector_bytes = 0;
    /* the source's alignment: ld only even */
    ck_ival ld2;
    CHECK_OK(ck_expr_symbol(b.ctx, "ld2", 2, 1 << 20, 2, &ld2));
    ck_ival len[2] = {ck_ival_int(100), ck_ival_int(100)}, str[2] = {ld2, ck_ival_int(1)};
    ck_descriptor *odd = NULL;
    CHECK_OK(ck_descriptor_make_naive(2, len, str, &odd));
    ck_tile_copy_spec s2 = b.spec;
    s2.src = odd;
    s2.vector_bytes = 8;
    CHECK_STATUS(ck_tile_copy_generate(&s2, &src, &info), CK_ERROR_UNSUPPORTED);
    CHECK_MSG(strstr(ck_last_error(), "the source's vectors") != NULL, "%s", ck_last_error());
    /* a destination that does not hold the window: masks */
    b.spec.dst_origin_align[0] = 0;
    CHECK_STATUS(ck_tile_copy_generate(&b.spec, &src, &info), CK_ERROR_UNSUPPORTED);
    CHECK(strstr(ck_last_error(), "would need masks") != NULL);
    b.spec.dst_origin_align[0] = 16;
    /* symbolic destination */
    s2 = b.spec;
    s2.dst = b.src;
    CHECK_STATUS(ck_tile_copy_generate(&s2, &src, &info), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "run-time symbols") != NULL);
    /* narrower than an element; bad names; NULLs; dims */
    s2 = b.spec;
    s2.dtype = CK_DTYPE_F64, s2.vector_bytes = 4;
    CHECK_STATUS(ck_tile_copy_generate(&s2, &src, &info), CK_ERROR_INVALID_ARGUMENT);
    s2 = b.spec;
    s2.name = "no such";
    CHECK_STATUS(ck_tile_copy_generate(&s2, &src, &info), CK_ERROR_INVALID_ARGUMENT);
    s2 = b.spec;
    s2.enc = NULL;
    CHECK_STATUS(ck_tile_copy_generate(&s2, &src, &info), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_tile_copy_generate(NULL, &src, &info), CK_ERROR_INVALID_ARGUMENT);
    ck_ival l3[3] = {ck_ival_int(4), ck_ival_int(16), ck_ival_int(32)};
    ck_descriptor *three = NULL;
    CHECK_OK(ck_descriptor_make_packed(3, l3, &three));
    s2 = b.spec;
    s2.src = three;
    CHECK_STATUS(ck_tile_copy_generate(&s2, &src, &info), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "source window") != NULL);
    /* a window whose move function would be a copy's */
    ck_tile_window_spec w = {0};
    w.name = "copy_dst_c", w.desc = b.dst, w.enc = &b.enc, w.dtype = CK_DTYPE_F16;
    w.origin_align[0] = 16, w.origin_align[1] = 32;
    CHECK_STATUS(ck_tile_kernel_source_copies(1, &w, 1, &b.spec, "", &src),
                 CK_ERROR_INVALID_ARGUMENT);
    w.name = "other";
    CHECK_OK(ck_tile_kernel_source_copies(1, &w, 1, &b.spec, "", &src));
    ck_tile_free(src);
    ck_descriptor_destroy(three);
    ck_descriptor_destroy(odd);
    unbuild(&b);
}

/* Generation is deterministic, and the typical case reads as documented. */
static void test_generated_text(void)
{
    copy_case k = {"text", CK_DTYPE_F16, 32, 64, 128, 8, 8, 8, CK_NV_SWIZZLE_128B, 0, 1, 1,
                   8,      "",           0,  0};
    built b;
    if (build(&k, &b)) {
        char *s1 = NULL, *s2 = NULL;
        CHECK_OK(ck_tile_copy_generate(&b.spec, &s1, NULL));
        CHECK_OK(ck_tile_copy_generate(&b.spec, &s2, NULL));
        CHECK(s1 && s2 && !strcmp(s1, s2));
        CHECK(s1 && strstr(s1, "CK_DEVICE void copy_c(const ck_copy_c *w)") &&
              strstr(s1, "move_copy_c(ck_copy_c *w, long long d0, long long d1)") &&
              strstr(s1, "move_copy_dst_c(") && strstr(s1, "16-byte cp.async.cg"));
        if (getenv("CK_TEST_PRINT"))
            printf("%s", s1);
        ck_tile_free(s1);
        ck_tile_free(s2);
    }
    unbuild(&b);
}

int main(void)
{
    RUN_TEST(test_copies);
    RUN_TEST(test_refusals);
    RUN_TEST(test_generated_text);
    ckk_close();
    return CK_TEST_REPORT();
}
