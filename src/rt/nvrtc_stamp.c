/* NVRTC's version for kernel cache keys without loading NVRTC.
 *
 * A kernel's cache key includes the NVRTC version (a new compiler gets new cubins), but
 * loading libnvrtc to ask costs milliseconds (bench/RESULTS.md), a large part of a warm
 * plan's creation when its cubin is already on disk. So each load leaves a stamp in the module
 * cache: the version and the identity of the library file (device, inode, size, modification
 * time, path). A later process whose stamp still matches that file takes the version from the
 * stamp and loads NVRTC only if it must compile. CK_NVRTC_PATH (a developer's override) always
 * loads. If another NVRTC is found first later (LD_LIBRARY_PATH changed) while the stamped file
 * is unchanged, cached cubins of the stamped version are used: they are valid cubins for the
 * device, and replacing or touching the library file renews the stamp. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ck/ck.h"
#include "core/error.h"
#include "rt/module_cache.h"
#include "rt/runtime_internal.h"

typedef struct nvrtc_stamp {
    char magic[8]; /* "ckNVRTC1" */
    int32_t major, minor;
    uint64_t dev, ino, size;
    int64_t mtime_s, mtime_ns;
    char path[4096];
} nvrtc_stamp;

static ck_hash128 stamp_key(void)
{
    ck_hasher h;
    ck_hasher_init(&h);
    ck_hasher_str(&h, "ck-nvrtc-stamp-1");
    return ck_hasher_final(&h);
}

static void identity(const struct stat *sb, nvrtc_stamp *s)
{
    s->dev = (uint64_t)sb->st_dev, s->ino = (uint64_t)sb->st_ino, s->size = (uint64_t)sb->st_size;
    s->mtime_s = (int64_t)sb->st_mtim.tv_sec, s->mtime_ns = (int64_t)sb->st_mtim.tv_nsec;
}

/* 1 when the stamp on disk is whole and its library file is unchanged. */
static int stamp_valid(nvrtc_stamp *out)
{
    void *data = NULL;
    size_t size = 0;
    if (ck_mcache_load(stamp_key(), "nvrtc", &data, &size) != CK_SUCCESS) {
        ck_clear_error();
        return 0;
    }
    int ok = size == sizeof *out;
    if (ok)
        memcpy(out, data, sizeof *out);
    free(data);
    if (!ok || memcmp(out->magic, "ckNVRTC1", 8) != 0 || out->path[sizeof out->path - 1])
        return 0;
    struct stat sb;
    nvrtc_stamp now = *out;
    if (stat(out->path, &sb) != 0)
        return 0;
    identity(&sb, &now);
    return now.dev == out->dev && now.ino == out->ino && now.size == out->size &&
           now.mtime_s == out->mtime_s && now.mtime_ns == out->mtime_ns;
}

/* After a load: stamp the library file (best effort; a cache that refuses is no error). */
static void write_stamp(int major, int minor)
{
    nvrtc_stamp s;
    memset(&s, 0, sizeof s);
    memcpy(s.magic, "ckNVRTC1", 8);
    s.major = major, s.minor = minor;
    struct stat sb;
    if (ck_nvrtc_library_path(s.path, sizeof s.path) != CK_SUCCESS || stat(s.path, &sb) != 0) {
        ck_clear_error();
        return;
    }
    identity(&sb, &s);
    if (ck_mcache_store(stamp_key(), "nvrtc", &s, sizeof s) != CK_SUCCESS)
        ck_clear_error();
}

ck_status ck_nvrtc_version_for_key(int *major, int *minor)
{
    const char *over = getenv("CK_NVRTC_PATH");
    nvrtc_stamp s;
    if (!ck_nvrtc_loaded() && !(over && *over) && stamp_valid(&s)) {
        *major = s.major, *minor = s.minor;
        return CK_SUCCESS;
    }
    int was_loaded = ck_nvrtc_loaded();
    ck_status st = ck_nvrtc_version(major, minor);
    if (st == CK_SUCCESS && !was_loaded && !(over && *over))
        write_stamp(*major, *minor);
    return st;
}
