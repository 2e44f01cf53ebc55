/*
 * The exact fast conversions now live in the device block library (src/device/ck_convert.h,
 * part of ck_block.h); this name stays for the sources that still include it.
 */
#ifndef CK_OPS_COMMON_FAST_CONV_KERNEL_H
#define CK_OPS_COMMON_FAST_CONV_KERNEL_H
#include "ck_convert.h"
#endif
