/*
 * Runtime and emulator measurements: cold NVRTC compile of a small kernel for sm_90a, warm
 * module-cache load, emulator throughput for 256-thread blocks with barriers.
 * Build (after building ck in build/):
 *   cc -O2 -std=gnu11 -Iinclude -Ibuild/generated -Isrc bench/runtime_bench.c \
 *      build/lib/libck.a -ldl -lpthread -lm -o build/runtime_bench && build/runtime_bench
 * One module load on the device CK_DEVICE chooses, timed (scripts/gpu-check runs it with an
 * empty $CK_CACHE_DIR for a cold compile, then again in a new process for a warm cache load):
 *   build/runtime_bench module small|FILE.cu
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/runtime.h"
#include "rt/module_cache.h"
#include "rt/runtime_internal.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *small_kernel =
    "#include \"ck_device.h\"\n"
    "CK_KERNEL void scale(float *y, const float *x, float a, int n)\n"
    "{\n"
    "    int i = (int)(ck_block_idx_x() * ck_block_dim_x() + ck_thread_idx_x());\n"
    "    if (i < n) y[i] = a * x[i];\n"
    "}\n";

/* Block-wide tree reduction in shared memory: 8 barriers per block, plus one warp reduction. */
static const char *barrier_kernel = "#include \"ck_device.h\"\n"
                                    "CK_KERNEL void block_sum(const float *x, float *out)\n"
                                    "{\n"
                                    "    CK_SHARED_ARRAY(float, s, 256);\n"
                                    "    unsigned t = ck_thread_linear();\n"
                                    "    s[t] = x[ck_block_idx_x() * 256u + t];\n"
                                    "    ck_sync_threads();\n"
                                    "    for (unsigned h = 128; h >= 32; h /= 2) {\n"
                                    "        if (t < h) s[t] += s[t + h];\n"
                                    "        ck_sync_threads();\n"
                                    "    }\n"
                                    "    float v = t < 32 ? s[t] : 0.0f;\n"
                                    "    v = ck_warp_reduce_add_f32(v);\n"
                                    "    if (t == 0) out[ck_block_idx_x()] = v;\n"
                                    "    ck_sync_threads();\n"
                                    "}\n";

