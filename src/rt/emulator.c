/* The CPU emulator: fiber scheduling of a cluster's threads, barriers, collectives, launches. */
#include "rt/emulator.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "rt/emu_fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#define CK_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CK_EMU_ASAN 1
#endif
#endif
#ifdef CK_EMU_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum { T_READY, T_BARRIER, T_CLUSTER_BARRIER, T_COLLECTIVE, T_EXITED };
enum { MAX_BARRIERS = 16, MAX_SITES = 128, SHARED_ALIGN = 128 };
/* Consecutive yields without any other event after which spinning threads count as hung. */
#define CK_EMU_SPIN_LIMIT (1ul << 22)

typedef struct emu_block emu_block;
typedef struct emu_cluster emu_cluster;

typedef struct emu_thread {
    ck_emu_thread id;
    ck_fiber fiber;
    int state;
    int used, clean; /* prepared at least once; returned from the kernel normally */
    unsigned bar_id;
    emu_block *block;
    /* pending collective */
    unsigned c_group;
    const void *c_in;
    size_t c_in_size;
    void *c_out;
    size_t c_out_size;
    void (*c_fn)(const void *, void *, void *);
    void *c_ctx;
} emu_thread;

typedef struct emu_barrier {
    unsigned expected, arrived;
} emu_barrier;

struct emu_block {
    unsigned rank;
    unsigned char *arena;
    size_t arena_size, static_start, static_used;
    struct {
        const void *site;
        size_t offset, bytes;
    } sites[MAX_SITES];
    int nsites;
    emu_barrier bars[MAX_BARRIERS];
    emu_thread *threads; /* block_threads entries */
};

typedef struct emu_launch {
    const ck_emu_launch_desc *d;
    unsigned block_threads, cluster_blocks, cdim[3], clusters[3];
    unsigned long nclusters;
    unsigned long next; /* next cluster to run (atomic) */
    int failed;         /* atomic */
    pthread_mutex_t lock;
    ck_status status;
    char message[1024];
} emu_launch;

struct emu_cluster {
    emu_launch *launch;
    emu_block blocks[CK_EMU_MAX_CLUSTER_BLOCKS];
    emu_thread *threads; /* cluster_blocks * block_threads */
    unsigned nthreads;
    ck_fiber_host host;
    emu_thread *current;
    emu_barrier cluster_bar;
    unsigned char *scratch;
    size_t scratch_cap;
    unsigned long spins;
    int failed;
    ck_status status;
    char message[1024];
};

static _Thread_local emu_cluster *tls_cluster;

