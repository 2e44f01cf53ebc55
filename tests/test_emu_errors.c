/* Bad input and failures of the runtime and the emulator: each gives a status with a sentence,
 * never a crash or a hang. Emulator only (CK_DEVICE=host is forced). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ck/ck.h"
#include "kernel_harness.h"
#include "rt/module_cache.h"

static void *buf;

static void test_deadlocks(void)
{
    ck_kernel *k = ckk_kernel("errors.cu", "early_exit");
    CHECK_STATUS(ckk_launch(k, 2, 1, 1, 128, 1, 1, 0, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "deadlock") && strstr(ck_last_error(), "exited") &&
          strstr(ck_last_error(), "barrier 0"));
    k = ckk_kernel("errors.cu", "split_barriers");
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "barrier 1") && strstr(ck_last_error(), "barrier 0"));
    k = ckk_kernel("errors.cu", "divergent_shuffle");
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 64, 1, 1, 0, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "collective") != NULL);
}

static void test_barrier_misuse(void)
{
    ck_kernel *k = ckk_kernel("errors.cu", "barrier_counts");
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 128, 1, 1, 0, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "two different thread counts") != NULL);
    k = ckk_kernel("errors.cu", "barrier_id");
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 32, 1, 1, 0, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "id 16 is out of range") != NULL);
    /* static shared memory is limited to 48 KiB as on the GPU (where ptxas refuses it) */
    const char *src = "#include \"ck_device.h\"\n"
                      "CK_KERNEL void too_much_shared(int *out)\n"
                      "{\n"
                      "    CK_SHARED_ARRAY(int, a, 8192);\n"
                      "    CK_SHARED_ARRAY(int, b, 8192);\n"
                      "    a[ck_thread_linear()] = 1;\n"
                      "    b[ck_thread_linear()] = 2;\n"
                      "    out[0] = a[0] + b[0];\n"
                      "}\n";
    ck_module *m = NULL;
    k = NULL;
    CHECK_OK(ck_module_load(ckk_open(), src, NULL, 0, &m));
    if (m)
        CHECK_OK(ck_module_get_kernel(m, "too_much_shared", &k));
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 32, 1, 1, 8192, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "static shared memory") != NULL);
}

/* A kernel that spins forever (emulator-only name ck_emu_yield: not a conformance kernel). */
static void test_spin_hang(void)
{
    const char *src = "#include \"ck_device.h\"\n"
                      "CK_KERNEL void spin(volatile int *flag)\n"
                      "{\n"
                      "    while (*flag == 0)\n"
                      "        ck_emu_yield();\n"
                      "}\n";
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    CHECK_OK(ck_module_load(ckk_open(), src, NULL, 0, &m));
    if (m)
        CHECK_OK(ck_module_get_kernel(m, "spin", &k));
    memset(buf, 0, 64);
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 1, 1, 1, 0, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "spinning") != NULL);
}

static void test_trap_and_alignment(void)
{
    ck_kernel *k = ckk_kernel("errors.cu", "traps");
    CHECK_STATUS(ckk_launch(k, 3, 1, 1, 32, 1, 1, 0, 1, CKK_ARG(buf)), CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "thread (5, 0, 0) of block (1, 0, 0)") != NULL);
    k = ckk_kernel("vec16.cu", "vec16_misaligned");
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 32, 1, 1, 0, 2, CKK_ARG(buf), CKK_ARG(buf)),
                 CK_ERROR_LAUNCH);
    CHECK(strstr(ck_last_error(), "16-byte aligned") != NULL);
}

