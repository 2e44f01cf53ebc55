/* Every conformance kernel source (tests/kernels/NAME.cu) compiles with NVRTC for sm_80, sm_89 and
 * sm_90a against the embedded CUDA prelude (no GPU needed), from the lowest target it names in a
 * line "ck-min-target: sm_89" (or sm_90a) on. Skipped when NVRTC is absent. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_harness.h"
#include "rt/runtime_internal.h"

static void test_all_kernels(void)
{
    int major = 0, minor = 0;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS) {
        printf("NVRTC not available (%s); skipped\n", ck_last_error());
        return;
    }
    printf("NVRTC %d.%d\n", major, minor);
    char dir[4096];
    const char *here = __FILE__, *slash = strrchr(here, '/');
    snprintf(dir, sizeof dir, "%.*skernels", slash ? (int)(slash - here + 1) : 0, here);
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d)
        return;
    struct dirent *e;
    int files = 0;
    const char *archs[] = {"sm_80", "sm_89", "sm_90a"};
    const char *opts[] = {"-DCK_TEST_NVRTC=1"};
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".cu") != 0)
            continue;
        char *src = ckk_read_kernel(e->d_name);
        CHECK(src != NULL);
        int first = 0; /* index of the lowest target the source asks for */
        const char *mt = src ? strstr(src, "ck-min-target: ") : NULL;
        if (mt && strncmp(mt + 15, "sm_89", 5) == 0)
            first = 1;
        else if (mt && strncmp(mt + 15, "sm_90a", 6) == 0)
            first = 2;
        for (int a = first; src && a < 3; ++a) {
            void *cubin = NULL;
            size_t size = 0;
            ck_status st = ck_nvrtc_compile(src, archs[a], opts, 1, &cubin, &size);
            CHECK_MSG(st == CK_SUCCESS, "%s for %s: %s", e->d_name, archs[a], ck_last_error());
            CHECK(st != CK_SUCCESS || (size > 4 && memcmp(cubin, "\177ELF", 4) == 0));
            free(cubin);
        }
        free(src);
        files++;
    }
    closedir(d);
    CHECK(files >= 6);
}

static void test_compile_error(void)
{
    int major, minor;
    if (ck_nvrtc_version(&major, &minor) != CK_SUCCESS)
        return;
    const char *bad = "#include \"ck_device.h\"\nCK_KERNEL void k(int *p) { p[0] = undeclared; }\n";
    void *cubin = NULL;
    size_t size = 0;
    CHECK_STATUS(ck_nvrtc_compile(bad, "sm_90a", NULL, 0, &cubin, &size), CK_ERROR_COMPILE);
    CHECK(strstr(ck_last_error(), "undeclared") != NULL);
    const char *path = strstr(ck_last_error(), "the source is in ");
    CHECK(path != NULL);
    if (path) {
        char file[4096];
        sscanf(path + strlen("the source is in "), "%4095[^ ]", file);
        size_t len = strlen(file);
        if (len && file[len - 1] == '.')
            file[len - 1] = '\0';
        FILE *f = fopen(file, "r");
        CHECK_MSG(f != NULL, "the kept source %s is missing", file);
        if (f) {
            fclose(f);
            remove(file);
        }
    }
    CHECK(cubin == NULL);
}

int main(void)
{
    RUN_TEST(test_all_kernels);
    RUN_TEST(test_compile_error);
    return CK_TEST_REPORT();
}