/* ------------------------------------------------------------------ errors inside a cluster */
static void cluster_fail(emu_cluster *c, ck_status st, const char *fmt, ...) CK_PRINTF_LIKE(3, 4);
static void cluster_fail(emu_cluster *c, ck_status st, const char *fmt, ...)
{
    if (c->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
    c->failed = 1;
    c->status = st;
}

static void block_name(const emu_block *b, char *buf, size_t size)
{
    const ck_emu_thread *id = &b->threads[0].id;
    snprintf(buf, size, "block (%u, %u, %u)", id->bid[0], id->bid[1], id->bid[2]);
}

static void thread_name(const emu_thread *t, char *buf, size_t size)
{
    snprintf(buf, size, "thread (%u, %u, %u) of block (%u, %u, %u)", t->id.tid[0], t->id.tid[1],
             t->id.tid[2], t->id.bid[0], t->id.bid[1], t->id.bid[2]);
}

/* The next ready thread after `t` in round-robin order, `t` excluded; NULL if none. */
static emu_thread *next_ready(emu_cluster *c, emu_thread *t)
{
    size_t i = (size_t)(t - c->threads);
    for (size_t k = 1; k < c->nthreads; ++k) {
        emu_thread *o = &c->threads[(i + k) % c->nthreads];
        if (o->state == T_READY)
            return o;
    }
    return NULL;
}

/* Leave the running fiber: directly for the next ready thread of the cluster, else for the
 * scheduler (which completes collectives, detects deadlocks and finishes the cluster). A
 * ready caller (a yield) with nobody else ready just continues. */
static void switch_out(emu_thread *t, int finished)
{
    emu_cluster *c = tls_cluster;
    emu_thread *next = c->failed ? NULL : next_ready(c, t);
    if (next) {
        c->current = next;
        ck_fiber_switch(&t->fiber, &next->fiber, finished);
    } else if (finished || c->failed || t->state != T_READY) {
        ck_fiber_leave(&c->host, &t->fiber, finished);
    }
}

static void trap_current(const char *what)
{
    emu_cluster *c = tls_cluster;
    emu_thread *t = c->current;
    char who[128];
    thread_name(t, who, sizeof who);
    cluster_fail(c, CK_ERROR_LAUNCH, "kernel '%s' stopped in %s: %s.", c->launch->d->kernel_name,
                 who, what);
    t->state = T_EXITED;
    switch_out(t, 1);
    /* never resumed */
}

/* ------------------------------------------------------------------ the API of kernel code */
static const ck_emu_thread *api_self(void)
{
    return &tls_cluster->current->id;
}

static void release_barrier(emu_thread *first, unsigned n, int state, unsigned id)
{
    for (unsigned i = 0; i < n; ++i)
        if (first[i].state == state && (state != T_BARRIER || first[i].bar_id == id))
            first[i].state = T_READY;
}

static void api_barrier(unsigned id, unsigned count, int wait)
{
    emu_cluster *c = tls_cluster;
    emu_thread *t = c->current;
    emu_block *b = t->block;
    char msg[200];
    if (id >= MAX_BARRIERS) {
        snprintf(msg, sizeof msg, "named barrier id %u is out of range; ids 0 to 15 exist", id);
        trap_current(msg);
    }
    if (count == 0)
        count = t->id.block_threads;
    if (count > t->id.block_threads || (count % 32u != 0 && count != t->id.block_threads)) {
        snprintf(msg, sizeof msg,
                 "barrier %u was given a thread count of %u; it must be a multiple of 32 and at "
                 "most the %u threads of the block",
                 id, count, t->id.block_threads);
        trap_current(msg);
    }
    emu_barrier *bar = &b->bars[id];
    if (bar->arrived == 0)
        bar->expected = count;
    else if (bar->expected != count) {
        snprintf(msg, sizeof msg,
                 "barrier %u was used with two different thread counts (%u and %u) at once", id,
                 bar->expected, count);
        trap_current(msg);
    }
    if (wait) {
        t->state = T_BARRIER;
        t->bar_id = id;
    }
    if (++bar->arrived == bar->expected) {
        bar->arrived = 0;
        c->spins = 0;
        release_barrier(b->threads, t->id.block_threads, T_BARRIER, id);
    }
    if (t->state != T_READY)
        switch_out(t, 0);
}

static void api_cluster_barrier(void)
{
    emu_cluster *c = tls_cluster;
    emu_thread *t = c->current;
    t->state = T_CLUSTER_BARRIER;
    if (++c->cluster_bar.arrived == c->nthreads) {
        c->cluster_bar.arrived = 0;
        c->spins = 0;
        release_barrier(c->threads, c->nthreads, T_CLUSTER_BARRIER, 0);
    }
    if (t->state != T_READY)
        switch_out(t, 0);
}

static void api_yield(void)
{
    emu_cluster *c = tls_cluster;
    if (++c->spins > CK_EMU_SPIN_LIMIT)
        cluster_fail(c, CK_ERROR_LAUNCH,
                     "kernel '%s' hung: its threads kept spinning (ck_emu_yield) %lu times "
                     "without any barrier, collective or exit making progress.",
                     c->launch->d->kernel_name, c->spins);
    switch_out(c->current, 0);
}

/* Complete the collective of the group containing `t` if every live lane is waiting in it.
 * Returns 1 when it ran. Traps (through cluster_fail) when lanes disagree. */
static int try_collective(emu_cluster *c, emu_thread *t)
{
    emu_block *b = t->block;
    unsigned gs = t->c_group, first = t->id.linear / gs * gs, nlanes = t->id.block_threads;
    for (unsigned l = first; l < first + gs && l < nlanes; ++l) {
        emu_thread *o = &b->threads[l];
        if (o->state == T_EXITED)
            continue;
        if (o->state != T_COLLECTIVE)
            return 0;
        if (o->c_group != gs || o->c_fn != t->c_fn || o->c_in_size != t->c_in_size ||
            o->c_out_size != t->c_out_size) {
            char who[128], msg[400];
            thread_name(o, who, sizeof who);
            snprintf(msg, sizeof msg,
                     "the lanes of a %u-thread group reached different collective operations "
                     "(%s differs from thread %u); every lane must execute the same one",
                     gs, who, t->id.linear);
            cluster_fail(c, CK_ERROR_LAUNCH, "kernel '%s': %s.", c->launch->d->kernel_name, msg);
            return 0;
        }
    }
    size_t need = (size_t)gs * (t->c_in_size + t->c_out_size);
    if (need > c->scratch_cap) {
        unsigned char *p = realloc(c->scratch, need);
        if (!p) {
            cluster_fail(c, CK_ERROR_OUT_OF_MEMORY,
                         "emulator: no memory for a %zu-byte collective operation.", need);
            return 0;
        }
        c->scratch = p;
        c->scratch_cap = need;
    }
    unsigned char *all_in = c->scratch, *all_out = c->scratch + (size_t)gs * t->c_in_size;
    memset(c->scratch, 0, need);
    for (unsigned l = first; l < first + gs && l < nlanes; ++l) {
        emu_thread *o = &b->threads[l];
        if (o->state == T_COLLECTIVE && t->c_in_size) /* in/out may be NULL when empty */
            memcpy(all_in + (size_t)(l - first) * t->c_in_size, o->c_in, t->c_in_size);
    }
    t->c_fn(all_in, all_out, t->c_ctx);
    for (unsigned l = first; l < first + gs && l < nlanes; ++l) {
        emu_thread *o = &b->threads[l];
        if (o->state != T_COLLECTIVE)
            continue;
        if (t->c_out_size)
            memcpy(o->c_out, all_out + (size_t)(l - first) * t->c_out_size, t->c_out_size);
        o->state = T_READY;
    }
    c->spins = 0;
    return 1;
}

static void api_collective(unsigned group_size, const void *in, size_t in_size, void *out,
                           size_t out_size, void (*fn)(const void *, void *, void *), void *ctx)
{
    emu_cluster *c = tls_cluster;
    emu_thread *t = c->current;
    if (group_size == 0 || (group_size & (group_size - 1)) != 0 || group_size > 1024 || !fn) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "a group-collective operation was given group size %u; a power of two up to "
                 "1024 and a function are required",
                 group_size);
        trap_current(msg);
    }
    t->c_group = group_size;
    t->c_in = in;
    t->c_in_size = in_size;
    t->c_out = out;
    t->c_out_size = out_size;
    t->c_fn = fn;
    t->c_ctx = ctx;
    t->state = T_COLLECTIVE;
    try_collective(c, t);
    if (c->failed)
        trap_current("collective operations disagree");
    if (t->state != T_READY)
        switch_out(t, 0);
}

