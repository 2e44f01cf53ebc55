/* The client API's context: device, stream, kernel cache (key -> kernel), workspace. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ck/context.h"
#include "ck/tuning.h"
#include "core/error.h"
#include "ops/common/op_common.h"
#include "rt/module_cache.h"

typedef struct kernel_entry {
    char *key;
    uint64_t hash;
    ck_kernel *kernel;
    struct kernel_entry *next;
} kernel_entry;

enum { BUCKETS = 256 };

struct ck_context {
    ck_device *device;
    int owns_device;
    ck_stream *stream;
    ck_device_props props;
    kernel_entry *buckets[BUCKETS];
    int kernel_count;
    void *workspace;
    size_t workspace_bytes;
    void *counters; /* ck_op_counters: zero between launches */
    size_t counters_bytes;
    /* the tuning table's entries for this device (read at the first ck_op_tuned) */
    ck_tuning_entry *tuned;
    int tuned_count, tuned_loaded;
    char forced_op[32], forced[128]; /* ck_op_force_instance */
};

static ck_status make(ck_device *device, int owns, ck_context **out)
{
    ck_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_context_create: out of host memory.");
    ctx->device = device;
    ctx->owns_device = owns;
    ck_status st = ck_device_get_props(device, &ctx->props);
    if (st != CK_SUCCESS) {
        free(ctx);
        return st;
    }
    *out = ctx;
    return CK_SUCCESS;
}

ck_status ck_context_create(ck_backend backend, int ordinal, ck_context **ctx)
{
    CK_REQUIRE_NOT_NULL(ctx, "ck_context_create");
    *ctx = NULL;
    ck_device *dev = NULL;
    ck_status st = ck_device_open(backend, ordinal, &dev);
    if (st != CK_SUCCESS)
        return st;
    st = make(dev, 1, ctx);
    if (st != CK_SUCCESS)
        ck_device_close(dev);
    return st;
}

ck_status ck_context_create_for_device(ck_device *device, ck_context **ctx)
{
    CK_REQUIRE_NOT_NULL(ctx, "ck_context_create_for_device");
    *ctx = NULL;
    CK_REQUIRE_NOT_NULL(device, "ck_context_create_for_device");
    return make(device, 0, ctx);
}

void ck_context_destroy(ck_context *ctx)
{
    if (!ctx)
        return;
    for (int b = 0; b < BUCKETS; ++b) {
        kernel_entry *e = ctx->buckets[b];
        while (e) {
            kernel_entry *next = e->next;
            free(e->key);
            free(e);
            e = next;
        }
    }
    if (ctx->workspace || ctx->counters) {
        ck_device_synchronize(ctx->device);
        ck_free(ctx->device, ctx->workspace);
        ck_free(ctx->device, ctx->counters);
    }
    if (ctx->owns_device)
        ck_device_close(ctx->device);
    free(ctx->tuned); /* the tuning table's entries, read at the first ck_op_tuned */
    free(ctx);
}

ck_device *ck_context_device(const ck_context *ctx) { return ctx ? ctx->device : NULL; }

ck_backend ck_context_backend(const ck_context *ctx)
{
    return ctx ? ctx->props.backend : CK_BACKEND_AUTO;
}

void ck_context_set_stream(ck_context *ctx, ck_stream *stream)
{
    if (ctx)
        ctx->stream = stream;
}

ck_stream *ck_context_stream(const ck_context *ctx) { return ctx ? ctx->stream : NULL; }

ck_status ck_context_synchronize(ck_context *ctx)
{
    CK_REQUIRE_NOT_NULL(ctx, "ck_context_synchronize");
    return ctx->stream ? ck_stream_synchronize(ctx->stream) : ck_device_synchronize(ctx->device);
}

int ck_context_kernel_count(const ck_context *ctx) { return ctx ? ctx->kernel_count : 0; }

