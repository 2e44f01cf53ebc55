/*
 * The tile programming API (ck/tile_kernel.h) on the reference's TileDistributionExample
 * (9x9 tensor of i*100 + j, 4x4 window at (1, 3), H [[2,2],[2,2]], P [[1],[2]]/[[0],[0]],
 * Y [1,2]/[1,1], 128 threads): every thread's registers against a direct computation
 * (ck_dist_calculate_x for P = (warp, lane)), the four reported threads against the literal
 * values, the sweep order, and the source through CK_DUMP-compatible ck_tile_kernel_source.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck/tile_kernel.h"
#include "kernel_harness.h"
#include "rt/runtime_internal.h"

static const char *user = "CK_KERNEL void collect(float *tensor, float *out, int *order)\n"
                          "{\n"
                          "    float regs[CK_NREGS_x];\n"
                          "    ck_win_x w = make_win_x(tensor, 0, 2);\n"
                          "    move_x(&w, 1, 1);\n"
                          "    load_x(regs, &w);\n"
                          "    unsigned t = ck_thread_linear();\n"
                          "    for (int i = 0; i < CK_NREGS_x; ++i) {\n"
                          "        out[t * CK_NREGS_x + i] = regs[i];\n"
                          "        order[t * CK_NREGS_x + i] = sweep_x(i);\n"
                          "    }\n"
                          "}\n";

static void test_tile_distribution_example(void)
{
    ck_device *dev = ckk_open();
    if (!dev)
        return;
    ck_descriptor *desc = NULL;
    ck_ival len[2] = {ck_ival_int(9), ck_ival_int(9)};
    CHECK_OK(ck_descriptor_make_packed(2, len, &desc));
    ck_dist_encoding enc;
    CHECK_OK(ck_dist_encoding_parse(
        "tile_distribution_encoding<sequence<>, tuple<sequence<2, 2>, sequence<2, 2>>, "
        "tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, sequence<0>>, sequence<1, 2>, "
        "sequence<1, 1>>",
        &enc));
    ck_distribution dist;
    CHECK_OK(ck_dist_make(&enc, &dist));
    ck_tile_window_spec w = {0};
    w.name = "x";
    w.desc = desc;
    w.enc = &enc;
    w.dtype = CK_DTYPE_F32;
    w.fill = -1;
    w.ops = CK_WIN_LOAD;
    ck_module *mod = NULL;
    ck_kernel *k = NULL;
    ck_status st = ck_tile_kernel_load(dev, 1, &w, user, &mod);
    CHECK_MSG(st == CK_SUCCESS, "%s", ck_last_error());
    if (st || ck_module_get_kernel(mod, "collect", &k) != CK_SUCCESS) {
        ck_descriptor_destroy(desc);
        return;
    }
    float host[81], out[128 * 4];
    int order[128 * 4];
    for (int i = 0; i < 81; ++i)
        host[i] = (float)((i / 9) * 100 + i % 9);
    void *dt = NULL, *dout = NULL, *dorder = NULL;
    CHECK_OK(ck_malloc(dev, sizeof host, &dt));
    CHECK_OK(ck_malloc(dev, sizeof out, &dout));
    CHECK_OK(ck_malloc(dev, sizeof order, &dorder));
    CHECK_OK(ck_memcpy_h2d(dev, dt, host, sizeof host, NULL));
    ck_launch_config cfg = {{1, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, NULL};
    void *args[3] = {&dt, &dout, &dorder};
    size_t sz[3] = {sizeof dt, sizeof dout, sizeof dorder};
    CHECK_OK(ck_launch(k, &cfg, args, sz, 3));
    CHECK_OK(ck_memcpy_d2h(dev, out, dout, sizeof out, NULL));
    CHECK_OK(ck_memcpy_d2h(dev, order, dorder, sizeof order, NULL));
    /* the reference's four threads, literally */
    static const float want[4][4] = {
        {103, 104, 203, 204}, {105, 106, 205, 206}, {303, 304, 403, 404}, {305, 306, 405, 406}};
    static const int tids[4] = {0, 1, 32, 33};
    for (int s = 0; s < 4; ++s)
        for (int i = 0; i < 4; ++i)
            CHECK_MSG(out[tids[s] * 4 + i] == want[s][i], "thread %d value %d: %g, expected %g",
                      tids[s], i, out[tids[s] * 4 + i], want[s][i]);
    /* every thread against ck_dist_calculate_x (threads outside P's range get the fill) */
    for (int t = 0; t < 128; ++t) {
        int p[2] = {t / 32, t % 32};
        for (int d = 0; d < 4; ++d) {
            float e = -1;
            if (p[0] < 2 && p[1] < 2) {
                int y[2], x[2];
                long long dd = d;
                CHECK_OK(ck_dist_d_to_ys(&dist, dd, y));
                CHECK_OK(ck_dist_calculate_x(&dist, p, y, x));
                e = (float)((1 + x[0]) * 100 + 3 + x[1]);
            }
            CHECK_MSG(out[t * 4 + d] == e, "thread %d register %d: %g, expected %g", t, d,
                      out[t * 4 + d], e);
            int ys[2];
            long long reg;
            CHECK_OK(ck_dist_sweep_index(&dist, d, ys));
            CHECK_OK(ck_dist_ys_to_d(&dist, ys, &reg));
            CHECK_EQ_INT(order[t * 4 + d], reg);
        }
    }
    ck_free(dev, dt);
    ck_free(dev, dout);
    ck_free(dev, dorder);
    ck_descriptor_destroy(desc);
}