static void *api_shared_static(const void *site, size_t bytes, size_t align)
{
    emu_cluster *c = tls_cluster;
    emu_block *b = c->current->block;
    for (int i = 0; i < b->nsites; ++i)
        if (b->sites[i].site == site)
            return b->arena + b->sites[i].offset;
    if (align < 16 || (align & (align - 1)) != 0)
        align = 16;
    size_t off = (b->static_start + b->static_used + align - 1) / align * align;
    size_t static_after = off + bytes - b->static_start;
    if (b->nsites == MAX_SITES || static_after > CK_EMU_MAX_STATIC_SHARED_BYTES ||
        off + bytes > b->arena_size || off + bytes > CK_EMU_MAX_SHARED_BYTES) {
        char msg[240];
        snprintf(msg, sizeof msg,
                 "static shared memory of %zu more bytes does not fit: the block already uses "
                 "%zu bytes of static shared memory (at most %u, as on the GPU; use dynamic "
                 "shared memory beyond) and %zu of dynamic (at most %u in all)",
                 bytes, b->static_used, CK_EMU_MAX_STATIC_SHARED_BYTES, b->static_start,
                 CK_EMU_MAX_SHARED_BYTES);
        trap_current(msg);
    }
    b->sites[b->nsites].site = site;
    b->sites[b->nsites].offset = off;
    b->sites[b->nsites].bytes = bytes;
    b->nsites++;
    b->static_used = off + bytes - b->static_start;
    UNPOISON(b->arena + off, bytes);
    return b->arena + off;
}

