/* The on-disk module cache and the hashes that key it. */
#include "rt/module_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/runtime.h"
#include "core/error.h"
#include "rt/embedded_headers.h"

#define MAGIC "CKMC0001"
enum { HEADER_BYTES = 8 + 16 + 8 + 8 + 8 };

void ck_hasher_init(ck_hasher *h)
{
    h->a = 0xcbf29ce484222325ull;
    h->b = 0x84222325cbf29ce4ull;
    h->n = 0;
}

static void mix_byte(ck_hasher *h, unsigned char c)
{
    h->a = (h->a ^ c) * 0x100000001b3ull;
    h->b = ((h->b << 7 | h->b >> 57) ^ c) * 0xff51afd7ed558ccdull;
    h->n++;
}

void ck_hasher_field(ck_hasher *h, const void *data, size_t size)
{
    uint64_t len = size;
    for (int i = 0; i < 8; ++i)
        mix_byte(h, (unsigned char)(len >> (8 * i)));
    const unsigned char *p = data;
    for (size_t i = 0; i < size; ++i)
        mix_byte(h, p[i]);
}

void ck_hasher_str(ck_hasher *h, const char *s)
{
    ck_hasher_field(h, s ? s : "", s ? strlen(s) : 0);
}

static uint64_t fmix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

ck_hash128 ck_hasher_final(const ck_hasher *h)
{
    ck_hash128 k = {fmix(h->a ^ h->n), fmix(h->b + h->a)};
    return k;
}

void ck_hash_hex(ck_hash128 k, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)k.a, (unsigned long long)k.b);
}

static ck_hash128 headers_hash;
static pthread_once_t headers_once = PTHREAD_ONCE_INIT;
static void compute_headers_hash(void)
{
    ck_hasher h;
    ck_hasher_init(&h);
    for (int i = 0; ck_embedded_headers[i].name; ++i) {
        ck_hasher_str(&h, ck_embedded_headers[i].name);
        ck_hasher_field(&h, ck_embedded_headers[i].data, ck_embedded_headers[i].size);
    }
    headers_hash = ck_hasher_final(&h);
}
ck_hash128 ck_device_headers_hash(void)
{
    pthread_once(&headers_once, compute_headers_hash);
    return headers_hash;
}

