/* The client API's context and tensor descriptions: validation, contiguity, extents, the
 * kernel cache (a repeated key builds nothing), workspace reuse, on the emulator. */
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "ops/common/op_common.h"
#include "test.h"

static int builds;

static ck_status build_fill(void *user, char **source)
{
    (void)user;
    builds++;
    const char *src =
        "#include \"ck_device.h\"\n"
        "CK_KERNEL void fill(int *p, int v, int n)\n"
        "{\n"
        "    int i = (int)(ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x());\n"
        "    if (i < n)\n"
        "        p[i] = v + i;\n"
        "}\n";
    *source = strdup(src);
    return *source ? CK_SUCCESS : CK_ERROR_OUT_OF_MEMORY;
}

int main(void)
{
    ck_tensor t;
    int64_t shape[3] = {2, 3, 4}, strides[3] = {12, 4, 1}, bad[3] = {2, -3, 4};
    static int buf[64];
    CHECK(ck_tensor_init(&t, buf, CK_DTYPE_I32, 3, shape, NULL) == CK_SUCCESS);
    CHECK(t.strides[0] == 12 && t.strides[1] == 4 && t.strides[2] == 1);
    CHECK(ck_tensor_numel(&t) == 24 && ck_tensor_is_contiguous(&t));
    CHECK(ck_tensor_extent_bytes(&t) == 96);
    int64_t tr[3] = {12, 1, 3};
    CHECK(ck_tensor_init(&t, buf, CK_DTYPE_I32, 3, shape, tr) == CK_SUCCESS);
    CHECK(!ck_tensor_is_contiguous(&t));
    CHECK(ck_tensor_extent_bytes(&t) == (12 + 2 + 9 + 1) * 4);
    CHECK(ck_tensor_init(&t, buf, CK_DTYPE_I32, 3, bad, strides) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "dimension 1") != NULL);
    CHECK(ck_tensor_init(&t, buf, CK_DTYPE_I32, 9, shape, NULL) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(ck_tensor_init(&t, NULL, CK_DTYPE_I32, 3, shape, NULL) == CK_ERROR_INVALID_ARGUMENT);
    int64_t zero[2] = {0, 5};
    CHECK(ck_tensor_init(&t, NULL, CK_DTYPE_F16, 2, zero, NULL) == CK_SUCCESS);
    CHECK(ck_tensor_numel(&t) == 0 && ck_tensor_extent_bytes(&t) == 0);
    int64_t odd[1] = {3};
    CHECK(ck_tensor_init(&t, buf, CK_DTYPE_FP4_E2M1, 1, odd, NULL) == CK_ERROR_UNSUPPORTED);
    CHECK(ck_tensor_init(&t, buf, CK_DTYPE_F32, 0, NULL, NULL) == CK_SUCCESS);
    CHECK(ck_tensor_numel(&t) == 1);
    char text[128];
    ck_tensor_init(&t, buf, CK_DTYPE_BF16, 2, shape, NULL);
    ck_tensor_describe(&t, text, sizeof text);
    CHECK(strcmp(text, "bf16[2, 3] strides [3, 1]") == 0);
    ck_tensor mis = t;
    mis.data = (char *)buf + 1;
    CHECK(ck_op_check_tensor("op", "x", &mis) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "aligned") != NULL);
    ck_tensor a = t, b = t;
    b.data = (char *)buf + 10; /* a covers bytes 0..11 */
    CHECK(ck_op_overlap(&a, &b));
    b.data = (char *)buf + 12;
    CHECK(!ck_op_overlap(&a, &b));

    ck_context *ctx = NULL;
    CHECK(ck_context_create(CK_BACKEND_HOST, 0, &ctx) == CK_SUCCESS);
    if (!ctx)
        return CK_TEST_REPORT();
    CHECK(ck_context_backend(ctx) == CK_BACKEND_HOST);
    ck_kernel *k1 = NULL, *k2 = NULL;
    CHECK(ck_op_kernel(ctx, "test/fill", "fill", build_fill, NULL, &k1) == CK_SUCCESS);
    CHECK(ck_op_kernel(ctx, "test/fill", "fill", build_fill, NULL, &k2) == CK_SUCCESS);
    CHECK(k1 == k2 && builds == 1 && ck_context_kernel_count(ctx) == 1);
    void *w1 = NULL, *w2 = NULL;
    CHECK(ck_op_workspace(ctx, 100, &w1) == CK_SUCCESS);
    CHECK(ck_op_workspace(ctx, 200, &w2) == CK_SUCCESS && w1 == w2);
    int n = 300, v = 7;
    void *args[3] = {&w1, &v, &n};
    size_t sizes[3] = {sizeof w1, sizeof v, sizeof n};
    CHECK(ck_op_workspace(ctx, sizeof(int) * 300, &w1) == CK_SUCCESS);
    CHECK(ck_op_launch(ctx, k1, 3, 1, 1, 128, 0, args, sizes, 3) == CK_SUCCESS);
    int host[300];
    CHECK(ck_memcpy_d2h(ck_context_device(ctx), host, w1, sizeof host, NULL) == CK_SUCCESS);
    int bad_count = 0;
    for (int i = 0; i < 300; ++i)
        bad_count += host[i] != 7 + i;
    CHECK(bad_count == 0);
    /* the emulator's device memory is host memory: a kernel may write an ordinary host array
     * (the Python package passes NumPy and CPU torch buffers this way) */
    static int plain[300];
    void *pp = plain;
    void *pargs[3] = {&pp, &v, &n};
    CHECK(ck_op_launch(ctx, k1, 3, 1, 1, 128, 0, pargs, sizes, 3) == CK_SUCCESS);
    bad_count = 0;
    for (int i = 0; i < 300; ++i)
        bad_count += plain[i] != 7 + i;
    CHECK(bad_count == 0);
    /* ck_stream_wrap on the emulator: only the NULL (default) stream */
    ck_stream *s = NULL;
    CHECK(ck_stream_wrap(ck_context_device(ctx), NULL, &s) == CK_SUCCESS && s);
    ck_context_set_stream(ctx, s);
    CHECK(ck_op_launch(ctx, k1, 3, 1, 1, 128, 0, pargs, sizes, 3) == CK_SUCCESS);
    CHECK(ck_context_synchronize(ctx) == CK_SUCCESS);
    ck_context_set_stream(ctx, NULL);
    ck_stream_destroy(s);
    ck_stream *bad_s = NULL;
    CHECK(ck_stream_wrap(ck_context_device(ctx), plain, &bad_s) == CK_ERROR_INVALID_ARGUMENT);
    CHECK(bad_s == NULL && strstr(ck_last_error(), "emulator") != NULL);
    ck_context_destroy(ctx);
    ck_context_destroy(NULL);
    return CK_TEST_REPORT();
}
