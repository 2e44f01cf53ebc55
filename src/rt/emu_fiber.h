/*
 * Cooperative fibers for the CPU emulator: ucontext contexts on their own mmap'd stacks (with a
 * guard page), annotated for AddressSanitizer when the library is built with it.
 */
#ifndef CK_SRC_RT_EMU_FIBER_H
#define CK_SRC_RT_EMU_FIBER_H

#include <stddef.h>
#include <ucontext.h>

#include "ck/status.h"

typedef struct ck_fiber {
    ucontext_t ctx;
    void *stack;       /* usable stack (above the guard page) */
    size_t stack_size; /* usable bytes */
    void *map;         /* whole mapping, guard page included */
    size_t map_size;
    void *asan_fake; /* AddressSanitizer fake-stack handle while switched out */
} ck_fiber;

/* The context a worker thread runs its fibers from. */
typedef struct ck_fiber_host {
    ucontext_t ctx;
    const void *stack_bottom; /* learnt on the first switch (AddressSanitizer) */
    size_t stack_size;
    void *asan_fake;
    ucontext_t base; /* getcontext once; copied into fibers by ck_fiber_prepare */
} ck_fiber_host;

/* Stack size of emulated threads in bytes: $CK_EMU_STACK_KB, else 256 KiB (1 MiB under ASan). */
size_t ck_fiber_default_stack_size(void);

/* A stack of `size` bytes (plus a guard page), from the process's pool of released stacks or
 * newly mapped. CK_ERROR_OUT_OF_MEMORY with a sentence. */
ck_status ck_fiber_init(ck_fiber *f, size_t size);
/* Give the stack back to the pool (or unmap it). The fiber must not be running. */
void ck_fiber_destroy(ck_fiber *f);
/* After a fiber was abandoned mid-call (trap, deadlock): make its stack clean for reuse
 * (clears AddressSanitizer's poisoning; nothing otherwise). */
void ck_fiber_scrub(ck_fiber *f);

/* Prepare `f` to run entry() from the top of its stack when next switched to. `base` is a
 * context filled once by getcontext (copied, so preparing costs no system call). */
ck_status ck_fiber_prepare(ck_fiber *f, const ucontext_t *base, void (*entry)(void));

/* From the running fiber `from` directly to fiber `to` (returns when `from` is resumed).
 * `finished` = 1 when `from` will never be resumed. */
void ck_fiber_switch(ck_fiber *from, ck_fiber *to, int finished);

/* From the host context into fiber `f`; returns when the fiber switches back. */
void ck_fiber_enter(ck_fiber_host *host, ck_fiber *f);

/* From fiber `f` back to the host. `finished` = 1 when the fiber will never be resumed. */
void ck_fiber_leave(ck_fiber_host *host, ck_fiber *f, int finished);

/* First thing a fiber's entry function calls (completes the switch for AddressSanitizer). */
void ck_fiber_started(ck_fiber_host *host);

#endif
