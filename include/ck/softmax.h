/*
 * ck/softmax.h - (placeholder; the implementer of src/ops/softmax defines this header's API.)
 */
#ifndef CK_SOFTMAX_H
#define CK_SOFTMAX_H

#include "ck/context.h"

#endif
