/*
 * ck/norm.h - (placeholder; the implementer of src/ops/norm defines this header's API.)
 */
#ifndef CK_NORM_H
#define CK_NORM_H

#include "ck/context.h"

#endif
