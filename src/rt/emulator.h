/*
 * The CPU emulator: runs a kernel compiled for the host prelude. The threads of a block (of a
 * cluster, when clusters are used) are cooperative fibers on one worker thread that switch at
 * barriers and warp-collective operations; blocks (clusters) run in parallel on worker threads.
 */
#ifndef CK_SRC_RT_EMULATOR_H
#define CK_SRC_RT_EMULATOR_H

#include <stddef.h>

#include "ck/status.h"
#include "device/host/ck_emu_api.h"

/* Most dynamic + static shared memory of one block (as on the H100: 227 KiB). */
#define CK_EMU_MAX_SHARED_BYTES (227u * 1024u)
/* Most static shared memory (CK_SHARED_ARRAY) of one block, as the GPU compilers allow. */
#define CK_EMU_MAX_STATIC_SHARED_BYTES (48u * 1024u)
#define CK_EMU_MAX_BLOCK_THREADS       1024u
#define CK_EMU_MAX_CLUSTER_BLOCKS      16u

typedef struct ck_emu_launch_desc {
    const char *kernel_name;                /* for messages */
    void (*run)(const void *args);          /* the kernel trampoline of the loaded object */
    const void *args;                       /* packed arguments for `run` */
    unsigned grid[3], block[3], cluster[3]; /* cluster {0,0,0} or {1,1,1}: no clusters */
    size_t dynamic_shared_bytes;
} ck_emu_launch_desc;

/* Run a launch to completion. Errors: CK_ERROR_INVALID_ARGUMENT (dimensions, shared memory),
 * CK_ERROR_LAUNCH (deadlock, trap, misuse of a barrier or collective: a sentence naming the
 * block), CK_ERROR_OUT_OF_MEMORY. Worker threads: $CK_EMU_THREADS, else the number of cores. */
ck_status ck_emu_launch(const ck_emu_launch_desc *desc);

/* The table handed to every kernel object (ck_emu_bind). */
const ck_emu_api *ck_emu_api_table(void);

#endif
