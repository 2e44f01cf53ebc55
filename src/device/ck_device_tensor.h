/*
 * ck_device_tensor.h - tensor-core and asynchronous-copy part of the device prelude
 * (cp.async, ldmatrix/stmatrix, mma.sync, wgmma, TMA, mbarrier, setmaxnreg).
 * Placeholder: owned by the tensor-core work (see EMU_CONTRACT.md); included at the end of
 * ck_device.h.
 */
#ifndef CK_DEVICE_TENSOR_H
#define CK_DEVICE_TENSOR_H
#endif