const ck_device_props *ck_op_props(const ck_context *ctx) { return &ctx->props; }

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; ++s)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The source index: generated sources on disk (module cache kind "src") under a hash of the
 * library's source stamp, the device's properties, ck's CK_* environment variables, the kernel
 * name and the key. The key names
 * everything a source depends on for one library build and device (what the in-memory cache
 * above relies on too), so a new process finds a kernel's source without generating it again
 * (generation is most of a warm plan's time: ~20 ms for an sm90 GEMM), and the module cache
 * then finds its binary by the source's own hash. */
extern const char ck_source_stamp[];
extern char **environ;

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static ck_hash128 index_key(const ck_context *ctx, const char *key, const char *kernel_name)
{
    const ck_device_props *p = &ctx->props;
    long long f[9] = {p->backend,        p->cc_major,        p->cc_minor,
                      p->multiprocessors, (long long)p->memory_bytes,
                      (long long)p->max_shared_per_block, (long long)p->l2_bytes,
                      (long long)p->shared_per_sm, (long long)p->max_threads_per_sm * 1000003ll +
                                                       p->regs_per_sm};
    ck_hasher h;
    ck_hasher_init(&h);
    ck_hasher_str(&h, "ck source index 1");
    ck_hasher_str(&h, ck_source_stamp);
    ck_hasher_str(&h, p->name);
    ck_hasher_str(&h, p->target);
    ck_hasher_field(&h, f, sizeof f);
    /* ck's environment switches (developer knobs that steer generation within one process),
     * so that a process with other settings never takes this one's sources */
    const char *vars[128];
    int nv = 0;
    for (char **e = environ; *e && nv < 128; ++e)
        if (strncmp(*e, "CK_", 3) == 0)
            vars[nv++] = *e;
    qsort(vars, (size_t)nv, sizeof vars[0], by_text); /* the same settings in any order */
    for (int i = 0; i < nv; ++i)
        ck_hasher_str(&h, vars[i]);
    ck_hasher_str(&h, kernel_name);
    ck_hasher_str(&h, key);
    return ck_hasher_final(&h);
}

static ck_status indexed_source(ck_context *ctx, const char *key, const char *kernel_name,
                                ck_op_build_fn build, void *user, char **source)
{
    ck_hash128 ik = index_key(ctx, key, kernel_name);
    void *data = NULL;
    size_t size = 0;
    if (ck_mcache_load(ik, "src", &data, &size) == CK_SUCCESS) {
        char *text = data;
        if (size > 0 && memchr(text, '\0', size) == NULL) {
            char *s = realloc(text, size + 1);
            if (s) {
                s[size] = '\0';
                *source = s;
                return CK_SUCCESS;
            }
        }
        free(data); /* not a source: generate it again (and overwrite the entry below) */
    }
    ck_clear_error();
    ck_status st = build(user, source);
    if (st != CK_SUCCESS) {
        free(*source);
        *source = NULL;
        return st;
    }
    if (ck_mcache_store(ik, "src", *source, strlen(*source)) != CK_SUCCESS)
        ck_clear_error(); /* no index: the next process generates the source again */
    return CK_SUCCESS;
}

ck_status ck_op_kernel(ck_context *ctx, const char *key, const char *kernel_name,
                       ck_op_build_fn build, void *user, ck_kernel **kernel)
{
    uint64_t h = hash_key(key);
    kernel_entry **bucket = &ctx->buckets[h % BUCKETS];
    for (kernel_entry *e = *bucket; e; e = e->next)
        if (e->hash == h && strcmp(e->key, key) == 0) {
            *kernel = e->kernel;
            return CK_SUCCESS;
        }
    char *source = NULL;
    ck_status st = indexed_source(ctx, key, kernel_name, build, user, &source);
    if (st != CK_SUCCESS)
        return st;
    ck_module *mod = NULL;
    st = ck_module_load(ctx->device, source, NULL, 0, &mod);
    free(source);
    if (st != CK_SUCCESS)
        return ck_fail_context(st, "kernel %s", key);
    ck_kernel *k = NULL;
    st = ck_module_get_kernel(mod, kernel_name, &k);
    if (st != CK_SUCCESS)
        return st;
    kernel_entry *e = calloc(1, sizeof *e);
    char *copy = strdup(key);
    if (!e || !copy) {
        free(e);
        free(copy);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "kernel cache: out of host memory.");
    }
    e->key = copy;
    e->hash = h;
    e->kernel = k;
    e->next = *bucket;
    *bucket = e;
    ctx->kernel_count++;
    *kernel = k;
    return CK_SUCCESS;
}

