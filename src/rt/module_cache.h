/*
 * The module cache on disk: compiled kernels (cubins, emulator shared objects) stored under
 * ck_cache_dir() as <32 hex digits of the key>.<kind>, each with a header holding a magic, the
 * key, the payload length and a checksum, so a truncated or corrupted entry is detected (and
 * recompiled) instead of loaded. Writes go to a temporary file renamed into place, so several
 * processes may share the directory.
 */
#ifndef CK_SRC_RT_MODULE_CACHE_H
#define CK_SRC_RT_MODULE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ck/status.h"

typedef struct ck_hash128 {
    uint64_t a, b;
} ck_hash128;

typedef struct ck_hasher {
    uint64_t a, b, n;
} ck_hasher;

void ck_hasher_init(ck_hasher *h);
/* Add one field (its length is hashed too, so fields cannot run into each other). */
void ck_hasher_field(ck_hasher *h, const void *data, size_t size);
void ck_hasher_str(ck_hasher *h, const char *s);
ck_hash128 ck_hasher_final(const ck_hasher *h);
void ck_hash_hex(ck_hash128 k, char out[33]);

/* Hash of every embedded device header (names and contents), computed once. */
ck_hash128 ck_device_headers_hash(void);

/* Read entry `key` of `kind` ("cubin", "host-so"). *data is malloc'd (caller frees).
 * CK_ERROR_NOT_FOUND when absent or when the entry is corrupted (it is then deleted and a
 * warning logged). */
ck_status ck_mcache_load(ck_hash128 key, const char *kind, void **data, size_t *size);

/* Write entry `key` atomically (temporary file + rename). CK_ERROR_IO on failure. */
ck_status ck_mcache_store(ck_hash128 key, const char *kind, const void *data, size_t size);

/* Why the last ck_mcache_load/store/ck_cache_list of this thread refused the directory itself
 * (a link, not this user's, writable by others), or NULL. The refusal is logged once per
 * process by the cache, so callers need not log it again for every kernel. */
const char *ck_mcache_dir_refused(void);

/* Path of an entry (for messages and tests). */
ck_status ck_mcache_path(ck_hash128 key, const char *kind, char *path, size_t size);

#endif