static void test_bad_launches(void)
{
    ck_kernel *k = ckk_kernel("shared.cu", "dynamic_rotate");
    int n = 4;
    short small = 1;
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 32, 1, 1, 0, 2, CKK_ARG(buf), CKK_ARG(buf)),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "takes 3 arguments but 2") != NULL);
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 32, 1, 1, 0, 3, CKK_ARG(buf), CKK_ARG(buf), CKK_ARG(small)),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "int n") != NULL);
    CHECK_STATUS(ckk_launch(k, 1, 1, 1, 33, 32, 1, 0, 3, CKK_ARG(buf), CKK_ARG(buf), CKK_ARG(n)),
                 CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(
        ckk_launch(k, 1, 1, 1, 32, 1, 1, 300000, 3, CKK_ARG(buf), CKK_ARG(buf), CKK_ARG(n)),
        CK_ERROR_INVALID_ARGUMENT);
    void *args[3] = {&buf, NULL, &n};
    size_t sizes[3] = {8, 8, 4};
    ck_launch_config c = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 64, NULL};
    CHECK_STATUS(ck_launch(k, &c, args, sizes, 3), CK_ERROR_INVALID_ARGUMENT);
    ck_launch_config cl = {{3, 1, 1}, {32, 1, 1}, {2, 1, 1}, 64, NULL};
    args[1] = &buf;
    CHECK_STATUS(ck_launch(k, &cl, args, sizes, 3), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "cluster") != NULL);
    CHECK_STATUS(ck_launch(NULL, &c, args, sizes, 3), CK_ERROR_INVALID_ARGUMENT);
    k = ckk_kernel("errors.cu", "no_params");
    CHECK_OK(ckk_launch(k, 2, 1, 1, 32, 1, 1, 0, 0));
}

static void test_bad_modules(void)
{
    ck_device *d = ckk_open();
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    const char *bad =
        "#include \"ck_device.h\"\nCK_KERNEL void k(int *p) { p[0] = undeclared_x; }\n";
    CHECK_STATUS(ck_module_load(d, bad, NULL, 0, &m), CK_ERROR_COMPILE);
    CHECK(strstr(ck_last_error(), "undeclared_x") != NULL);
    const char *kept = strstr(ck_last_error(), "is kept in ");
    CHECK(kept != NULL);
    if (kept) {
        char path[4096];
        sscanf(kept + strlen("is kept in "), "%4095[^ ]", path);
        CHECK_MSG(access(path, R_OK) == 0, "kept source %s is missing", path);
        /* remove the kept directory */
        char cmd[4200], *slash = strrchr(path, '/');
        if (slash) {
            *slash = '\0';
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
            CHECK(system(cmd) == 0);
        }
    }
    CHECK_STATUS(ck_module_load(d, "int x;\n", NULL, 0, &m), CK_ERROR_INVALID_ARGUMENT);
    const char *opts[] = {"-O3"};
    char *src = ckk_read_kernel("ids.cu");
    CHECK_STATUS(ck_module_load(d, src, opts, 1, &m), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_module_load(d, NULL, NULL, 0, &m), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_module_load(d, src, NULL, 0, &m));
    CHECK_STATUS(ck_module_get_kernel(m, "nope", &k), CK_ERROR_NOT_FOUND);
    CHECK(strstr(ck_last_error(), "'ids'") != NULL);
    ck_module *again = NULL;
    CHECK_OK(ck_module_load(d, src, NULL, 0, &again));
    CHECK(again == m);
    const char *def[] = {"-DUNUSED_OPTION=3"};
    CHECK_OK(ck_module_load(d, src, def, 1, &again));
    CHECK(again != m);
    free(src);
}

