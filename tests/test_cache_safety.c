/*
 * The module cache as an attacker or an accident leaves it (issue 20): a FIFO, a symbolic link
 * or a group-writable file in place of an entry, a group-writable or linked directory. Each is
 * refused (never loaded, never blocking) and the kernel runs uncached; a new directory is 0700
 * and entries 0600; `clear` removes what it can and reports what it could not.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck/ck.h"
#include "rt/module_cache.h"
#include "test.h"
#include "test_tmpdir.h"

static char root[256], dir[300];

static ck_hash128 random_key(uint64_t *rng)
{
    ck_hash128 k = {ckt_rand64(rng), ckt_rand64(rng)};
    return k;
}

static void payload(unsigned char *p, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)ckt_rand64(rng);
}

static void test_modes(void)
{
    uint64_t rng = 1234;
    unsigned char data[100];
    payload(data, sizeof data, &rng);
    ck_hash128 k = random_key(&rng);
    CHECK_OK(ck_mcache_store(k, "host-so", data, sizeof data));
    struct stat sb;
    CHECK(stat(dir, &sb) == 0 && (sb.st_mode & 0777) == 0700);
    char path[512];
    CHECK_OK(ck_mcache_path(k, "host-so", path, sizeof path));
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
    void *got = NULL;
    size_t n = 0;
    CHECK_OK(ck_mcache_load(k, "host-so", &got, &n));
    CHECK(n == sizeof data && got && memcmp(got, data, n) == 0);
    free(got);
    /* group-writable entry: refused, left alone */
    CHECK(chmod(path, 0660) == 0);
    CHECK_STATUS(ck_mcache_load(k, "host-so", &got, &n), CK_ERROR_NOT_FOUND);
    CHECK(access(path, F_OK) == 0);
    /* a symbolic link to a valid entry: refused */
    ck_hash128 k2 = random_key(&rng);
    char path2[512];
    CHECK_OK(ck_mcache_store(k2, "host-so", data, sizeof data));
    CHECK_OK(ck_mcache_path(k2, "host-so", path2, sizeof path2));
    char moved[600];
    snprintf(moved, sizeof moved, "%s/elsewhere.so", root);
    CHECK(rename(path2, moved) == 0);
    CHECK(symlink(moved, path2) == 0);
    CHECK_STATUS(ck_mcache_load(k2, "host-so", &got, &n), CK_ERROR_NOT_FOUND);
    /* storing over the link replaces the link, not its target */
    CHECK_OK(ck_mcache_store(k2, "host-so", data, 50));
    CHECK(lstat(path2, &sb) == 0 && S_ISREG(sb.st_mode));
    CHECK(stat(moved, &sb) == 0 && sb.st_size > 100);
    CHECK_OK(ck_mcache_load(k2, "host-so", &got, &n));
    CHECK(n == 50);
    free(got);
}

static void test_fifo(void)
{
    uint64_t rng = 99;
    ck_hash128 k = random_key(&rng);
    char path[512];
    CHECK_OK(ck_mcache_path(k, "host-so", path, sizeof path));
    CHECK(mkfifo(path, 0600) == 0);
    alarm(30); /* a blocking open would hang: fail instead */
    void *got = NULL;
    size_t n = 0;
    CHECK_STATUS(ck_mcache_load(k, "host-so", &got, &n), CK_ERROR_NOT_FOUND);
    ck_cache_entry *e = NULL;
    int count = 0, fifo_seen = 0;
    CHECK_OK(ck_cache_list(&e, &count));
    char hex[33];
    ck_hash_hex(k, hex);
    for (int i = 0; i < count; ++i)
        if (strncmp(e[i].file, hex, 32) == 0) {
            fifo_seen = 1;
            CHECK(!e[i].valid);
        }
    CHECK(fifo_seen);
    free(e);
    alarm(0);
}

static void test_directory(void)
{
    uint64_t rng = 5;
    unsigned char data[64];
    payload(data, sizeof data, &rng);
    ck_hash128 k = random_key(&rng);
    CHECK_OK(ck_mcache_store(k, "cubin", data, sizeof data));
    void *got = NULL;
    size_t n = 0;
    /* a directory others may write: neither read nor written */
    CHECK(chmod(dir, 0777) == 0);
    CHECK_STATUS(ck_mcache_load(k, "cubin", &got, &n), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_mcache_store(k, "cubin", data, sizeof data), CK_ERROR_IO);
    CHECK(strstr(ck_last_error(), "group or other users may write") != NULL);
    CHECK(ck_mcache_dir_refused() != NULL); /* logged once by the cache: callers stay quiet */
    /* listed, but not valid: ck does not use them */
    ck_cache_entry *e = NULL;
    int count = 0, valid = 0;
    CHECK_OK(ck_cache_list(&e, &count));
    for (int i = 0; i < count; ++i)
        valid += e[i].valid;
    CHECK(count >= 1 && valid == 0);
    free(e);
    CHECK(chmod(dir, 0700) == 0);
    CHECK_OK(ck_mcache_load(k, "cubin", &got, &n));
    CHECK(ck_mcache_dir_refused() == NULL);
    free(got);
    /* the directory as a symbolic link: refused */
    char link[400];
    snprintf(link, sizeof link, "%s/link", root);
    CHECK(symlink(dir, link) == 0);
    setenv("CK_CACHE_DIR", link, 1);
    CHECK_STATUS(ck_mcache_load(k, "cubin", &got, &n), CK_ERROR_NOT_FOUND);
    CHECK_STATUS(ck_mcache_store(k, "cubin", data, sizeof data), CK_ERROR_IO);
    CHECK(strstr(ck_last_error(), "symbolic link") != NULL);
    setenv("CK_CACHE_DIR", dir, 1);
}

static void test_clear(void)
{
    /* an entry name that unlink() cannot remove (a non-empty directory) */
    char path[512], inner[600];
    uint64_t rng = 77;
    CHECK_OK(ck_mcache_path(random_key(&rng), "cubin", path, sizeof path));
    CHECK(mkdir(path, 0700) == 0);
    snprintf(inner, sizeof inner, "%s/x", path);
    FILE *f = fopen(inner, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    int removed = -1;
    CHECK_STATUS(ck_cache_clear(&removed), CK_ERROR_IO);
    CHECK(strstr(ck_last_error(), "could not be removed") != NULL);
    CHECK(removed >= 3); /* the entries of the tests above, the FIFO included */
    unlink(inner);
    rmdir(path);
    CHECK_OK(ck_cache_clear(&removed));
    CHECK_EQ_INT(removed, 0);
}

int main(void)
{
    if (!ckt_scratch_cache("ck-cache-safety", root, sizeof root, dir, sizeof dir))
        return 1;
    RUN_TEST(test_modes);
    RUN_TEST(test_fifo);
    RUN_TEST(test_directory);
    RUN_TEST(test_clear);
    ckt_scratch_remove(root);
    return CK_TEST_REPORT();
}
