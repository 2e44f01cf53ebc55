/*
 * The kernel cache's source index (src/ops/common/context.c): a kernel built by one context is
 * found by another (a new process in practice) without generating its source again; other keys,
 * other CK_* settings and a damaged index entry generate again; the kernel from the index runs
 * and computes what the generated one does; ck_cache_clear removes the index with the kernels.
 */
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "ck/ck.h"
#include "ops/common/op_common.h"
#include "test.h"
#include "test_tmpdir.h"

static char root[256], dir[300];
static int generated;

/* y[i] = x[i] * F + i, with F the key's factor */
typedef struct src_spec {
    int factor;
} src_spec;

static ck_status build(void *user, char **source)
{
    const src_spec *s = user;
    generated++;
    char buf[512];
    snprintf(buf, sizeof buf,
             "#include \"ck_device.h\"\n"
             "CK_KERNEL void idx_k(const float *x, float *y, int n)\n{\n"
             "    int i = (int)(ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x());\n"
             "    if (i < n)\n        y[i] = x[i] * %d.0f + (float)i;\n}\n",
             s->factor);
    *source = strdup(buf);
    return *source ? CK_SUCCESS : CK_ERROR_OUT_OF_MEMORY;
}

/* Runs the kernel of (key, factor) on a new context; checks every element. */
static void run(const char *key, int factor)
{
    ck_context *ctx = NULL;
    CHECK_OK(ck_context_create(CK_BACKEND_HOST, 0, &ctx));
    if (!ctx)
        return;
    src_spec s = {factor};
    ck_kernel *k = NULL;
    CHECK_OK(ck_op_kernel(ctx, key, "idx_k", build, &s, &k));
    enum { N = 300 };
    float hx[N], hy[N];
    uint64_t rng = 99 + (uint64_t)factor;
    for (int i = 0; i < N; ++i)
        hx[i] = (float)(ckt_rand64(&rng) % 1000) / 8.0f - 60.0f;
    ck_device *dev = ck_context_device(ctx);
    void *dx = NULL, *dy = NULL;
    CHECK_OK(ck_malloc(dev, sizeof hx, &dx));
    CHECK_OK(ck_malloc(dev, sizeof hy, &dy));
    CHECK_OK(ck_memcpy_h2d(dev, dx, hx, sizeof hx, NULL));
    int n = N;
    void *args[3] = {&dx, &dy, &n};
    size_t sizes[3] = {sizeof dx, sizeof dy, sizeof n};
    if (k)
        CHECK_OK(ck_op_launch(ctx, k, (N + 127) / 128, 1, 1, 128, 0, args, sizes, 3));
    CHECK_OK(ck_context_synchronize(ctx));
    CHECK_OK(ck_memcpy_d2h(dev, hy, dy, sizeof hy, NULL));
    int bad = 0;
    for (int i = 0; i < N; ++i)
        bad += hy[i] != hx[i] * (float)factor + (float)i;
    CHECK_MSG(bad == 0, "%d of %d elements differ (key %s)", bad, N, key);
    ck_free(dev, dx);
    ck_free(dev, dy);
    ck_context_destroy(ctx);
}

static int count_src(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strlen(e->d_name) > 4 && strcmp(e->d_name + strlen(e->d_name) - 4, ".src") == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_index(void)
{
    generated = 0;
    run("index/a", 3);
    CHECK(generated == 1);
    CHECK(count_src() == 1);
    run("index/a", 3); /* a new context: the source comes from the index */
    CHECK_MSG(generated == 1, "generated %d times", generated);
    run("index/b", 5); /* another key */
    CHECK(generated == 2);
    setenv("CK_TEST_SOURCE_INDEX", "1", 1); /* other CK_* settings */
    run("index/a", 3);
    CHECK(generated == 3);
    unsetenv("CK_TEST_SOURCE_INDEX");
    run("index/a", 3);
    CHECK(generated == 3);
}

/* A damaged index entry is regenerated (the cache's checksum refuses it), never used. */
static void test_damaged(void)
{
    generated = 0;
    run("index/c", 7);
    CHECK(generated == 1);
    DIR *d = opendir(dir);
    struct dirent *e;
    int damaged = 0;
    while (d && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".src") == 0) {
            char path[700];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            FILE *f = fopen(path, "r+b");
            if (f) {
                fseek(f, -3, SEEK_END);
                fputc('X', f);
                fclose(f);
                damaged++;
            }
        }
    }
    if (d)
        closedir(d);
    CHECK(damaged >= 1);
    run("index/c", 7);
    run("index/a", 3);
    run("index/b", 5);
    CHECK_MSG(generated == 4, "generated %d times", generated);
}

static void test_clear(void)
{
    run("index/a", 3);
    CHECK(count_src() >= 1);
    int removed = -1;
    CHECK_OK(ck_cache_clear(&removed));
    CHECK(removed >= 1);
    CHECK(count_src() == 0);
    generated = 0;
    run("index/a", 3);
    CHECK(generated == 1);
}

int main(void)
{
    if (!ckt_scratch_cache("ck-source-index", root, sizeof root, dir, sizeof dir))
        return 1;
    RUN_TEST(test_index);
    RUN_TEST(test_damaged);
    RUN_TEST(test_clear);
    ckt_scratch_remove(root);
    return CK_TEST_REPORT();
}
