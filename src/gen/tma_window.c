/*
 * TMA windows: a tile of a tensor descriptor moved between global and shared memory by the
 * tensor memory accelerator. The tensor map (dims, byte strides, box) is derived from the
 * descriptor and the tile here, once per plan; only the address is set per execution. The
 * descriptor must be affine (offset = sum idx_i * stride_i, no padding), as the engine reads a
 * strided box; out-of-bounds elements of the box are zero-filled by the hardware on loads and
 * not written on stores, so odd sizes need no masks.
 */
#include <stdio.h>
#include <string.h>

#include "ck/tile_kernel.h"
#include "core/error.h"
#include "gen/sbuf.h"

ck_status ck_tma_window_make(const ck_tma_window_spec *spec, ck_tma_window *out)
{
    static const char *fn = "ck_tma_window_make";
    CK_REQUIRE_NOT_NULL(spec, fn);
    CK_REQUIRE_NOT_NULL(out, fn);
    CK_REQUIRE_NOT_NULL(spec->desc, fn);
    memset(out, 0, sizeof *out);
    const ck_descriptor *d = spec->desc;
    int n = ck_descriptor_ndim(d);
    int eb = ck_dtype_whole_bytes(spec->dtype);
    if (eb == 0)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: dtype %s has no TMA element size (1, 2, 4 or 8-byte types only).", fn,
                       ck_dtype_name(spec->dtype));
    if (n < 1 || n > 5)
        return ck_fail(CK_ERROR_UNSUPPORTED, "%s: the descriptor has %d dims; TMA takes 1..5.", fn,
                       n);
    if (!ck_descriptor_is_concrete(d))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: the descriptor has symbolic lengths or strides; bind them first "
                       "(ck_adaptor_bind) — a tensor map needs numbers.",
                       fn);
    if (spec->swizzle < 0 || spec->swizzle > 3)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: swizzle = %d; accepted: 0 none, 1 32-byte, 2 64-byte, 3 128-byte.", fn,
                       spec->swizzle);
    int64_t len[5], stride[5], zero[5] = {0}, idx[5], base = 0;
    ck_status st = ck_descriptor_calculate_offset(d, zero, &base);
    if (st)
        return ck_fail_context(st, "%s: the descriptor's origin", fn);
    for (int i = 0; i < n; ++i) {
        ck_ival l = ck_descriptor_length(d, i);
        len[i] = l.v;
        if (len[i] < 1 || len[i] > (INT64_C(1) << 32))
            return ck_fail(CK_ERROR_UNSUPPORTED, "%s: dim %d has length %lld; TMA takes 1..2^32.",
                           fn, i, (long long)len[i]);
        if (spec->tile[i] < 1 || spec->tile[i] > 256)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: tile[%d] = %d; a TMA box has 1..256 elements per dim.", fn, i,
                           spec->tile[i]);
        memset(idx, 0, sizeof idx);
        idx[i] = len[i] > 1 ? 1 : 0;
        int64_t off = base;
        if (len[i] > 1 && (st = ck_descriptor_calculate_offset(d, idx, &off)))
            return ck_fail_context(st, "%s: offset along dim %d", fn, i);
        stride[i] = off - base;
    }
    /* affine: the offset of the far corner and of each dim's last index follow the strides */
    for (int i = 0; i <= n; ++i) {
        int64_t want = base, got = 0;
        for (int j = 0; j < n; ++j) {
            idx[j] = (i == n || j == i) ? len[j] - 1 : 0;
            want += idx[j] * stride[j];
        }
        int valid = 1;
        if ((st = ck_descriptor_calculate_offset(d, idx, &got)) ||
            (st = ck_descriptor_is_valid_index(d, idx, &valid)))
            return ck_fail_context(st, "%s: checking that the descriptor is affine", fn);
        if (got != want || !valid)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: the descriptor is not a strided view (offset %lld at a corner "
                           "where strides give %lld%s); TMA reads strided boxes only.",
                           fn, (long long)got, (long long)want, valid ? "" : ", or it pads");
    }
    if (base != 0)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: the descriptor's origin is at element %lld; give the offset in the "
                       "address instead (TMA maps start at the address).",
                       fn, (long long)base);
    /* TMA dim 0: the contiguous visible dim (stride 1); the others keep their visible order,
     * last visible first (the usual row-major reading) */
    int inner = -1;
    for (int i = n - 1; i >= 0 && inner < 0; --i)
        if (stride[i] == 1 || len[i] == 1)
            inner = i;
    if (inner < 0 || (stride[inner] != 1 && n > 1 && len[inner] != 1))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: no dim has stride 1; TMA needs a contiguous innermost dimension.", fn);
    out->rank = n;
    out->perm[0] = inner;
    for (int i = n - 1, j = 1; i >= 0; --i)
        if (i != inner)
            out->perm[j++] = i;
    ck_tensor_map_desc *m = &out->map;
    m->elem_bytes = (unsigned)eb;
    m->rank = (unsigned)n;
    m->swizzle = spec->swizzle;
    long long box_bytes = eb;
    for (int j = 0; j < n; ++j) {
        int v = out->perm[j];
        m->dims[j] = (uint64_t)len[v];
        m->box[j] = (uint32_t)spec->tile[v];
        m->elem_strides[j] = 1;
        box_bytes *= spec->tile[v];
        if (j > 0) {
            int64_t sb = stride[v] * eb;
            if (sb <= 0 || sb % 16 != 0 || sb >= (INT64_C(1) << 40))
                return ck_fail(CK_ERROR_UNSUPPORTED,
                               "%s: dim %d's stride is %lld bytes; TMA needs a positive multiple "
                               "of 16 below 2^40 (pad the leading dimension, or use cp.async).",
                               fn, v, (long long)sb);
            m->strides[j - 1] = (uint64_t)sb;
        }
    }
    int span = spec->swizzle ? 16 << spec->swizzle : 0;
    if ((m->box[0] * (unsigned)eb) % 16 != 0 || (span && (int)(m->box[0] * (unsigned)eb) > span))
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "%s: the box's inner row is %u bytes; it must be a multiple of 16%s.", fn,
                       m->box[0] * (unsigned)eb, span ? " and at most the swizzle span" : "");
    out->box_bytes = box_bytes;
    return CK_SUCCESS;
}