ck_status ck_op_launch(ck_context *ctx, ck_kernel *kernel, unsigned gx, unsigned gy, unsigned gz,
                       unsigned block, size_t smem, void *const *args, const size_t *sizes,
                       int count)
{
    ck_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid[0] = gx;
    cfg.grid[1] = gy;
    cfg.grid[2] = gz;
    cfg.block[0] = block;
    cfg.block[1] = cfg.block[2] = 1;
    cfg.dynamic_shared_bytes = smem;
    cfg.stream = ctx->stream;
    return ck_launch(kernel, &cfg, args, sizes, count);
}

/* A device buffer of the context grown to at least `bytes` (at least `least`): the one held
 * when large enough, else a new one after the stream has finished with the old (queued work may
 * still use it); a new buffer is zeroed on the stream when `zero`. */
static ck_status grow_buffer(ck_context *ctx, void **buf, size_t *held, size_t bytes, size_t least,
                             int zero, const char *what, void **ptr)
{
    if (bytes <= *held && *buf) {
        *ptr = *buf;
        return CK_SUCCESS;
    }
    if (*buf) {
        ck_status st = ck_context_synchronize(ctx);
        if (st != CK_SUCCESS)
            return st;
        ck_free(ctx->device, *buf);
        *buf = NULL;
        *held = 0;
    }
    size_t want = bytes < least ? least : bytes;
    ck_status st = ck_malloc(ctx->device, want, buf);
    if (st == CK_SUCCESS && zero)
        st = ck_memset_d8(ctx->device, *buf, 0, want, ctx->stream);
    if (st != CK_SUCCESS) {
        if (*buf)
            ck_free(ctx->device, *buf);
        *buf = NULL;
        return ck_fail_context(st, "%s of %zu bytes", what, want);
    }
    *held = want;
    *ptr = *buf;
    return CK_SUCCESS;
}

ck_status ck_op_workspace(ck_context *ctx, size_t bytes, void **ptr)
{
    return grow_buffer(ctx, &ctx->workspace, &ctx->workspace_bytes, bytes, 1024, 0, "workspace",
                       ptr);
}

ck_status ck_op_counters(ck_context *ctx, size_t bytes, void **ptr)
{
    return grow_buffer(ctx, &ctx->counters, &ctx->counters_bytes, bytes, 4096, 1, "counters", ptr);
}

void ck_op_tuning_device(const ck_context *ctx, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", ctx->props.name, ctx->props.target);
}

/* The table's entries for this device, read once (an unreadable table is an empty one). */
static void load_tuned(ck_context *ctx)
{
    ctx->tuned_loaded = 1;
    ck_tuning_entry *all = NULL;
    int n = 0;
    if (ck_tuning_list(&all, &n) != CK_SUCCESS || !all)
        return;
    char dev[sizeof all[0].device];
    ck_op_tuning_device(ctx, dev, sizeof dev);
    int w = 0;
    for (int i = 0; i < n; ++i)
        if (strcmp(all[i].device, dev) == 0)
            all[w++] = all[i];
    ctx->tuned = all;
    ctx->tuned_count = w;
}

int ck_op_tuned(ck_context *ctx, const char *op, const char *problem, char *buf, size_t size,
                int *forced)
{
    *forced = 0;
    if (ctx->forced_op[0] && strcmp(ctx->forced_op, op) == 0) {
        *forced = 1;
        snprintf(buf, size, "%s", ctx->forced);
        return 1;
    }
    if (!ctx->tuned_loaded)
        load_tuned(ctx);
    for (int i = ctx->tuned_count - 1; i >= 0; --i) /* the latest entry wins */
        if (strcmp(ctx->tuned[i].op, op) == 0 && strcmp(ctx->tuned[i].problem, problem) == 0) {
            snprintf(buf, size, "%s", ctx->tuned[i].instance);
            return 1;
        }
    return 0;
}

ck_status ck_op_force_instance(ck_context *ctx, const char *op, const char *instance)
{
    if (op && strlen(op) >= sizeof ctx->forced_op)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "ck_op_force_instance: op '%s' is too long.", op);
    if (instance && strlen(instance) >= sizeof ctx->forced)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_op_force_instance: instance '%s' is too long.", instance);
    snprintf(ctx->forced_op, sizeof ctx->forced_op, "%s", instance && op ? op : "");
    snprintf(ctx->forced, sizeof ctx->forced, "%s", instance ? instance : "");
    free(ctx->tuned);
    ctx->tuned = NULL;
    ctx->tuned_count = ctx->tuned_loaded = 0;
    return CK_SUCCESS;
}
