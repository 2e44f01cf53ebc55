/*
 * ck/elementwise.h - copy, cast and fused elementwise operations of the client API.
 * (Proposal; the implementer of src/ops/elementwise refines and documents it.)
 */
#ifndef CK_ELEMENTWISE_H
#define CK_ELEMENTWISE_H

#include "ck/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst = src: same shape and dtype, any strides (dst must not overlap src). */
ck_status ck_copy(ck_context *ctx, const ck_tensor *dst, const ck_tensor *src);

/* dst = convert(src * opt->scale) between any two numeric types, bit for bit as
 * ck_convert_array (rounding, overflow, stochastic seed); opt NULL: defaults. */
ck_status ck_cast(ck_context *ctx, const ck_tensor *dst, const ck_tensor *src,
                  const ck_convert_options *opt);

#ifdef __cplusplus
}
#endif
#endif