/* `module small|FILE`: time one ck_module_load (and the device opening apart). */
static int time_module_load(const char *what)
{
    char *src = NULL;
    if (strcmp(what, "small") == 0) {
        src = strdup(small_kernel);
    } else {
        FILE *f = fopen(what, "rb");
        if (!f) {
            fprintf(stderr, "runtime_bench: cannot open %s\n", what);
            return 2;
        }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        src = malloc((size_t)n + 1);
        if (src && fread(src, 1, (size_t)n, f) == (size_t)n)
            src[n] = '\0';
        fclose(f);
    }
    ck_device *d = NULL;
    if (!src || ck_device_open(CK_BACKEND_AUTO, 0, &d) != CK_SUCCESS) {
        fprintf(stderr, "runtime_bench: %s\n", src ? ck_last_error() : "out of memory");
        free(src);
        return 1;
    }
    ck_device_props p;
    ck_device_get_props(d, &p);
    ck_module *m = NULL;
    double t0 = now();
    ck_status st = ck_module_load(d, src, NULL, 0, &m);
    double t = now() - t0;
    if (st != CK_SUCCESS)
        fprintf(stderr, "runtime_bench: %s\n", ck_last_error());
    else
        printf("ck_module_load %s (%zu bytes of source) on %s (%s): %.1f ms\n", what, strlen(src),
               p.name, p.target, t * 1e3);
    ck_device_close(d);
    free(src);
    return st == CK_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "module") == 0)
        return time_module_load(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "Usage: runtime_bench [module small|FILE.cu]\n");
        return 2;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "/tmp/ck-bench-cache-%d", (int)getpid());
    setenv("CK_CACHE_DIR", dir, 1);

    /* 1. cold NVRTC compiles (the first also loads libnvrtc) */
    int maj = 0, min = 0;
    if (ck_nvrtc_version(&maj, &min) == CK_SUCCESS) {
        for (int i = 0; i < 4; ++i) {
            char src[1024];
            snprintf(src, sizeof src, "%s// variant %d\n", small_kernel, i);
            void *cubin = NULL;
            size_t size = 0;
            double t0 = now();
            ck_status st = ck_nvrtc_compile(src, "sm_90a", NULL, 0, &cubin, &size);
            double t1 = now();
            printf("NVRTC %d.%d cold compile for sm_90a #%d: %.1f ms (%s, %zu-byte cubin)\n", maj,
                   min, i, (t1 - t0) * 1e3, st == CK_SUCCESS ? "ok" : ck_last_error(), size);
            if (i == 0 && st == CK_SUCCESS) {
                ck_hash128 key = {1, 2};
                ck_mcache_store(key, "cubin", cubin, size);
                double t2 = now();
                void *back = NULL;
                size_t n = 0;
                for (int r = 0; r < 100; ++r) {
                    free(back);
                    ck_mcache_load(key, "cubin", &back, &n);
                }
                printf("warm cubin read from the disk cache (read + verify): %.3f ms\n",
                       (now() - t2) * 1e3 / 100);
                free(back);
            }
            free(cubin);
        }
    } else {
        printf("NVRTC not available: %s\n", ck_last_error());
    }

    /* 2. emulator: cold compile, warm load (new device, same disk cache) */
    ck_device *d = NULL;
    ck_module *m = NULL;
    if (ck_device_open(CK_BACKEND_HOST, 0, &d) != CK_SUCCESS) {
        printf("no emulator: %s\n", ck_last_error());
        return 1;
    }
    double t0 = now();
    ck_module_load(d, barrier_kernel, NULL, 0, &m);
    printf("emulator cold compile (host C compiler): %.1f ms\n", (now() - t0) * 1e3);
    ck_device_close(d);
    double best = 1e9;
    for (int i = 0; i < 5; ++i) {
        ck_device_open(CK_BACKEND_HOST, 0, &d);
        t0 = now();
        ck_status st = ck_module_load(d, barrier_kernel, NULL, 0, &m);
        double t = now() - t0;
        best = t < best ? t : best;
        if (st != CK_SUCCESS)
            printf("load failed: %s\n", ck_last_error());
        if (i < 4)
            ck_device_close(d);
    }
    printf("emulator warm cache load (disk cache, new device): %.3f ms\n", best * 1e3);

    /* 3. emulator throughput */
    ck_kernel *k = NULL;
    ck_module_get_kernel(m, "block_sum", &k);
    int blocks = 512;
    float *x = NULL, *out = NULL;
    ck_malloc(d, sizeof(float) * 256 * (size_t)blocks, (void **)&x);
    ck_malloc(d, sizeof(float) * (size_t)blocks, (void **)&out);
    for (int i = 0; i < 256 * blocks; ++i)
        x[i] = (float)(i % 17);
    void *args[] = {&x, &out};
    size_t sizes[] = {8, 8};
    ck_launch_config c = {{(unsigned)blocks, 1, 1}, {256, 1, 1}, {0, 0, 0}, 0, NULL};
    const char *threads[] = {"1", "2"};
    for (int w = 0; w < 2; ++w) {
        setenv("CK_EMU_THREADS", threads[w], 1);
        ck_launch(k, &c, args, sizes, 2); /* warm-up */
        t0 = now();
        int reps = 3;
        for (int r = 0; r < reps; ++r)
            if (ck_launch(k, &c, args, sizes, 2) != CK_SUCCESS)
                printf("launch failed: %s\n", ck_last_error());
        double t = (now() - t0) / reps;
        printf("emulator, 256-thread blocks with 5 barriers + a warp reduction, %s worker "
               "thread(s): %.0f blocks/s (%.2f ms per %d-block launch)\n",
               threads[w], blocks / t, t * 1e3, blocks);
    }
    int ok = 1;
    for (int b = 0; b < blocks; ++b) {
        double s = 0;
        for (int i = 0; i < 256; ++i)
            s += (b * 256 + i) % 17;
        ok &= out[b] == (float)s;
    }
    printf("results %s\n", ok ? "correct" : "WRONG");
    ck_device_close(d);
    int removed;
    ck_cache_clear(&removed);
    rmdir(dir);
    return ok ? 0 : 1;
}
