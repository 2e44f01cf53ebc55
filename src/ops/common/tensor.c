/* Tensor descriptions of the client API and the argument checks every operation shares. */
#include <stdio.h>
#include <string.h>

#include "ck/context.h"
#include "core/error.h"
#include "ops/common/op_common.h"

static int mul_overflows(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}

/* Validates the fields; `who` names the caller in messages. */
static ck_status validate(const char *who, const char *name, const ck_tensor *t)
{
    const ck_dtype_info *info = ck_dtype_get(t->dtype);
    if (!info)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' has dtype %d, which is not a ck_dtype value.", who, name,
                       (int)t->dtype);
    if (t->rank < 0 || t->rank > CK_TENSOR_MAX_RANK)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' has rank %d; ranks 0 to %d are supported.", who, name,
                       t->rank, CK_TENSOR_MAX_RANK);
    int64_t n = 1, extent = 0;
    for (int i = 0; i < t->rank; ++i) {
        if (t->shape[i] < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: tensor '%s' has length %lld in dimension %d; lengths must be >= 0.",
                           who, name, (long long)t->shape[i], i);
        if (t->strides[i] < 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: tensor '%s' has stride %lld in dimension %d; strides must be >= 0.",
                           who, name, (long long)t->strides[i], i);
        int64_t term;
        if (mul_overflows(n, t->shape[i], &n) ||
            (t->shape[i] > 0 && mul_overflows(t->shape[i] - 1, t->strides[i], &term)) ||
            (t->shape[i] > 0 && __builtin_add_overflow(extent, term, &extent)))
            return ck_fail(CK_ERROR_OVERFLOW,
                           "%s: tensor '%s' has more elements or a larger extent than int64 holds.",
                           who, name);
    }
    /* the byte extent (elements 0..extent, rounded up to whole packs) must fit in int64 too:
     * an f64 tensor of 2^61 elements fits in elements but not in bytes */
    int64_t bytes;
    if (n > 0 && mul_overflows(extent / info->pack_elements + 1, info->pack_bytes, &bytes))
        return ck_fail(CK_ERROR_OVERFLOW,
                       "%s: tensor '%s' spans %lld elements of %s, more bytes than int64 holds.",
                       who, name, (long long)extent + 1, info->name);
    if (info->pack_elements > 1 && n > 0) {
        if (!ck_tensor_is_contiguous(t))
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: tensor '%s' of sub-byte type %s must be packed and contiguous "
                           "(strides of a row-major tensor).",
                           who, name, info->name);
        if (n % info->pack_elements)
            return ck_fail(CK_ERROR_UNSUPPORTED,
                           "%s: tensor '%s' of type %s has %lld elements; packs of %d are stored "
                           "together, so the count must be a multiple of %d.",
                           who, name, info->name, (long long)n, info->pack_elements,
                           info->pack_elements);
    }
    return CK_SUCCESS;
}

ck_status ck_tensor_init(ck_tensor *t, void *data, ck_dtype dtype, int rank, const int64_t *shape,
                         const int64_t *strides)
{
    CK_REQUIRE_NOT_NULL(t, "ck_tensor_init");
    ck_tensor v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.dtype = dtype;
    v.rank = rank;
    if (rank < 0 || rank > CK_TENSOR_MAX_RANK)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tensor_init: rank %d; ranks 0 to %d are supported.", rank,
                       CK_TENSOR_MAX_RANK);
    if (rank > 0 && !shape)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tensor_init: argument 'shape' is NULL for rank %d.", rank);
    for (int i = 0; i < rank; ++i)
        v.shape[i] = shape[i];
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; --i) {
        v.strides[i] = strides ? strides[i] : s;
        if (shape[i] > 1 && s > 0 && !strides && mul_overflows(s, shape[i], &s))
            return ck_fail(CK_ERROR_OVERFLOW, "ck_tensor_init: the shape has more elements than "
                                              "int64 holds.");
    }
    ck_status st = validate("ck_tensor_init", "t", &v);
    if (st != CK_SUCCESS)
        return st;
    if (!data && ck_tensor_numel(&v) > 0)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_tensor_init: argument 'data' is NULL for a tensor of %lld elements.",
                       (long long)ck_tensor_numel(&v));
    *t = v;
    return CK_SUCCESS;
}

int64_t ck_tensor_numel(const ck_tensor *t)
{
    if (!t || t->rank < 0 || t->rank > CK_TENSOR_MAX_RANK)
        return 0;
    int64_t n = 1;
    for (int i = 0; i < t->rank; ++i)
        n *= t->shape[i];
    return n;
}

int ck_tensor_is_contiguous(const ck_tensor *t)
{
    if (!t || t->rank < 0 || t->rank > CK_TENSOR_MAX_RANK)
        return 0;
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; --i) {
        if (t->shape[i] == 1)
            continue;
        if (t->strides[i] != s)
            return 0;
        s *= t->shape[i];
    }
    return 1;
}