static void *api_shared_base(void)
{
    return tls_cluster->current->block->arena;
}
static size_t api_shared_bytes(void)
{
    emu_block *b = tls_cluster->current->block;
    return b->static_start + b->static_used;
}

static void *api_cluster_map_shared(const void *p, unsigned rank)
{
    emu_cluster *c = tls_cluster;
    emu_block *b = c->current->block;
    const unsigned char *q = p;
    if (q < b->arena || q >= b->arena + b->arena_size)
        trap_current("ck_cluster_map_shared was given an address that is not in the block's "
                     "shared memory");
    if (rank >= c->launch->cluster_blocks) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "ck_cluster_map_shared was given rank %u; the cluster has %u "
                 "blocks",
                 rank, c->launch->cluster_blocks);
        trap_current(msg);
    }
    return c->blocks[rank].arena + (q - b->arena);
}

static const ck_emu_api emu_api = {
    CK_EMU_API_VERSION, sizeof(ck_emu_api),     api_self,
    api_barrier,        api_cluster_barrier,    api_yield,
    api_collective,     api_shared_static,      api_shared_base,
    api_shared_bytes,   api_cluster_map_shared, trap_current,
};

const ck_emu_api *ck_emu_api_table(void)
{
    return &emu_api;
}

/* ------------------------------------------------------------------ scheduling */
static void fiber_entry(void)
{
    emu_cluster *c = tls_cluster;
    ck_fiber_started(&c->host);
    emu_thread *t = c->current;
    c->launch->d->run(c->launch->d->args);
    t = c->current;
    t->clean = 1;
    t->state = T_EXITED;
    c->spins = 0;
    switch_out(t, 1);
}

/* A sentence describing why no thread of the cluster can run. */
static void describe_deadlock(emu_cluster *c)
{
    char text[900] = "", part[300], name[64];
    size_t used = 0;
    for (unsigned bi = 0; bi < c->launch->cluster_blocks; ++bi) {
        emu_block *b = &c->blocks[bi];
        unsigned nt = c->launch->block_threads, exited = 0, coll = 0, cbar = 0;
        unsigned at[MAX_BARRIERS] = {0};
        for (unsigned i = 0; i < nt; ++i) {
            emu_thread *t = &b->threads[i];
            if (t->state == T_EXITED)
                exited++;
            else if (t->state == T_COLLECTIVE)
                coll++;
            else if (t->state == T_CLUSTER_BARRIER)
                cbar++;
            else if (t->state == T_BARRIER)
                at[t->bar_id]++;
        }
        if (exited == nt)
            continue;
        block_name(b, name, sizeof name);
        int n = snprintf(part, sizeof part, "%s%s:", used ? "; " : "", name);
        const char *sep = " ";
        for (unsigned id = 0; id < MAX_BARRIERS; ++id) {
            if (!at[id])
                continue;
            n += snprintf(part + n, sizeof part - (size_t)n,
                          "%s%u thread%s at barrier %u (which expects %u)", sep, at[id],
                          at[id] == 1 ? " waits" : "s wait", id, b->bars[id].expected);
            sep = ", ";
        }
        if (coll) {
            n += snprintf(part + n, sizeof part - (size_t)n,
                          "%s%u thread%s in a warp-collective operation", sep, coll,
                          coll == 1 ? " waits" : "s wait");
            sep = ", ";
        }
        if (cbar) {
            n += snprintf(part + n, sizeof part - (size_t)n, "%s%u thread%s at the cluster barrier",
                          sep, cbar, cbar == 1 ? " waits" : "s wait");
            sep = ", ";
        }
        if (exited)
            snprintf(part + n, sizeof part - (size_t)n, "%s%u thread%s exited", sep, exited,
                     exited == 1 ? " has" : "s have");
        snprintf(text + used, sizeof text - used, "%s", part);
        used = strlen(text);
    }
    cluster_fail(c, CK_ERROR_LAUNCH,
                 "kernel '%s' deadlocked: no thread can continue (%s); every thread of a block "
                 "must reach the same barriers and collective operations.",
                 c->launch->d->kernel_name, text);
}

