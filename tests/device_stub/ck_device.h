/*
 * TEST-ONLY minimal stand-in for the device prelude ck_device.h (the real one, owned by the
 * runtime, lives in src/device/ and wins when present: tests/test_tensor_nvrtc.c puts src/device
 * first on NVRTC's include path). It defines, with the real prelude's meaning, only the names the
 * sample kernels use: CK_KERNEL, CK_SHARED_ARRAY_ALIGNED, ck_thread_linear, ck_sync_threads.
 */
#ifndef CK_TESTS_DEVICE_STUB_CK_DEVICE_H
#define CK_TESTS_DEVICE_STUB_CK_DEVICE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CK_KERNEL extern "C" __global__
#define CK_SHARED_ARRAY_ALIGNED(type, name, count, align)                                          \
    __shared__ __align__(align)                                                                    \
    type name[count]
#define ck_thread_linear() (threadIdx.x)
#define ck_sync_threads()  __syncthreads()
#endif

#include "ck_device_tensor.h"

#endif
