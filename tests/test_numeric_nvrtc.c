/* src/core/numeric_conv.h compiles as CUDA C++ under NVRTC for sm_90a (the GPU kernels
 * reuse it). NVRTC is loaded at run time; without it the test prints a notice and passes. */
#include <stdlib.h>

#include "rt/dynlib.h"
#include "test.h"

typedef int (*nvrtc_create_fn)(void **prog, const char *src, const char *name, int nheaders,
                               const char *const *headers, const char *const *include_names);
typedef int (*nvrtc_compile_fn)(void *prog, int nopts, const char *const *opts);
typedef int (*nvrtc_size_fn)(void *prog, size_t *size);
typedef int (*nvrtc_get_fn)(void *prog, char *out);
typedef int (*nvrtc_destroy_fn)(void **prog);

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

/* A kernel that instantiates every conversion, mode and helper of the header. */
static const char kernel_src[] =
    "#include \"numeric_conv.h\"\n"
    "extern \"C\" __global__ void ck_numeric_conv_check(const float *in, const double *in64,\n"
    "                                                  unsigned long long *out, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    uint64_t acc = 0;\n"
    "    uint32_t rnd = ck_nc_rand_word(42u, (uint64_t)i);\n"
    "    for (int t = 0; t < CK_NC_TYPE_COUNT; ++t)\n"
    "        for (int r = 0; r < 4; ++r)\n"
    "            for (int o = 0; o < 2; ++o) {\n"
    "                uint64_t c = ck_nc_from_f32(t, in[i], r, o, rnd);\n"
    "                acc = acc * 31u + c + ck_nc_from_f64(t, in64[i], r, o, rnd);\n"
    "                acc += ck_nc_f32_bits(ck_nc_to_f32(t, c));\n"
    "                acc += ck_nc_f64_bits(ck_nc_to_f64(t, c));\n"
    "                ck_nc_unpacked u = ck_nc_scale(ck_nc_decode(t, c), 0.5f);\n"
    "                acc += ck_nc_encode(t, u, r, o, rnd);\n"
    "            }\n"
    "    acc += ck_nc_f32_to_f16(in[i]) + ck_nc_f32_to_bf16(in[i]) + ck_nc_f32_to_fp8e4m3(in[i]);\n"
    "    acc += ck_nc_f32_to_fp8e5m2(in[i]) + ck_nc_f32_to_fp6e2m3(in[i]);\n"
    "    acc += ck_nc_f32_to_fp6e3m2(in[i]) + ck_nc_f32_to_fp4e2m1(in[i]);\n"
    "    acc += (uint64_t)(ck_nc_f16_to_f32(1) + ck_nc_bf16_to_f32(2) + ck_nc_fp8e4m3_to_f32(3)\n"
    "         + ck_nc_fp8e5m2_to_f32(4) + ck_nc_fp6e2m3_to_f32(5) + ck_nc_fp6e3m2_to_f32(6)\n"
    "         + ck_nc_fp4e2m1_to_f32(7));\n"
    "    acc += (uint64_t)ck_nc_bits_f64(ck_nc_f64_bits(in64[i]));\n"
    "    out[i] = acc;\n"
    "}\n";

static void test_header_compiles_with_nvrtc(void)
{
    const char *names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", NULL};
    const char *dirs[] = {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", NULL};
    void *lib = NULL;
    char found[512];
    if (ck_dynlib_open("NVRTC", "CK_NVRTC_LIBRARY", names, dirs, &lib, found, sizeof found) !=
        CK_SUCCESS) {
        printf("NOTICE: NVRTC not available, skipping: %s\n", ck_last_error());
        return;
    }
    nvrtc_create_fn create;
    nvrtc_compile_fn compile;
    nvrtc_size_fn log_size, cubin_size;
    nvrtc_get_fn get_log;
    nvrtc_destroy_fn destroy;
    int ok = ck_dynlib_symbol(lib, "NVRTC", "nvrtcCreateProgram", &create) == CK_SUCCESS &&
             ck_dynlib_symbol(lib, "NVRTC", "nvrtcCompileProgram", &compile) == CK_SUCCESS &&
             ck_dynlib_symbol(lib, "NVRTC", "nvrtcGetProgramLogSize", &log_size) == CK_SUCCESS &&
             ck_dynlib_symbol(lib, "NVRTC", "nvrtcGetProgramLog", &get_log) == CK_SUCCESS &&
             ck_dynlib_symbol(lib, "NVRTC", "nvrtcGetCUBINSize", &cubin_size) == CK_SUCCESS &&
             ck_dynlib_symbol(lib, "NVRTC", "nvrtcDestroyProgram", &destroy) == CK_SUCCESS;
    CHECK_MSG(ok, "NVRTC symbols: %s", ck_last_error());
    /* The source tree: $CK_SOURCE_DIR (set by ctest), else from this file's path. */
    const char *srcdir = getenv("CK_SOURCE_DIR");
    char path[4096];
    if (srcdir && *srcdir) {
        snprintf(path, sizeof path, "%s/src/core/numeric_conv.h", srcdir);
    } else {
        snprintf(path, sizeof path, "%s", __FILE__);
        char *cut = strstr(path, "tests/test_numeric_nvrtc.c");
        snprintf(cut ? cut : path, sizeof path - (size_t)((cut ? cut : path) - path),
                 "src/core/numeric_conv.h");
    }
    char *header = read_file(path);
    CHECK_MSG(header != NULL, "cannot read %s", path);
    if (ok && header) {
        printf("NVRTC: %s, header %s\n", found, path);
        void *prog = NULL;
        const char *headers[] = {header};
        const char *include_names[] = {"numeric_conv.h"};
        CHECK_EQ_INT(create(&prog, kernel_src, "numeric_conv_check.cu", 1, headers, include_names),
                     0);
        const char *opts[] = {"--gpu-architecture=sm_90a", "--std=c++17", "-default-device"};
        int rc = compile(prog, 3, opts);
        size_t n = 0;
        log_size(prog, &n);
        char *log = malloc(n + 1);
        if (log && get_log(prog, log) == 0 && n > 1)
            printf("NVRTC log:\n%s\n", log);
        free(log);
        CHECK_EQ_INT(rc, 0);
        size_t cubin = 0;
        if (rc == 0) {
            CHECK_EQ_INT(cubin_size(prog, &cubin), 0);
            CHECK(cubin > 1000);
            printf("sm_90a cubin: %zu bytes\n", cubin);
        }
        destroy(&prog);
    }
    free(header);
    /* NVRTC keeps process-lifetime state from its first call; unloading it would orphan that
     * memory (LeakSanitizer reports it), so it stays loaded, as in src/rt/system.c. */
}

int main(void)
{
    RUN_TEST(test_header_compiles_with_nvrtc);
    return CK_TEST_REPORT();
}