/* Run every fiber of the prepared cluster until all exit or the cluster fails. */
static void run_cluster(emu_cluster *c)
{
    for (;;) {
        /* Fibers hand control to each other; it comes back here when none is ready. */
        emu_thread *ready = NULL;
        int live = 0;
        for (unsigned i = 0; i < c->nthreads; ++i) {
            emu_thread *t = &c->threads[i];
            live |= t->state != T_EXITED;
            if (t->state == T_READY) {
                ready = t;
                break;
            }
        }
        if (c->failed || !live)
            return;
        if (ready) {
            c->current = ready;
            ck_fiber_enter(&c->host, &ready->fiber);
            continue;
        }
        /* Nobody ready: collectives may complete because lanes exited. */
        int progressed = 0;
        for (unsigned i = 0; i < c->nthreads && !c->failed; ++i)
            if (c->threads[i].state == T_COLLECTIVE && try_collective(c, &c->threads[i]))
                progressed = 1;
        if (c->failed)
            return;
        if (!progressed) {
            describe_deadlock(c);
            return;
        }
    }
}

static ck_status cluster_init(emu_cluster *c, emu_launch *L)
{
    memset(c, 0, sizeof *c);
    c->launch = L;
    c->nthreads = L->cluster_blocks * L->block_threads;
    c->threads = calloc(c->nthreads, sizeof *c->threads);
    if (!c->threads)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "emulator: no memory for %u emulated threads.",
                       c->nthreads);
    if (getcontext(&c->host.base) != 0)
        return ck_fail(CK_ERROR_INTERNAL, "emulator: getcontext failed.");
    size_t stack = ck_fiber_default_stack_size();
    for (unsigned i = 0; i < c->nthreads; ++i)
        if (ck_fiber_init(&c->threads[i].fiber, stack) != CK_SUCCESS)
            return CK_ERROR_OUT_OF_MEMORY;
    size_t dyn = L->d->dynamic_shared_bytes;
    size_t start = (dyn + SHARED_ALIGN - 1) / SHARED_ALIGN * SHARED_ALIGN;
    for (unsigned bi = 0; bi < L->cluster_blocks; ++bi) {
        emu_block *b = &c->blocks[bi];
        b->rank = bi;
        b->threads = c->threads + (size_t)bi * L->block_threads;
        b->static_start = start;
        b->arena_size = start + CK_EMU_MAX_STATIC_SHARED_BYTES;
        b->arena = aligned_alloc(4096, (b->arena_size + 4095) / 4096 * 4096);
        if (!b->arena)
            return ck_fail(CK_ERROR_OUT_OF_MEMORY,
                           "emulator: no memory for %zu bytes of shared memory.", b->arena_size);
    }
    return CK_SUCCESS;
}

static void cluster_destroy(emu_cluster *c)
{
    if (c->threads)
        for (unsigned i = 0; i < c->nthreads; ++i) {
            emu_thread *t = &c->threads[i];
            if (t->used && !t->clean)
                ck_fiber_scrub(&t->fiber);
            ck_fiber_destroy(&t->fiber);
        }
    free(c->threads);
    for (unsigned bi = 0; bi < CK_EMU_MAX_CLUSTER_BLOCKS; ++bi) {
        if (c->blocks[bi].arena) {
            UNPOISON(c->blocks[bi].arena, c->blocks[bi].arena_size);
            free(c->blocks[bi].arena);
        }
    }
    free(c->scratch);
}