static void test_corrupted_cache(void)
{
    /* Compile into the cache, corrupt every entry, reload on a fresh device: recompiled. */
    char *src = ckk_read_kernel("shared.cu");
    ck_device *d = NULL;
    ck_module *m = NULL;
    CHECK_OK(ck_device_open(CK_BACKEND_HOST, 0, &d));
    CHECK_OK(ck_module_load(d, src, NULL, 0, &m));
    ck_device_close(d);
    ck_cache_entry *entries = NULL;
    int count = 0;
    CHECK_OK(ck_cache_list(&entries, &count));
    CHECK(count >= 1);
    char dir[4096], path[8192];
    CHECK_OK(ck_cache_dir(dir, sizeof dir));
    for (int i = 0; i < count; ++i) {
        CHECK(entries[i].valid);
        snprintf(path, sizeof path, "%s/%s", dir, entries[i].file);
        FILE *f = fopen(path, "r+b");
        if (f) { /* flip one byte in the payload */
            fseek(f, 100, SEEK_SET);
            int ch = fgetc(f);
            fseek(f, 100, SEEK_SET);
            fputc(ch ^ 0x55, f);
            fclose(f);
        }
    }
    free(entries);
    CHECK_OK(ck_cache_list(&entries, &count));
    for (int i = 0; i < count; ++i)
        CHECK(!entries[i].valid);
    free(entries);
    CHECK_OK(ck_device_open(CK_BACKEND_HOST, 0, &d));
    CHECK_OK(ck_module_load(d, src, NULL, 0, &m));
    ck_kernel *k = NULL;
    CHECK_OK(ck_module_get_kernel(m, "reverse_static", &k));
    int in[256], out[256];
    for (int i = 0; i < 256; ++i)
        in[i] = i * 7 - 100;
    void *din = NULL, *dout = NULL;
    CHECK_OK(ck_malloc(d, sizeof in, &din));
    CHECK_OK(ck_malloc(d, sizeof out, &dout));
    CHECK_OK(ck_memcpy_h2d(d, din, in, sizeof in, NULL));
    void *args[] = {&din, &dout};
    size_t sizes[] = {8, 8};
    ck_launch_config c = {{1, 1, 1}, {256, 1, 1}, {0, 0, 0}, 0, NULL};
    CHECK_OK(ck_launch(k, &c, args, sizes, 2));
    CHECK_OK(ck_memcpy_d2h(d, out, dout, sizeof out, NULL));
    for (int i = 0; i < 256; ++i)
        CHECK_EQ_INT(out[i], in[255 - i]);
    ck_device_close(d); /* frees din/dout too */
    /* truncated entry */
    CHECK_OK(ck_cache_list(&entries, &count));
    for (int i = 0; i < count; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, entries[i].file);
        CHECK(truncate(path, 20) == 0);
    }
    free(entries);
    CHECK_OK(ck_device_open(CK_BACKEND_HOST, 0, &d));
    CHECK_OK(ck_module_load(d, src, NULL, 0, &m));
    ck_device_close(d);
    int removed = 0;
    CHECK_OK(ck_cache_clear(&removed));
    CHECK(removed >= 1);
    CHECK_OK(ck_cache_list(&entries, &count));
    CHECK_EQ_INT(count, 0);
    free(entries);
    free(src);
}

