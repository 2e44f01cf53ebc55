/*
 * ck/reduce.h - (placeholder; the implementer of src/ops/reduce defines this header's API.)
 */
#ifndef CK_REDUCE_H
#define CK_REDUCE_H

#include "ck/context.h"

#endif