/* Set up the ids, shared memory and fibers of cluster number `index`. */
static ck_status cluster_prepare(emu_cluster *c, unsigned long index)
{
    emu_launch *L = c->launch;
    const ck_emu_launch_desc *d = L->d;
    unsigned cid[3] = {(unsigned)(index % L->clusters[0]),
                       (unsigned)(index / L->clusters[0] % L->clusters[1]),
                       (unsigned)(index / L->clusters[0] / L->clusters[1])};
    c->cluster_bar.arrived = 0;
    c->spins = 0;
    for (unsigned bi = 0; bi < L->cluster_blocks; ++bi) {
        emu_block *b = &c->blocks[bi];
        unsigned r[3] = {bi % L->cdim[0], bi / L->cdim[0] % L->cdim[1],
                         bi / L->cdim[0] / L->cdim[1]};
        b->nsites = 0;
        b->static_used = 0;
        memset(b->bars, 0, sizeof b->bars);
        UNPOISON(b->arena, b->arena_size);
        POISON(b->arena + d->dynamic_shared_bytes, b->arena_size - d->dynamic_shared_bytes);
        for (unsigned i = 0; i < L->block_threads; ++i) {
            emu_thread *t = &b->threads[i];
            ck_emu_thread *id = &t->id;
            id->tid[0] = i % d->block[0];
            id->tid[1] = i / d->block[0] % d->block[1];
            id->tid[2] = i / d->block[0] / d->block[1];
            for (int k = 0; k < 3; ++k) {
                id->bid[k] = cid[k] * L->cdim[k] + r[k];
                id->bdim[k] = d->block[k];
                id->gdim[k] = d->grid[k];
                id->cluster_idx[k] = cid[k];
                id->cluster_dim[k] = L->cdim[k];
            }
            id->linear = i;
            id->block_threads = L->block_threads;
            id->cluster_rank = bi;
            id->cluster_size = L->cluster_blocks;
            id->dynamic_shared = b->arena;
            if (t->used && !t->clean)
                ck_fiber_scrub(&t->fiber);
            t->used = 1;
            t->clean = 0;
            t->state = T_READY;
            t->block = b;
            if (ck_fiber_prepare(&t->fiber, &c->host.base, fiber_entry) != CK_SUCCESS)
                return CK_ERROR_INTERNAL;
        }
    }
    return CK_SUCCESS;
}

static void launch_fail(emu_launch *L, ck_status st, const char *message)
{
    pthread_mutex_lock(&L->lock);
    if (!L->failed) {
        L->status = st;
        snprintf(L->message, sizeof L->message, "%s", message);
        __atomic_store_n(&L->failed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&L->lock);
}

static void *worker(void *arg)
{
    emu_launch *L = arg;
    emu_cluster *c = malloc(sizeof *c);
    if (!c) {
        launch_fail(L, CK_ERROR_OUT_OF_MEMORY, "emulator: no memory for a worker.");
        return NULL;
    }
    if (cluster_init(c, L) != CK_SUCCESS) {
        launch_fail(L, ck_last_status(), ck_last_error());
        cluster_destroy(c);
        free(c);
        return NULL;
    }
    tls_cluster = c;
    while (!__atomic_load_n(&L->failed, __ATOMIC_ACQUIRE)) {
        unsigned long idx = __atomic_fetch_add(&L->next, 1ul, __ATOMIC_RELAXED);
        if (idx >= L->nclusters)
            break;
        if (cluster_prepare(c, idx) != CK_SUCCESS) {
            launch_fail(L, ck_last_status(), ck_last_error());
            break;
        }
        run_cluster(c);
        if (c->failed) {
            launch_fail(L, c->status, c->message);
            break;
        }
    }
    tls_cluster = NULL;
    cluster_destroy(c);
    free(c);
    return NULL;
}

static unsigned worker_count(unsigned long nclusters)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("CK_EMU_THREADS");
    if (env && *env && strtol(env, NULL, 10) > 0)
        n = strtol(env, NULL, 10);
    if (n < 1)
        n = 1;
    if (n > 256)
        n = 256;
    if ((unsigned long)n > nclusters)
        n = (long)nclusters;
    return (unsigned)n;
}