int64_t ck_tensor_extent_bytes(const ck_tensor *t)
{
    if (!t || ck_tensor_numel(t) <= 0)
        return 0;
    const ck_dtype_info *info = ck_dtype_get(t->dtype);
    if (!info)
        return 0;
    int64_t last = 0;
    for (int i = 0; i < t->rank; ++i)
        last += (t->shape[i] - 1) * t->strides[i];
    /* bytes of elements 0..last, rounded up to whole packs */
    int64_t packs = (last + info->pack_elements) / info->pack_elements;
    return packs * info->pack_bytes;
}

void ck_tensor_describe(const ck_tensor *t, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    if (!t) {
        snprintf(buf, size, "(null tensor)");
        return;
    }
    size_t at = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(buf + at, at < size ? size - at : 0, __VA_ARGS__);                       \
        if (k_ > 0)                                                                                \
            at += (size_t)k_;                                                                      \
    } while (0)
    PUT("%s[", ck_dtype_name(t->dtype));
    for (int i = 0; i < t->rank && i < CK_TENSOR_MAX_RANK; ++i)
        PUT("%s%lld", i ? ", " : "", (long long)t->shape[i]);
    PUT("] strides [");
    for (int i = 0; i < t->rank && i < CK_TENSOR_MAX_RANK; ++i)
        PUT("%s%lld", i ? ", " : "", (long long)t->strides[i]);
    PUT("]");
#undef PUT
    if (at >= size)
        buf[size - 1] = '\0';
}

const char *ck_op_tensor_str(const ck_tensor *t)
{
    static _Thread_local char bufs[4][256];
    static _Thread_local int next;
    char *b = bufs[next];
    next = (next + 1) % 4;
    ck_tensor_describe(t, b, sizeof bufs[0]);
    return b;
}

ck_status ck_op_check_tensor(const char *op, const char *name, const ck_tensor *t)
{
    if (!t)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT, "%s: tensor '%s' is NULL.", op, name);
    ck_status st = validate(op, name, t);
    if (st != CK_SUCCESS)
        return st;
    if (ck_tensor_numel(t) == 0)
        return CK_SUCCESS;
    if (!t->data)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' (%s) has no data pointer.", op, name, ck_op_tensor_str(t));
    const ck_dtype_info *info = ck_dtype_get(t->dtype);
    unsigned align = (unsigned)info->pack_bytes;
    if (align == 3)
        align = 1;
    if ((uintptr_t)t->data % align)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensor '%s' data pointer %p is not aligned to its %u-byte elements.", op,
                       name, t->data, align);
    return CK_SUCCESS;
}

ck_status ck_op_check_same_shape(const char *op, const char *name_a, const ck_tensor *a,
                                 const char *name_b, const ck_tensor *b)
{
    int same = a->rank == b->rank;
    for (int i = 0; same && i < a->rank; ++i)
        same = a->shape[i] == b->shape[i];
    if (!same)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "%s: tensors '%s' (%s) and '%s' (%s) must have the same shape.", op, name_a,
                       ck_op_tensor_str(a), name_b, ck_op_tensor_str(b));
    return CK_SUCCESS;
}

ck_status ck_op_check_output(const char *op, const char *name, const ck_tensor *t)
{
    /* Sufficient condition (the one PyTorch's "non-overlapping" check uses): with the
     * dimensions of length > 1 sorted by stride, each stride exceeds the largest offset the
     * smaller-stride dimensions reach. */
    int64_t len[CK_TENSOR_MAX_RANK], str[CK_TENSOR_MAX_RANK];
    int m = 0;
    for (int i = 0; i < t->rank; ++i) {
        if (t->shape[i] == 0)
            return CK_SUCCESS; /* no elements */
        if (t->shape[i] == 1)
            continue;
        int at = m++;
        while (at > 0 && str[at - 1] > t->strides[i]) {
            str[at] = str[at - 1];
            len[at] = len[at - 1];
            --at;
        }
        str[at] = t->strides[i];
        len[at] = t->shape[i];
    }
    int64_t reach = 0; /* largest offset reached by the dimensions sorted so far */
    for (int i = 0; i < m; ++i) {
        if (str[i] == 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: output tensor '%s' (%s) has stride 0 in a dimension of length "
                           "%lld: two elements at one address; outputs must not overlap "
                           "themselves.",
                           op, name, ck_op_tensor_str(t), (long long)len[i]);
        if (str[i] <= reach)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "%s: output tensor '%s' (%s) has two elements at one address (a "
                           "stride of %lld does not step past the %lld elements the smaller "
                           "strides reach); outputs must not overlap themselves.",
                           op, name, ck_op_tensor_str(t), (long long)str[i],
                           (long long)reach + 1);
        reach += (len[i] - 1) * str[i]; /* fits: validate() bounded the extent */
    }
    return CK_SUCCESS;
}

int ck_op_overlap(const ck_tensor *a, const ck_tensor *b)
{
    int64_t ea = ck_tensor_extent_bytes(a), eb = ck_tensor_extent_bytes(b);
    if (ea == 0 || eb == 0)
        return 0;
    uintptr_t pa = (uintptr_t)a->data, pb = (uintptr_t)b->data;
    return pa < pb + (uintptr_t)eb && pb < pa + (uintptr_t)ea;
}
