/*
 * NVRTC's version for kernel cache keys (src/rt/nvrtc_stamp.c): the first process loads NVRTC
 * and leaves a stamp in the module cache; a later process takes the version from the stamp
 * without loading NVRTC while the library file is unchanged, and loads it again when the
 * stamp is damaged or names a file that changed. Skipped where NVRTC is absent.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ck/ck.h"
#include "rt/module_cache.h"
#include "rt/runtime_internal.h"
#include "test.h"

static char root[256], dir[300];

/* In a child process (NVRTC not yet loaded there): the version for the key, and whether NVRTC
 * had to be loaded for it. Returns major * 1000 + minor * 10 + loaded, or -1. */
static int child_version(void)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        int major = 0, minor = 0, r = -1;
        if (ck_nvrtc_version_for_key(&major, &minor) == CK_SUCCESS)
            r = major * 1000 + minor * 10 + ck_nvrtc_loaded();
        ssize_t w = write(fd[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    int r = -1, status = 0;
    if (read(fd[0], &r, sizeof r) != (ssize_t)sizeof r)
        r = -1;
    close(fd[0]);
    waitpid(pid, &status, 0);
    return r;
}

static void stamp_path(char *path, size_t size)
{
    ck_hasher h;
    ck_hasher_init(&h);
    ck_hasher_str(&h, "ck-nvrtc-stamp-1");
    CHECK_OK(ck_mcache_path(ck_hasher_final(&h), "nvrtc", path, size));
}

static void test_stamp(void)
{
    /* no stamp yet: the child loads NVRTC and writes one (this process never loads it
     * before the last step, so the children start without it) */
    int first = child_version();
    if (first < 0) {
        printf("  (NVRTC not found: skipped)\n");
        return;
    }
    CHECK_EQ_INT(first % 10, 1);
    int expect = first - 1;
    char path[4200];
    stamp_path(path, sizeof path);
    CHECK(access(path, F_OK) == 0);
    /* with the stamp: the same version, NVRTC not loaded */
    CHECK_EQ_INT(child_version(), expect);
    CHECK_EQ_INT(child_version(), expect);
    /* a damaged stamp (the cache's checksum refuses it): loaded again, and stamped anew */
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (f) {
        fseek(f, -10, SEEK_END);
        fputc('X', f);
        fclose(f);
    }
    CHECK_EQ_INT(child_version(), expect + 1);
    CHECK_EQ_INT(child_version(), expect);
    /* CK_NVRTC_PATH (a developer's override) always loads */
    char lib[4096];
    CHECK_OK(ck_nvrtc_library_path(lib, sizeof lib));
    setenv("CK_NVRTC_PATH", lib, 1);
    CHECK_EQ_INT(child_version(), expect + 1);
    unsetenv("CK_NVRTC_PATH");
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/ck-nvrtc-stamp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        fprintf(stderr, "mkdtemp failed\n");
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/cache", root);
    setenv("CK_CACHE_DIR", dir, 1);
    RUN_TEST(test_stamp);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return CK_TEST_REPORT();
}
