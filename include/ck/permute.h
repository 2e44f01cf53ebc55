/*
 * ck/permute.h - (placeholder; the implementer of src/ops/permute defines this header's API.)
 */
#ifndef CK_PERMUTE_H
#define CK_PERMUTE_H

#include "ck/context.h"

#endif