/* The assembled source names its window, encoding and descriptor, and has the functions. */
static void test_source_shape(void)
{
    ck_descriptor *desc = NULL;
    ck_ival len[2] = {ck_ival_int(64), ck_ival_int(64)};
    CHECK_OK(ck_descriptor_make_packed(2, len, &desc));
    ck_dist_encoding enc;
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 64, 16, 32, 4, &enc));
    ck_tile_window_spec w[2] = {{0}, {0}};
    w[0].name = "a";
    w[0].desc = desc;
    w[0].enc = &enc;
    w[0].dtype = CK_DTYPE_F32;
    w[0].origin_align[0] = 16;
    w[0].origin_align[1] = 32;
    w[1] = w[0];
    w[1].name = "b";
    w[1].ops = CK_WIN_STORE;
    char *src = NULL;
    CHECK_OK(ck_tile_kernel_source(2, w, "/* user */\n", &src));
    const char *need[] = {"#include \"ck_device.h\"",
                          "tile window \"a\"",
                          "tile window \"b\"",
                          "unmerge([64, 64])",
                          "tile_distribution_encoding<",
                          "load_a(",
                          "store_a(",
                          "update_a(",
                          "atomic_add_a(",
                          "move_a(",
                          "make_win_a(",
                          "store_b(",
                          "sweep_a(",
                          "ck_ld16(",
                          "/* user */"};
    for (size_t i = 0; src && i < sizeof need / sizeof need[0]; ++i)
        CHECK_MSG(strstr(src, need[i]) != NULL, "missing %s", need[i]);
    CHECK(src && strstr(src, "load_b(") == NULL);
    CHECK(src && strstr(src, "} else {") == NULL); /* aligned, multiple of the tile: no masks */
    ck_tile_free(src);
    ck_descriptor_destroy(desc);
}

/* A column-walking distribution of a 32 x 64 tile: consecutive lanes step 4 columns, then a
 * row; each thread holds 4 rows (8 apart) x 4 consecutive columns. */