ck_status ck_tma_window_encode(ck_device *device, const ck_tma_window *w, const void *address,
                               ck_tensor_map *map)
{
    CK_REQUIRE_NOT_NULL(w, "ck_tma_window_encode");
    ck_tensor_map_desc d = w->map;
    d.global_address = address;
    return ck_tensor_map_create(device, &d, map);
}

ck_status ck_tma_window_generate(const char *name, const ck_tma_window *w, char **source)
{
    static const char *fn = "ck_tma_window_generate";
    CK_REQUIRE_NOT_NULL(name, fn);
    CK_REQUIRE_NOT_NULL(w, fn);
    CK_REQUIRE_NOT_NULL(source, fn);
    *source = NULL;
    size_t nl = strlen(name);
    if (nl == 0 || nl > 40 ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != nl)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: name '%s' must be 1..40 letters, digits or '_'.", fn, name);
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "/* TMA window %s: rank %d, box", name, w->rank);
    for (int j = 0; j < w->rank; ++j)
        ck_sbuf_printf(&b, "%s%u (dim %d)", j ? " x " : " ", w->map.box[j], w->perm[j]);
    ck_sbuf_printf(&b,
                   ", %u-byte elements, swizzle %d. Origins are in the descriptor's dim "
                   "order. */\n",
                   w->map.elem_bytes, w->map.swizzle);
    ck_sbuf_printf(&b, "#define CK_TMA_BYTES_%s %lld\n", name, w->box_bytes);
    const char *params = "long long o0, long long o1, long long o2, long long o3, long long o4";
    char plist[128];
    snprintf(plist, sizeof plist, "%.*s", w->rank * 14 - 2, params);
    char args[96] = "";
    size_t used = 0;
    for (int j = 0; j < w->rank; ++j)
        used += (size_t)snprintf(args + used, sizeof args - used, ", (int)o%d", w->perm[j]);
    ck_sbuf_printf(&b,
                   "CK_DEVICE void tma_load_%s(void *smem, const ck_tensor_map *map, "
                   "unsigned long long *bar, %s)\n{\n    ck_tma_load_%dd(smem, map, bar%s);\n}\n",
                   name, plist, w->rank, args);
    ck_sbuf_printf(&b,
                   "CK_DEVICE void tma_store_%s(const ck_tensor_map *map, const void *smem, %s)\n"
                   "{\n    ck_tma_store_%dd(map, smem%s);\n}\n",
                   name, plist, w->rank, args);
    if (b.oom) {
        free(b.s);
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "%s: out of host memory.", fn);
    }
    *source = b.s;
    return CK_SUCCESS;
}
