/*
 * TEST-ONLY minimal stand-in for the device prelude ck_device.h (the real one is owned by the
 * runtime; this exists so the tensor-core headers can be compiled by NVRTC in tests before the
 * runtime lands). It provides only what the sample kernels of tests/test_tensor_nvrtc.c use.
 */
#ifndef CK_TESTS_DEVICE_STUB_CK_DEVICE_H
#define CK_TESTS_DEVICE_STUB_CK_DEVICE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CK_KERNEL          extern "C" __global__ void
#define CK_SHARED(align)   __shared__ __align__(align)
#define ck_thread_linear() (threadIdx.x)
#else
#define CK_KERNEL        void
#define CK_SHARED(align) static _Alignas(align)
#endif

#include "ck_device_tensor.h"

#endif