static void column_walk(ck_dist_encoding *e)
{
    memset(e, 0, sizeof *e);
    e->ndim_x = 2;
    e->ndim_h[0] = 2;
    e->h_lengths[0][0] = 4;
    e->h_lengths[0][1] = 8;
    e->ndim_h[1] = 3;
    e->h_lengths[1][0] = 4;
    e->h_lengths[1][1] = 4;
    e->h_lengths[1][2] = 4;
    e->ndim_p = 2;
    e->p_size[0] = 1;
    e->p_major[0][0] = 2;
    e->p_minor[0][0] = 0;
    e->p_size[1] = 2;
    e->p_major[1][0] = 1;
    e->p_minor[1][0] = 1;
    e->p_major[1][1] = 2;
    e->p_minor[1][1] = 1;
    e->ndim_y = 2;
    e->y_major[0] = 1;
    e->y_minor[0] = 0;
    e->y_major[1] = 2;
    e->y_minor[1] = 2;
}

/* shuffle_tile: every register after the shuffle holds its own tile element. */
static void test_shuffle(void)
{
    ck_device *dev = ckk_open();
    if (!dev)
        return;
    ck_dist_encoding pat, col;
    column_walk(&col);
    for (int run = 0; run < 4; ++run) {
        int dir = run % 2, half = run / 2; /* f32, then f16 (moved as unsigned short) */
        ck_dtype dt = half ? CK_DTYPE_F16 : CK_DTYPE_F32;
        CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 128, 32, 64, half ? 8 : 4, &pat));
        ck_tile_shuffle_spec s = {"s", dir ? &col : &pat, dir ? &pat : &col, dt};
        ck_tile_shuffle_info info;
        char *ssrc = NULL;
        CHECK_OK(ck_tile_shuffle_generate(&s, &ssrc, &info));
        if (!ssrc)
            return;
        printf("shuffle %d: %s, %lld elements, bank ways %lld (minimum %lld, row-major %lld)\n",
               dir, info.layout, info.smem_elements, info.bank_ways_total, info.bank_ways_min_total,
               info.row_major_bank_ways_total);
        CHECK(info.bank_ways_total <= info.row_major_bank_ways_total);
        CHECK(info.smem_elements >= 32 * 64);
        CHECK(strstr(ssrc, "16-byte vectors (CK's load/store traits)") != NULL);
        const char *user = "CK_KERNEL void kshuf(T *out)\n"
                           "{\n"
                           "    CK_SHARED_ARRAY_ALIGNED(T, smem, CK_SHUFFLE_SMEM_s, 16);\n"
                           "    T src[CK_NREGS_s_in], dst[CK_NREGS_s_out];\n"
                           "    for (int d = 0; d < CK_NREGS_s_in; ++d) {\n"
                           "        long long x[2];\n"
                           "        tile_x_s_in(d, x);\n"
                           "        src[d] = (T)(x[0] * 64 + x[1] + 1);\n"
                           "    }\n"
                           "    shuffle_s(dst, src, smem);\n"
                           "    unsigned t = ck_thread_linear();\n"
                           "    for (int d = 0; d < CK_NREGS_s_out; ++d)\n"
                           "        out[t * CK_NREGS_s_out + d] = dst[d];\n"
                           "}\n";
        size_t n = strlen(ssrc) + strlen(user) + 64;
        char *all = malloc(n);
        snprintf(all, n, "%s#define T %s\n%s", ssrc, half ? "unsigned short" : "float", user);
        ck_tile_free(ssrc);
        int major, minor;
        if (ck_nvrtc_version(&major, &minor) == CK_SUCCESS) { /* also for the GPU */
            char *full = NULL;
            void *cubin = NULL;
            size_t size = 0;
            CHECK_OK(ck_tile_kernel_source(0, NULL, all, &full));
            ck_status nst =
                full ? ck_nvrtc_compile(full, "sm_90a", NULL, 0, &cubin, &size) : CK_ERROR_INTERNAL;
            CHECK_MSG(nst == CK_SUCCESS, "NVRTC: %s", ck_last_error());
            free(cubin);
            ck_tile_free(full);
        }
        ck_module *mod = NULL;
        ck_kernel *k = NULL;
        ck_status st = ck_tile_kernel_load(dev, 0, NULL, all, &mod);
        CHECK_MSG(st == CK_SUCCESS, "%s", ck_last_error());
        free(all);
        if (st || ck_module_get_kernel(mod, "kshuf", &k))
            return;
        ck_distribution dd;
        CHECK_OK(ck_dist_make(s.dst, &dd));
        long long nr = dd.elements_per_thread;
        float *out = malloc(sizeof(float) * (size_t)(128 * nr));
        void *dout = NULL;
        CHECK_OK(ck_malloc(dev, sizeof(float) * (size_t)(128 * nr), &dout));
        ck_launch_config cfg = {{1, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, NULL};
        void *args[1] = {&dout};
        size_t sz[1] = {sizeof dout};
        CHECK_OK(ck_launch(k, &cfg, args, sz, 1));
        CHECK_OK(ck_memcpy_d2h(dev, out, dout, sizeof(float) * (size_t)(128 * nr), NULL));
        long long bad = 0;
        for (int t = 0; t < 128; ++t)
            for (long long d = 0; d < nr; ++d) {
                int p[2] = {t / 32, t % 32}, y[CK_DIST_MAX_Y], x[2];
                CHECK_OK(ck_dist_d_to_ys(&dd, d, y));
                CHECK_OK(ck_dist_calculate_x(&dd, p, y, x));
                double want = x[0] * 64 + x[1] + 1;
                double got = half ? ((unsigned short *)out)[t * nr + d] : out[t * nr + d];
                if (got != want && bad++ < 5)
                    CKT_FAIL_("shuffle %d thread %d register %lld: %g, expected %g", dir, t, d, got,
                              want);
            }
        CHECK(bad == 0);
        ck_free(dev, dout);
        free(out);
    }
    /* bad input */
    ck_dist_encoding small;
    CHECK_OK(ck_dist_make_2d_pattern(CK_DIST_THREAD_RAKED, 32, 8, 8, 2, &small));
    ck_tile_shuffle_spec bad = {"s", &pat, &small, CK_DTYPE_F32};
    char *src = NULL;
    CHECK_STATUS(ck_tile_shuffle_generate(&bad, &src, NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "X lengths") != NULL);
    bad.dst = NULL;
    CHECK_STATUS(ck_tile_shuffle_generate(&bad, &src, NULL), CK_ERROR_INVALID_ARGUMENT);
}