ck_status ck_mcache_path(ck_hash128 key, const char *kind, char *path, size_t size)
{
    char dir[CK_PATH_MAX], hex[33];
    ck_status st = ck_cache_dir(dir, sizeof dir);
    if (st != CK_SUCCESS)
        return st;
    ck_hash_hex(key, hex);
    int n = snprintf(path, size, "%s/%s.%s", dir, hex, kind);
    if (n < 0 || (size_t)n >= size)
        return ck_fail(CK_ERROR_OVERFLOW, "module cache: the entry path under '%s' is too long.",
                       dir);
    return CK_SUCCESS;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t checksum(const void *data, size_t size)
{
    ck_hasher h;
    ck_hasher_init(&h);
    ck_hasher_field(&h, data, size);
    return ck_hasher_final(&h).a;
}

static void make_header(unsigned char *hdr, ck_hash128 key, const char *kind, const void *data,
                        size_t size)
{
    memset(hdr, 0, HEADER_BYTES);
    memcpy(hdr, MAGIC, 8);
    put64(hdr + 8, key.a);
    put64(hdr + 16, key.b);
    strncpy((char *)hdr + 24, kind, 8);
    put64(hdr + 32, size);
    put64(hdr + 40, checksum(data, size));
}

/* 1 when `buf` (whole file) is a valid entry; *payload and *size then describe it. */
static int check_entry(const unsigned char *buf, size_t len, const ck_hash128 *key,
                       const char *kind, size_t *size)
{
    if (len < HEADER_BYTES || memcmp(buf, MAGIC, 8) != 0)
        return 0;
    if (key && (get64(buf + 8) != key->a || get64(buf + 16) != key->b))
        return 0;
    if (kind && strncmp((const char *)buf + 24, kind, 8) != 0)
        return 0;
    uint64_t n = get64(buf + 32);
    if (n != len - HEADER_BYTES || get64(buf + 40) != checksum(buf + HEADER_BYTES, (size_t)n))
        return 0;
    *size = (size_t)n;
    return 1;
}

static ck_status mkdir_p(const char *dir)
{
    char tmp[CK_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
            return ck_fail(CK_ERROR_IO, "module cache: could not create directory '%s': %s.", tmp,
                           strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        return ck_fail(CK_ERROR_IO, "module cache: could not create the cache directory '%s': %s.", tmp,
                       strerror(errno));
    return CK_SUCCESS;
}

/* Who may have written sb: 0 when it is owned by this user and not writable by group or
 * others, else a reason (for messages). */
static const char *unsafe_owner(const struct stat *sb)
{
    if (sb->st_uid != geteuid())
        return "it belongs to another user";
    if (sb->st_mode & (S_IWGRP | S_IWOTH))
        return "its group or other users may write it";
    return NULL;
}

/* why the last safe_cache_dir of this thread refused the directory, or NULL */
static _Thread_local const char *dir_refused;

const char *ck_mcache_dir_refused(void)
{
    return dir_refused;
}

/* The cache directory, checked: it must be a real directory (not a symbolic link) owned by this
 * user and writable by nobody else, else cached code could be planted by someone else. With
 * `create`, a missing directory is made 0700. A refusal is logged once per process. */
static ck_status safe_cache_dir(char *dir, size_t size, int create)
{
    dir_refused = NULL;
    ck_status st = ck_cache_dir(dir, size);
    if (st != CK_SUCCESS)
        return st;
    if (create && (st = mkdir_p(dir)) != CK_SUCCESS)
        return st;
    struct stat sb;
    if (lstat(dir, &sb) != 0)
        return ck_fail(errno == ENOENT ? CK_ERROR_NOT_FOUND : CK_ERROR_IO,
                       "module cache: the directory '%s' cannot be read: %s.", dir,
                       strerror(errno));
    const char *why = S_ISLNK(sb.st_mode)   ? "it is a symbolic link"
                      : !S_ISDIR(sb.st_mode) ? "it is not a directory"
                                             : unsafe_owner(&sb);
    if (!why)
        return CK_SUCCESS;
    static int warned;
    dir_refused = why;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        CK_LOG(CK_LOG_WARN,
               "module cache: the directory '%s' is not used because %s; kernels are compiled "
               "without the cache (use a directory of your own with mode 0700).",
               dir, why);
    return ck_fail(CK_ERROR_IO,
                   "module cache: the directory '%s' is not used because %s; accepted: a "
                   "directory (not a link) of this user that group and others cannot write.",
                   dir, why);
}

/* Open an entry for reading without following a symbolic link or blocking on a FIFO, and
 * only when it is a regular file of this user that nobody else can write. */
static ck_status open_entry(const char *path, int *fd_out, struct stat *sb)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ck_fail(errno == ENOENT ? CK_ERROR_NOT_FOUND : CK_ERROR_IO,
                       "could not open '%s': %s.", path,
                       errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    const char *why = NULL;
    if (fstat(fd, sb) != 0)
        why = strerror(errno);
    else if (!S_ISREG(sb->st_mode))
        why = "it is not a regular file";
    else
        why = unsafe_owner(sb);
    if (why) {
        close(fd);
        return ck_fail(CK_ERROR_IO, "module cache: entry '%s' is not used because %s.", path, why);
    }
    *fd_out = fd;
    return CK_SUCCESS;
}

static ck_status read_file(const char *path, unsigned char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = -1;
    struct stat sb;
    ck_status st = open_entry(path, &fd, &sb);
    if (st != CK_SUCCESS)
        return st;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return ck_fail(CK_ERROR_IO, "could not read '%s': %s.", path, strerror(errno));
    }
    if (sb.st_size < 0) {
        fclose(f);
        return ck_fail(CK_ERROR_IO, "could not read the size of '%s'.", path);
    }
    size_t n = (size_t)sb.st_size;
    unsigned char *p = malloc(n ? n : 1);
    if (!p) {
        fclose(f);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "no memory to read '%s' (%zu bytes).", path, n);
    }
    if (fread(p, 1, n, f) != n) {
        free(p);
        fclose(f);
        return ck_fail(CK_ERROR_IO, "could not read '%s'.", path);
    }
    fclose(f);
    *buf = p;
    *len = n;
    return CK_SUCCESS;
}

ck_status ck_mcache_load(ck_hash128 key, const char *kind, void **data, size_t *size)
{
    char path[CK_PATH_MAX];
    *data = NULL;
    *size = 0;
    ck_status st = ck_mcache_path(key, kind, path, sizeof path);
    if (st != CK_SUCCESS)
        return st;
    unsigned char *buf;
    size_t len, n;
    char dir[CK_PATH_MAX];
    if (safe_cache_dir(dir, sizeof dir, 0) != CK_SUCCESS)
        return ck_fail(CK_ERROR_NOT_FOUND, "module cache: not used (%s)", ck_last_error());
    st = read_file(path, &buf, &len);
    if (st == CK_ERROR_IO) { /* there, but not a safe file: never loaded, left alone */
        CK_LOG(CK_LOG_WARN, "%s The kernel is compiled again.", ck_last_error());
        return ck_fail(CK_ERROR_NOT_FOUND, "module cache: entry '%s' was refused.", path);
    }
    if (st != CK_SUCCESS)
        return ck_fail(CK_ERROR_NOT_FOUND, "module cache: no entry '%s'.", path);
    if (!check_entry(buf, len, &key, kind, &n)) {
        free(buf);
        CK_LOG(CK_LOG_WARN,
               "module cache: entry '%s' is corrupted; it is removed and the kernel "
               "recompiled.",
               path);
        unlink(path);
        return ck_fail(CK_ERROR_NOT_FOUND, "module cache: entry '%s' was corrupted.", path);
    }
    memmove(buf, buf + HEADER_BYTES, n);
    *data = buf;
    *size = n;
    return CK_SUCCESS;
}

ck_status ck_mcache_store(ck_hash128 key, const char *kind, const void *data, size_t size)
{
    char dir[CK_PATH_MAX], path[CK_PATH_MAX], tmp[CK_PATH_MAX + 64];
    ck_status st = safe_cache_dir(dir, sizeof dir, 1);
    if (st == CK_SUCCESS)
        st = ck_mcache_path(key, kind, path, sizeof path);
    if (st != CK_SUCCESS)
        return st;
    static unsigned long counter;
    unsigned long c = __atomic_fetch_add(&counter, 1ul, __ATOMIC_RELAXED);
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%lu", path, (long)getpid(), c);
    unsigned char hdr[HEADER_BYTES];
    make_header(hdr, key, kind, data, size);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return ck_fail(CK_ERROR_IO, "module cache: could not create '%s': %s.", tmp,
                       strerror(errno));
    int ok =
        write(fd, hdr, sizeof hdr) == (ssize_t)sizeof hdr && write(fd, data, size) == (ssize_t)size;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ck_fail(CK_ERROR_IO, "module cache: could not write '%s': %s.", path, strerror(e));
    }
    return CK_SUCCESS;
}

