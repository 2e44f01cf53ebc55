/* Cooperative fibers (ucontext) with guard pages and AddressSanitizer fiber annotations. */
#include "rt/emu_fiber.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define CK_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CK_FIBER_ASAN 1
#endif
#endif

#ifdef CK_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define START_SWITCH(save, bottom, size)  __sanitizer_start_switch_fiber((save), (bottom), (size))
#define FINISH_SWITCH(save, bottom, size) __sanitizer_finish_switch_fiber((save), (bottom), (size))
#else
#define START_SWITCH(save, bottom, size)  ((void)(save), (void)(bottom), (void)(size))
#define FINISH_SWITCH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#endif

size_t ck_fiber_default_stack_size(void)
{
    const char *env = getenv("CK_EMU_STACK_KB");
    if (env && *env) {
        long kb = strtol(env, NULL, 10);
        if (kb >= 16 && kb <= 65536)
            return (size_t)kb * 1024u;
    }
#ifdef CK_FIBER_ASAN
    return 1024u * 1024u;
#else
    return 256u * 1024u;
#endif
}

/* Stacks are kept for reuse across launches (mapping and unmapping hundreds of stacks per
 * launch would dominate small launches). */
enum { POOL_MAX = 4096 };
static struct {
    pthread_mutex_t lock;
    size_t size; /* usable size of the pooled stacks */
    int count;
    void *maps[POOL_MAX];
} pool = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}};

ck_status ck_fiber_init(ck_fiber *f, size_t size)
{
    memset(f, 0, sizeof *f);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size = (size + page - 1) / page * page;
    void *map = NULL;
    pthread_mutex_lock(&pool.lock);
    if (pool.count > 0 && pool.size == size)
        map = pool.maps[--pool.count];
    pthread_mutex_unlock(&pool.lock);
    if (!map) {
        map = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED)
            return ck_fail(CK_ERROR_OUT_OF_MEMORY,
                           "emulator: could not map a %zu-byte stack for an emulated thread; "
                           "lower CK_EMU_STACK_KB or the number of threads per block.",
                           size);
        mprotect(map, page, PROT_NONE); /* stacks grow down: the guard is the lowest page */
    }
    f->map = map;
    f->map_size = size + page;
    f->stack = (char *)map + page;
    f->stack_size = size;
    return CK_SUCCESS;
}

void ck_fiber_scrub(ck_fiber *f)
{
#ifdef CK_FIBER_ASAN
    /* frames of an abandoned fiber were never unwound: clear their poisoned redzones */
    if (f->stack)
        ASAN_UNPOISON_MEMORY_REGION(f->stack, f->stack_size);
#else
    (void)f;
#endif
}

void ck_fiber_destroy(ck_fiber *f)
{
    if (f->map) {
        int kept = 0;
        pthread_mutex_lock(&pool.lock);
        if (pool.count == 0)
            pool.size = f->stack_size;
        if (pool.size == f->stack_size && pool.count < POOL_MAX) {
            pool.maps[pool.count++] = f->map;
            kept = 1;
        }
        pthread_mutex_unlock(&pool.lock);
        if (!kept)
            munmap(f->map, f->map_size);
    }
    memset(f, 0, sizeof *f);
}

ck_status ck_fiber_prepare(ck_fiber *f, const ucontext_t *base, void (*entry)(void))
{
    memcpy(&f->ctx, base, sizeof f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack;
    f->ctx.uc_stack.ss_size = f->stack_size;
    f->ctx.uc_link = NULL;
    makecontext(&f->ctx, entry, 0);
    f->asan_fake = NULL;
    return CK_SUCCESS;
}

void ck_fiber_enter(ck_fiber_host *host, ck_fiber *f)
{
    START_SWITCH(&host->asan_fake, f->stack, f->stack_size);
    swapcontext(&host->ctx, &f->ctx);
    FINISH_SWITCH(host->asan_fake, NULL, NULL);
}

void ck_fiber_started(ck_fiber_host *host)
{
    const void *bottom = NULL;
    size_t size = 0;
    FINISH_SWITCH(NULL, &bottom, &size);
    /* the first fiber a worker runs is entered from the worker's own stack */
    if (!host->stack_bottom) {
        host->stack_bottom = bottom;
        host->stack_size = size;
    }
}

void ck_fiber_switch(ck_fiber *from, ck_fiber *to, int finished)
{
    START_SWITCH(finished ? NULL : &from->asan_fake, to->stack, to->stack_size);
    swapcontext(&from->ctx, &to->ctx);
    FINISH_SWITCH(from->asan_fake, NULL, NULL);
}

void ck_fiber_leave(ck_fiber_host *host, ck_fiber *f, int finished)
{
    START_SWITCH(finished ? NULL : &f->asan_fake, host->stack_bottom, host->stack_size);
    swapcontext(&f->ctx, &host->ctx);
    FINISH_SWITCH(f->asan_fake, NULL, NULL);
}
