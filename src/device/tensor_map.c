/* Validation of tiled tensor-map parameters and encoding of the emulator's tensor map. */
#include "device/tensor_map.h"

#include <string.h>

#include "core/error.h"
#include "device/host/ck_emu_tensor_ref.h"

_Static_assert(sizeof(ck_emu_tmap_desc) <= 128, "the emulator map must fit in a ck_tensor_map");

ck_status ck_tensor_map_check(const ck_tensor_map_params *p)
{
    static const char *fn = "ck_tensor_map_check";
    CK_REQUIRE_NOT_NULL(p, fn);
    unsigned eb = p->elem_bytes;
    if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: elem_bytes = %u is not supported; accepted: 1, 2, 4 or 8.", fn, eb);
    if (p->rank < 1 || p->rank > 5)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: rank = %u is out of range; accepted: 1 to 5 dimensions.", fn, p->rank);
    if (p->global_address == NULL || ((uintptr_t)p->global_address & 15u) != 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: global_address = %p must be a non-null 16-byte aligned address.", fn,
                       p->global_address);
    if (p->swizzle < 0 || p->swizzle > 3)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: swizzle = %d is not a swizzle mode; accepted: 0 (none), 1 (32B), "
                       "2 (64B), 3 (128B).",
                       fn, p->swizzle);
    for (unsigned i = 0; i < p->rank; ++i) {
        if (p->dims[i] < 1 || p->dims[i] > (1ull << 32))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: dims[%u] = %llu is out of range; accepted: 1 to 2^32 elements.", fn,
                           i, (unsigned long long)p->dims[i]);
        if (p->box[i] < 1 || p->box[i] > 256)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: box[%u] = %u is out of range; accepted: 1 to 256 elements.", fn, i,
                           p->box[i]);
        if (p->elem_strides[i] < 1 || p->elem_strides[i] > 8)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: elem_strides[%u] = %u is out of range; accepted: 1 to 8.", fn, i,
                           p->elem_strides[i]);
        if (i >= 1 && (p->strides[i - 1] % 16u != 0 || p->strides[i - 1] == 0 ||
                       p->strides[i - 1] >= (1ull << 40)))
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: strides[%u] = %llu (bytes between consecutive indices of "
                           "dimension %u) must be a non-zero multiple of 16 below 2^40.",
                           fn, i - 1, (unsigned long long)p->strides[i - 1], i);
    }
    uint64_t inner = (uint64_t)p->box[0] * eb;
    if (inner % 16u != 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the inner box row box[0]*elem_bytes = %llu bytes must be a multiple "
                       "of 16 bytes.",
                       fn, (unsigned long long)inner);
    if (p->swizzle && inner > (16ull << p->swizzle))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the inner box row box[0]*elem_bytes = %llu bytes exceeds the %u-byte "
                       "span of swizzle mode %d; accepted: at most the span.",
                       fn, (unsigned long long)inner, 16u << p->swizzle, p->swizzle);
    return CK_SUCCESS;
}

ck_status ck_tensor_map_encode_emu(const ck_tensor_map_params *p, void *map)
{
    CK_REQUIRE_NOT_NULL(map, "ck_tensor_map_encode_emu");
    ck_status st = ck_tensor_map_check(p);
    if (st != CK_SUCCESS)
        return ck_fail_context(st, "ck_tensor_map_encode_emu");
    ck_emu_tmap_desc d;
    memset(&d, 0, sizeof d);
    d.magic = CK_EMU_TMAP_MAGIC;
    d.elem_bytes = (uint8_t)p->elem_bytes;
    d.rank = (uint8_t)p->rank;
    d.swizzle = (uint8_t)p->swizzle;
    d.global_address = (uint64_t)(uintptr_t)p->global_address;
    for (unsigned i = 0; i < 5; ++i) {
        int used = i < p->rank;
        d.dims[i] = used ? (uint32_t)(p->dims[i] > 0xFFFFFFFFull ? 0xFFFFFFFFull : p->dims[i]) : 1u;
        d.strides[i] = i == 0 ? p->elem_bytes : used ? p->strides[i - 1] : 0;
        d.box[i] = (uint16_t)(used ? p->box[i] : 1u);
        d.elem_strides[i] = (uint8_t)(used && i > 0 ? p->elem_strides[i] : 1u);
    }
    unsigned char bytes[128];
    memset(bytes, 0, sizeof bytes);
    memcpy(bytes, &d, sizeof d);
    memcpy(map, bytes, sizeof bytes);
    return CK_SUCCESS;
}

int ck_tensor_map_cu_dtype(unsigned elem_bytes)
{
    switch (elem_bytes) {
    case 1:
        return 0; /* CU_TENSOR_MAP_DATA_TYPE_UINT8 */
    case 2:
        return 1; /* CU_TENSOR_MAP_DATA_TYPE_UINT16 */
    case 4:
        return 2; /* CU_TENSOR_MAP_DATA_TYPE_UINT32 */
    case 8:
        return 4; /* CU_TENSOR_MAP_DATA_TYPE_UINT64 */
    default:
        return -1;
    }
}