/* CK_DUMP=dir writes the generated source (the runtime dumps every module source). */
static void test_dump(void)
{
    ck_device *dev = ckk_open();
    if (!dev)
        return;
    char dir[] = "/tmp/ck-tile-dump-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    const char *old = getenv("CK_DUMP");
    char *saved = old ? strdup(old) : NULL;
    setenv("CK_DUMP", dir, 1);
    ck_descriptor *desc = NULL;
    ck_ival len[1] = {ck_ival_int(40)};
    CHECK_OK(ck_descriptor_make_packed(1, len, &desc));
    ck_dist_encoding enc;
    CHECK_OK(ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, tuple<sequence<32, "
                                    "2>>, tuple<sequence<1>>, tuple<sequence<0>>, sequence<1>, "
                                    "sequence<1>>",
                                    &enc));
    ck_tile_window_spec w = {0};
    w.name = "dumped";
    w.desc = desc;
    w.enc = &enc;
    w.dtype = CK_DTYPE_I32;
    ck_module *mod = NULL;
    CHECK_OK(ck_tile_kernel_load(dev, 1, &w, "CK_KERNEL void kd(int *p) { (void)p; }\n", &mod));
    if (saved) {
        setenv("CK_DUMP", saved, 1);
        free(saved);
    } else {
        unsetenv("CK_DUMP");
    }
    DIR *d = opendir(dir);
    int found = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        char buf[8192] = {0};
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = '\0';
            fclose(f);
        }
        found += strstr(buf, "tile window \"dumped\"") != NULL;
        remove(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    CHECK_EQ_INT(found, 1);
    ck_descriptor_destroy(desc);
}