ck_status ck_emu_launch(const ck_emu_launch_desc *d)
{
    CK_REQUIRE_NOT_NULL(d, "ck_emu_launch");
    const char *kn = d->kernel_name ? d->kernel_name : "?";
    emu_launch L;
    memset(&L, 0, sizeof L);
    L.d = d;
    unsigned long threads = 1, blocks = 1, cblocks = 1;
    for (int k = 0; k < 3; ++k) {
        if (d->grid[k] == 0 || d->block[k] == 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "launch of kernel '%s': grid (%u, %u, %u) and block (%u, %u, %u) "
                           "dimensions must all be at least 1.",
                           kn, d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                           d->block[2]);
        threads *= d->block[k];
        blocks *= d->grid[k];
        L.cdim[k] = d->cluster[k] ? d->cluster[k] : 1;
        cblocks *= L.cdim[k];
        if (d->grid[k] % L.cdim[k] != 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "launch of kernel '%s': grid dimension %d (%u) is not a multiple of "
                           "the cluster dimension (%u).",
                           kn, k, d->grid[k], L.cdim[k]);
        L.clusters[k] = d->grid[k] / L.cdim[k];
    }
    /* CUDA's limits (compute capability 9.0): the GPU refuses anything larger */
    static const unsigned max_grid[3] = {0x7fffffffu, 65535u, 65535u};
    static const unsigned max_block[3] = {1024u, 1024u, 64u};
    for (int k = 0; k < 3; ++k) {
        if (d->grid[k] > max_grid[k])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "launch of kernel '%s': grid dimension %c is %u; CUDA accepts at most "
                           "%u.",
                           kn, "xyz"[k], d->grid[k], max_grid[k]);
        if (d->block[k] > max_block[k])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "launch of kernel '%s': block dimension %c is %u; CUDA accepts at "
                           "most %u.",
                           kn, "xyz"[k], d->block[k], max_block[k]);
    }
    if (threads > CK_EMU_MAX_BLOCK_THREADS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "launch of kernel '%s': a block of %lu threads is too large; at most %u "
                       "are accepted.",
                       kn, threads, CK_EMU_MAX_BLOCK_THREADS);
    if (cblocks > CK_EMU_MAX_CLUSTER_BLOCKS)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "launch of kernel '%s': a cluster of %lu blocks is too large; at most %u "
                       "are accepted.",
                       kn, cblocks, CK_EMU_MAX_CLUSTER_BLOCKS);
    if (d->dynamic_shared_bytes > CK_EMU_MAX_SHARED_BYTES)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "launch of kernel '%s': %zu bytes of dynamic shared memory requested; at "
                       "most %u are accepted.",
                       kn, d->dynamic_shared_bytes, CK_EMU_MAX_SHARED_BYTES);
    if (!d->run)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "launch of kernel '%s': no entry point.", kn);
    L.block_threads = (unsigned)threads;
    L.cluster_blocks = (unsigned)cblocks;
    L.nclusters = blocks / cblocks;
    pthread_mutex_init(&L.lock, NULL);
    unsigned nw = worker_count(L.nclusters);
    pthread_t tids[256];
    unsigned started = 0;
    for (unsigned i = 1; i < nw; ++i) {
        if (pthread_create(&tids[started], NULL, worker, &L) != 0)
            break;
        started++;
    }
    worker(&L); /* the calling thread works too */
    for (unsigned i = 0; i < started; ++i)
        pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&L.lock);
    if (L.failed)
        return ck_fail(L.status, "%s", L.message);
    return CK_SUCCESS;
}
