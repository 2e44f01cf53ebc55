/*
 * Host-side description of a tiled tensor map (the tensor copy engine's view of a global tensor)
 * and its validation / encoding for the emulator. The runtime builds the GPU's CUtensorMap from
 * the same parameters with cuTensorMapEncodeTiled (after ck_tensor_map_check), and the
 * emulator's map with ck_tensor_map_encode_emu; kernels receive either as a 128-byte
 * ck_tensor_map (src/device/ck_device_tensor.h). Docs: docs/device-tensor.md.
 */
#ifndef CK_SRC_DEVICE_TENSOR_MAP_H
#define CK_SRC_DEVICE_TENSOR_MAP_H

#include <stdint.h>

#include "ck/status.h"

/* Parameters of a tiled tensor map; the fields mirror cuTensorMapEncodeTiled's arguments
 * (interleave none, L2 promotion irrelevant, out-of-bounds elements read as zero). */
typedef struct ck_tensor_map_params {
    unsigned elem_bytes;        /* element size: 1, 2, 4 or 8 bytes */
    unsigned rank;              /* number of dimensions, 1..5; dimension 0 is contiguous */
    const void *global_address; /* start of the tensor, 16-byte aligned */
    uint64_t dims[5];           /* elements per dimension, 1..2^32 */
    uint64_t strides[4]; /* strides[i]: byte stride of dimension i+1 (multiple of 16, < 2^40) */
    uint32_t box[5];     /* box size per dimension, 1..256; box[0]*elem_bytes multiple of 16 */
    uint32_t elem_strides[5]; /* traversal step per dimension, 1..8 (elem_strides[0] ignored) */
    int swizzle;              /* CK_SWIZZLE_NONE/32B/64B/128B = 0..3; box[0]*elem_bytes <= span */
} ck_tensor_map_params;

/* Check `p` against the rules of cuTensorMapEncodeTiled. Returns CK_SUCCESS, or
 * CK_ERROR_INVALID_ARGUMENT with a sentence naming the field, its value and what is accepted. */
ck_status ck_tensor_map_check(const ck_tensor_map_params *p);

/* Validate `p` and write the emulator's tensor map into the 128 bytes at `map` (a
 * ck_tensor_map; 64-byte alignment is not required here). Errors as ck_tensor_map_check, plus
 * CK_ERROR_INVALID_ARGUMENT when `map` is NULL; `map` is untouched on error. */
ck_status ck_tensor_map_encode_emu(const ck_tensor_map_params *p, void *map);

/* The CUtensorMapDataType the runtime passes to cuTensorMapEncodeTiled for an element size:
 * the copy engine moves bits, so unsigned integers of the same width serve every element type
 * (UINT8 = 0, UINT16 = 1, UINT32 = 2, UINT64 = 4). Returns -1 for a size other than 1, 2, 4, 8. */
int ck_tensor_map_cu_dtype(unsigned elem_bytes);

#endif