/* Non-finite fill values for float elements: a 1-D window of 8 over 5 elements. */
static void test_fill_infinity(void)
{
    ck_device *dev = ckk_open();
    if (!dev)
        return;
    ck_descriptor *desc = NULL;
    ck_ival len[1] = {ck_ival_int(5)};
    CHECK_OK(ck_descriptor_make_packed(1, len, &desc));
    ck_dist_encoding enc;
    CHECK_OK(ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, tuple<sequence<8>>, "
                                    "tuple<sequence<1>>, tuple<sequence<0>>, sequence<>, "
                                    "sequence<>>",
                                    &enc));
    ck_tile_window_spec w = {0};
    w.name = "v";
    w.desc = desc;
    w.enc = &enc;
    w.dtype = CK_DTYPE_F32;
    w.fill = -INFINITY;
    w.ops = CK_WIN_LOAD;
    ck_module *mod = NULL;
    ck_kernel *k = NULL;
    CHECK_OK(ck_tile_kernel_load(dev, 1, &w,
                                 "CK_KERNEL void kv(float *in, float *out)\n{\n"
                                 "    float r[CK_NREGS_v];\n    ck_win_v w = make_win_v(in, 0);\n"
                                 "    load_v(r, &w);\n    out[ck_thread_linear()] = r[0];\n}\n",
                                 &mod));
    if (!mod || ck_module_get_kernel(mod, "kv", &k)) {
        ck_descriptor_destroy(desc);
        return;
    }
    float in[5] = {1, 2, 3, 4, 5}, out[8];
    void *din = NULL, *dout = NULL;
    CHECK_OK(ck_malloc(dev, sizeof in, &din));
    CHECK_OK(ck_malloc(dev, sizeof out, &dout));
    CHECK_OK(ck_memcpy_h2d(dev, din, in, sizeof in, NULL));
    ck_launch_config cfg = {{1, 1, 1}, {8, 1, 1}, {0, 0, 0}, 0, NULL};
    void *args[2] = {&din, &dout};
    size_t sz[2] = {sizeof din, sizeof dout};
    CHECK_OK(ck_launch(k, &cfg, args, sz, 2));
    CHECK_OK(ck_memcpy_d2h(dev, out, dout, sizeof out, NULL));
    for (int i = 0; i < 8; ++i)
        CHECK_MSG(i < 5 ? out[i] == in[i] : (isinf(out[i]) && out[i] < 0), "element %d: %g", i,
                  out[i]);
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) == CK_SUCCESS) {
        char *full = NULL;
        void *cubin = NULL;
        size_t size = 0;
        w.fill = NAN;
        CHECK_OK(ck_tile_kernel_source(1, &w, "CK_KERNEL void kn(int *p) { (void)p; }\n", &full));
        CHECK(full && strstr(full, "ck_u32_as_f32(0x7fc00000u)") != NULL);
        ck_status nst =
            full ? ck_nvrtc_compile(full, "sm_90a", NULL, 0, &cubin, &size) : CK_ERROR_INTERNAL;
        CHECK_MSG(nst == CK_SUCCESS, "NVRTC: %s", ck_last_error());
        free(cubin);
        ck_tile_free(full);
    }
    w.dtype = CK_DTYPE_I32;
    w.fill = NAN;
    char *src = NULL;
    CHECK_STATUS(ck_tile_window_generate(&w, &src), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "not finite") != NULL);
    ck_free(dev, din);
    ck_free(dev, dout);
    ck_descriptor_destroy(desc);
}

int main(void)
{
    RUN_TEST(test_source_shape);
    if (ckk_open()) {
        RUN_TEST(test_tile_distribution_example);
        RUN_TEST(test_shuffle);
        RUN_TEST(test_dump);
        RUN_TEST(test_fill_infinity);
    }
    ckk_close();
    return CK_TEST_REPORT();
}
