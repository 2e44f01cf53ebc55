/* ck_load_store_traits_make with another vector limit (the access checker's hardware model). */
#ifndef CK_SRC_CORE_LOAD_STORE_INTERNAL_H
#define CK_SRC_CORE_LOAD_STORE_INTERNAL_H

#include "ck/distribution.h"

/* As ck_load_store_traits_make, with at most max_bits bits per access instead of 128. */
ck_status ck_load_store_traits_make_capped(const ck_dist_encoding *enc,
                                           const struct ck_descriptor *desc, ck_dtype dtype,
                                           int max_bits, ck_load_store_traits *out);

#endif