static void test_devices_and_memory(void)
{
    ck_device *d = NULL;
    CHECK_STATUS(ck_device_open((ck_backend)7, 0, &d), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_device_open(CK_BACKEND_HOST, 1, &d), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_device_open(CK_BACKEND_HOST, 0, NULL), CK_ERROR_INVALID_ARGUMENT);
    ck_system_info info;
    CHECK_OK(ck_query_system(&info));
    if (info.device_count == 0) {
        CHECK_STATUS(ck_device_open(CK_BACKEND_CUDA, 0, &d), CK_ERROR_BACKEND_UNAVAILABLE);
        setenv("CK_DEVICE", "cuda", 1);
        CHECK_STATUS(ck_device_open(CK_BACKEND_AUTO, 0, &d), CK_ERROR_BACKEND_UNAVAILABLE);
    }
    setenv("CK_DEVICE", "tpu", 1);
    CHECK_STATUS(ck_device_open(CK_BACKEND_AUTO, 0, &d), CK_ERROR_INVALID_ARGUMENT);
    setenv("CK_DEVICE", "host", 1);
    setenv("CK_HOST_CC", "/nonexistent/cc", 1);
    CHECK_STATUS(ck_device_open(CK_BACKEND_AUTO, 0, &d), CK_ERROR_BACKEND_UNAVAILABLE);
    unsetenv("CK_HOST_CC");
    CHECK_OK(ck_device_open(CK_BACKEND_AUTO, 0, &d));
    void *p = NULL;
    CHECK_STATUS(ck_malloc(d, 0, &p), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_malloc(d, (size_t)1 << 50, &p), CK_ERROR_OUT_OF_MEMORY);
    int local;
    CHECK_STATUS(ck_free(d, &local), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_malloc(d, 1000, &p));
    CHECK(((uintptr_t)p % 256) == 0);
    CHECK_OK(ck_free(d, p));
    CHECK_STATUS(ck_free(d, p), CK_ERROR_INVALID_ARGUMENT);
    CHECK_OK(ck_free(d, NULL));
    CHECK_STATUS(ck_memcpy_h2d(d, NULL, &local, 4, NULL), CK_ERROR_INVALID_ARGUMENT);
    ck_event *a = NULL, *b = NULL;
    float ms = -1;
    CHECK_OK(ck_event_create(d, &a));
    CHECK_OK(ck_event_create(d, &b));
    CHECK_STATUS(ck_event_elapsed_ms(a, b, &ms), CK_ERROR_INVALID_ARGUMENT);
    ck_stream *s = NULL;
    CHECK_OK(ck_stream_create(d, &s));
    CHECK_OK(ck_event_record(a, s));
    CHECK_OK(ck_event_record(b, s));
    CHECK_OK(ck_event_synchronize(b));
    CHECK_OK(ck_event_elapsed_ms(a, b, &ms));
    CHECK(ms >= 0);
    ck_event_destroy(a);
    ck_stream_destroy(s);
    ck_device_close(d); /* b is released with the device */
}

/* Under AddressSanitizer an out-of-bounds read in a kernel stops the process (in a child). */
static void test_asan_catches_kernel_oob(void)
{
#if defined(__SANITIZE_ADDRESS__)
#define CKT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CKT_ASAN 1
#endif
#endif
#ifdef CKT_ASAN
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        ck_device *d = NULL;
        ck_module *m = NULL;
        ck_kernel *k = NULL;
        char *src = ckk_read_kernel("errors.cu");
        int n = 32, *in = NULL, *out = NULL;
        if (ck_device_open(CK_BACKEND_HOST, 0, &d) || ck_module_load(d, src, NULL, 0, &m) ||
            ck_module_get_kernel(m, "out_of_bounds", &k))
            _exit(3);
        ck_malloc(d, 32 * 4, (void **)&in);
        ck_malloc(d, 32 * 4, (void **)&out);
        void *args[] = {&in, &out, &n};
        size_t sizes[] = {8, 8, 4};
        ck_launch_config c = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, NULL};
        ck_launch(k, &c, args, sizes, 3);
        _exit(0); /* not reached under ASan */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(!(WIFEXITED(status) && WEXITSTATUS(status) == 0),
              "an out-of-bounds kernel read was not caught by AddressSanitizer");
    CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 3));
#else
    printf("library not built with AddressSanitizer; skipped\n");
#endif
}

int main(void)
{
    /* a cache directory of its own: this test corrupts and clears it */
    char dir[4096];
    ck_cache_dir(dir, sizeof dir - 32);
    strcat(dir, "/test_emu_errors");
    setenv("CK_CACHE_DIR", dir, 1);
    setenv("CK_DEVICE", "host", 1);
    if (!ckk_open())
        return 1;
    CHECK_OK(ck_malloc(ckk_device, 4096, &buf));
    RUN_TEST(test_deadlocks);
    RUN_TEST(test_trap_and_alignment);
    RUN_TEST(test_barrier_misuse);
    RUN_TEST(test_spin_hang);
    RUN_TEST(test_bad_launches);
    RUN_TEST(test_bad_modules);
    ckk_close();
    RUN_TEST(test_corrupted_cache);
    RUN_TEST(test_devices_and_memory);
    RUN_TEST(test_asan_catches_kernel_oob);
    return CK_TEST_REPORT();
}