static int entry_kind(const char *name, char *kind, size_t size)
{
    const char *dot = strchr(name, '.');
    if (!dot || dot - name != 32 || strstr(name, ".tmp-"))
        return 0;
    for (const char *p = name; p < dot; ++p)
        if (!strchr("0123456789abcdef", *p))
            return 0;
    snprintf(kind, size, "%s", dot + 1);
    if (strcmp(kind, "cubin") == 0 || strcmp(kind, "host-so") == 0)
        return 1; /* a kernel */
    return strcmp(kind, "src") == 0 ? 2 : 0; /* the source index (src/ops/common/context.c) */
}

ck_status ck_cache_list(ck_cache_entry **entries, int *count)
{
    CK_REQUIRE_NOT_NULL(entries, "ck_cache_list");
    CK_REQUIRE_NOT_NULL(count, "ck_cache_list");
    *entries = NULL;
    *count = 0;
    char dir[CK_PATH_MAX], path[CK_PATH_MAX + 300];
    ck_status st = ck_cache_dir(dir, sizeof dir);
    if (st != CK_SUCCESS)
        return st;
    DIR *d = opendir(dir);
    if (!d)
        return CK_SUCCESS;
    /* in a directory ck refuses, no entry is used: none is valid */
    char checked[CK_PATH_MAX];
    int refused = safe_cache_dir(checked, sizeof checked, 0) != CK_SUCCESS && dir_refused;
    ck_cache_entry *out = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char kind[64];
        if (entry_kind(e->d_name, kind, sizeof kind) != 1) /* kernels only */
            continue;
        ck_cache_entry *g = realloc(out, (size_t)(n + 1) * sizeof *out);
        if (!g) {
            free(out);
            closedir(d);
            return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_cache_list: no memory.");
        }
        out = g;
        ck_cache_entry *ce = &out[n++];
        memset(ce, 0, sizeof *ce);
        snprintf(ce->file, sizeof ce->file, "%s", e->d_name);
        snprintf(ce->kind, sizeof ce->kind, "%.15s", kind);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unsigned char *buf;
        size_t len, pn;
        struct stat sb;
        if (lstat(path, &sb) == 0) {
            ce->mtime = (long long)sb.st_mtime;
            ce->bytes = S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0;
        }
        if (read_file(path, &buf, &len) == CK_SUCCESS) { /* unsafe files stay invalid */
            ce->bytes = len;
            ce->valid = !refused && check_entry(buf, len, NULL, kind, &pn);
            free(buf);
        }
    }
    closedir(d);
    ck_clear_error();
    *entries = out;
    *count = n;
    return CK_SUCCESS;
}

ck_status ck_cache_clear(int *removed)
{
    CK_REQUIRE_NOT_NULL(removed, "ck_cache_clear");
    *removed = 0;
    char dir[CK_PATH_MAX], path[CK_PATH_MAX + 300], kind[64];
    ck_status st = ck_cache_dir(dir, sizeof dir);
    if (st != CK_SUCCESS)
        return st;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? CK_SUCCESS
                               : ck_fail(CK_ERROR_IO,
                                         "ck_cache_clear: the cache directory '%s' cannot be "
                                         "read: %s.",
                                         dir, strerror(errno));
    struct dirent *e;
    int failed = 0, first_errno = 0;
    char first[300] = "";
    while ((e = readdir(d)) != NULL) {
        int what = entry_kind(e->d_name, kind, sizeof kind);
        if (!what)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) == 0) {
            *removed += what == 1; /* kernels; their index entries go with them */
        } else if (errno != ENOENT) { /* ENOENT: another process removed it first */
            if (!failed++) {
                first_errno = errno;
                snprintf(first, sizeof first, "%s", e->d_name);
            }
        }
    }
    closedir(d);
    if (failed)
        return ck_fail(CK_ERROR_IO,
                       "ck_cache_clear: %d entr%s of '%s' could not be removed (the first, '%s': "
                       "%s); %d were removed.",
                       failed, failed == 1 ? "y" : "ies", dir, first, strerror(first_errno),
                       *removed);
    return CK_SUCCESS;
}
