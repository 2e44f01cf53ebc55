/* ck_tensor_map_create: tensor maps for the cuda backend (cuTensorMapEncodeTiled) and the
 * emulator (ck_tensor_map_encode_emu), from one public description. */
#include <string.h>

#include "core/error.h"
#include "device/tensor_map.h"
#include "rt/runtime_internal.h"

_Static_assert(sizeof(ck_tensor_map) == 128, "a tensor map is 128 bytes");
_Static_assert(_Alignof(ck_tensor_map) == 64, "a tensor map is 64-byte aligned");

enum {
    CU_INTERLEAVE_NONE = 0,
    CU_L2_PROMOTION_128B = 2,
    CU_OOB_FILL_NONE = 0 /* out-of-bounds elements are zero */
};

ck_status ck_tensor_map_create(ck_device *device, const ck_tensor_map_desc *desc,
                               ck_tensor_map *map)
{
    static const char *fn = "ck_tensor_map_create";
    CK_REQUIRE_NOT_NULL(device, fn);
    CK_REQUIRE_NOT_NULL(desc, fn);
    CK_REQUIRE_NOT_NULL(map, fn);
    ck_tensor_map_params p;
    memset(&p, 0, sizeof p);
    p.elem_bytes = desc->elem_bytes;
    p.rank = desc->rank;
    p.global_address = desc->global_address;
    p.swizzle = desc->swizzle;
    for (unsigned i = 0; i < 5; ++i) {
        p.dims[i] = desc->dims[i];
        p.box[i] = desc->box[i];
        p.elem_strides[i] = desc->elem_strides[i] ? desc->elem_strides[i] : 1u;
        if (i < 4)
            p.strides[i] = desc->strides[i];
    }
    ck_status st = ck_tensor_map_check(&p);
    if (st != CK_SUCCESS)
        return ck_fail_context(st, "%s", fn);
    ck_tensor_map out;
    memset(&out, 0, sizeof out);
    if (device->backend == CK_BACKEND_CUDA) {
        st = ck_cuda_tensor_map_encode_tiled(device, ck_tensor_map_cu_dtype(p.elem_bytes), p.rank,
                                             (void *)(uintptr_t)p.global_address, p.dims, p.strides,
                                             p.box, p.elem_strides, CU_INTERLEAVE_NONE, p.swizzle,
                                             CU_L2_PROMOTION_128B, CU_OOB_FILL_NONE, &out);
    } else {
        st = ck_tensor_map_encode_emu(&p, &out);
    }
    if (st != CK_SUCCESS)
        return ck_fail_context(st, "%s", fn);
    *map = out;
    return CK_SUCCESS;
}
