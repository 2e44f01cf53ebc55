/* A scratch directory for a test that points CK_CACHE_DIR at a fresh cache: <TMPDIR>/<name>-XXXXXX
 * with `cache` inside (not yet created), removed with everything in it at the end. */
#ifndef CK_TESTS_TEST_TMPDIR_H
#define CK_TESTS_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* Makes root, sets CK_CACHE_DIR to root/cache (written to dir); 0 on failure. */
static int ckt_scratch_cache(const char *name, char *root, size_t root_size, char *dir,
                             size_t dir_size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, root_size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    if (!mkdtemp(root)) {
        fprintf(stderr, "mkdtemp failed\n");
        return 0;
    }
    snprintf(dir, dir_size, "%s/cache", root);
    setenv("CK_CACHE_DIR", dir, 1);
    return 1;
}

static void ckt_scratch_remove(const char *root)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
}

#endif
