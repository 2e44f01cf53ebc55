"""Tensors of any framework as ck_tensor descriptions, and outputs allocated by that framework.

A tensor argument becomes (data pointer, ck dtype, shape, strides in elements, place) where
place is ("host", 0) for memory the CPU emulator reads (NumPy arrays, CPU torch tensors: the
emulator's "device memory" is ordinary host memory, so they are passed without a copy) or
("cuda", ordinal) for GPU memory. Objects with __dlpack__ that are neither (CuPy, JAX) are
viewed, without a copy, through torch.from_dlpack (GPU) or numpy.from_dlpack (CPU); outputs
are then torch tensors / NumPy arrays.
"""
import ctypes
import struct
import threading

import numpy as np

from ._lib import Status, fail

# ck_dtype values (include/ck/types.h)
F32, F64, F16, BF16, TF32 = 0, 1, 2, 3, 4
FP8_E4M3, FP8_E5M2, FP8_E4M3_FNUZ, FP8_E5M2_FNUZ = 5, 6, 7, 8
I8, U8, I32 = 12, 13, 14
FLOATS = (F32, F16, BF16)  # the types of softmax / norm rows

DTYPE_NAMES = {
    F32: "f32", F64: "f64", F16: "f16", BF16: "bf16", FP8_E4M3: "fp8e4m3", FP8_E5M2: "fp8e5m2",
    FP8_E4M3_FNUZ: "fp8e4m3fnuz", FP8_E5M2_FNUZ: "fp8e5m2fnuz", I8: "i8", U8: "u8", I32: "i32",
}

_NP_NAMES = {
    "float32": F32, "float64": F64, "float16": F16, "int8": I8, "uint8": U8, "int32": I32,
    # ml_dtypes' NumPy types, when installed
    "bfloat16": BF16, "float8_e4m3fn": FP8_E4M3, "float8_e5m2": FP8_E5M2,
    "float8_e4m3fnuz": FP8_E4M3_FNUZ, "float8_e5m2fnuz": FP8_E5M2_FNUZ,
}
_CK_TO_NP = {v: k for k, v in _NP_NAMES.items()}

torch = None  # set by _torch_setup when torch is importable
_TORCH_TO_CK = {}
_CK_TO_TORCH = {}


def set_torch(mod):
    global torch
    torch = mod
    pairs = [("float32", F32), ("float64", F64), ("float16", F16), ("bfloat16", BF16),
             ("int8", I8), ("uint8", U8), ("int32", I32), ("float8_e4m3fn", FP8_E4M3),
             ("float8_e5m2", FP8_E5M2), ("float8_e4m3fnuz", FP8_E4M3_FNUZ),
             ("float8_e5m2fnuz", FP8_E5M2_FNUZ)]
    for name, ck in pairs:
        t = getattr(mod, name, None)
        if t is not None:
            _TORCH_TO_CK[t] = ck
            _CK_TO_TORCH[ck] = t


HOST = ("host", 0)
_cuda_places = {}  # ordinal -> ("cuda", ordinal)
_torch_devices = {}  # place -> its torch.device, for outputs

# ck_tensor: void *data; ck_dtype dtype; int rank; int64_t shape[8]; int64_t strides[8]
TENSOR = struct.Struct("=Qii8q8q")
_PTR = struct.Struct("=Q")
_described = {}  # (dtype, shape, strides) -> the packed ck_tensor with a null pointer
_C0 = ctypes.c_char * 0


def _np_pointer(a):
    """The data pointer of a NumPy array: through the buffer protocol when the array is
    writable and contiguous (0.5 us), else its __array_interface__ (2 us: a dict per call)."""
    try:
        return ctypes.addressof(_C0.from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.__array_interface__["data"][0]
TENSOR_SIZE = TENSOR.size
_ZEROS = (0,) * 8


class Arg:
    """One tensor argument, described for ck. `obj` is the framework object (kept alive)."""

    __slots__ = ("obj", "ptr", "dtype", "shape", "strides", "place", "kind")

    def __init__(self, obj, ptr, dtype, shape, strides, place, kind):
        self.obj, self.ptr, self.dtype = obj, ptr, dtype
        self.shape, self.strides, self.place, self.kind = shape, strides, place, kind

    @property
    def rank(self):
        return len(self.shape)

    def pack_into(self, buf, offset):
        """The ck_tensor at buf[offset:] (buf: a writable memoryview of bytes). Everything but
        the pointer comes from a cache of packed descriptions (packing 19 fields each call
        cost about 1 us of the binding's few)."""
        key = (self.dtype, self.shape, self.strides)
        packed = _described.get(key)
        if packed is None:
            r = len(self.shape)
            if r > 8:
                fail(Status.INVALID_ARGUMENT,
                     f"a tensor of rank {r} was given; ck tensors have rank 0 to 8.")
            packed = TENSOR.pack(0, self.dtype, r, *self.shape, *_ZEROS[r:], *self.strides,
                                 *_ZEROS[r:])
            if len(_described) < 4096:
                _described[key] = packed
        buf[offset:offset + TENSOR_SIZE] = packed
        _PTR.pack_into(buf, offset, self.ptr)


def ck_dtype_of(dtype, what="dtype"):
    """ck dtype of a NumPy or torch dtype, or of a ck name ("bf16", "fp8e4m3", ...)."""
    if isinstance(dtype, int) and 0 <= dtype < 15:
        return dtype
    if torch is not None and isinstance(dtype, torch.dtype):
        ck = _TORCH_TO_CK.get(dtype)
        if ck is None:
            fail(Status.UNSUPPORTED, f"argument '{what}' = {dtype} has no ck equivalent; "
                 f"accepted: {', '.join(str(t) for t in _TORCH_TO_CK)}.")
        return ck
    if isinstance(dtype, str):
        from ._lib import ck_dtype_from_name, call
        out = ctypes.c_int()
        call(ck_dtype_from_name, dtype.encode(), ctypes.byref(out))
        return out.value
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    ck = _NP_NAMES.get(name)
    if ck is None:
        fail(Status.UNSUPPORTED, f"argument '{what}' = {name} has no ck equivalent; accepted "
             "NumPy types: float32, float64, float16, int8, uint8, int32 (and ml_dtypes' "
             "bfloat16 and float8 types).")
    return ck


_np_dtypes = {}  # np.dtype -> ck dtype (dtype.name is slow to compute per call)
_elem_strides = {}  # (byte strides, itemsize) -> strides in elements


def _from_numpy(a, name):
    dt = a.dtype
    ck = _np_dtypes.get(dt)
    if ck is None:
        ck = _NP_NAMES.get(dt.name)
        if ck is not None:
            _np_dtypes[dt] = ck
    if ck is None:
        fail(Status.UNSUPPORTED, f"argument '{name}' is a NumPy array of {a.dtype.name}; ck "
             "takes float32, float64, float16, int8, uint8, int32 (bfloat16/float8 through "
             "ml_dtypes).")
    key = (a.strides, dt.itemsize)
    strides = _elem_strides.get(key)
    if strides is None:
        item = dt.itemsize
        for s in a.strides:
            if s % item:
                fail(Status.INVALID_ARGUMENT, f"argument '{name}' has a byte stride {s} that "
                     f"is not a multiple of its element size {item}; ck strides count "
                     "elements.")
        strides = tuple(s // item for s in a.strides)
        if len(_elem_strides) < 4096:
            _elem_strides[key] = strides
    return Arg(a, _np_pointer(a), ck, a.shape, strides, HOST, "numpy")


def _from_torch(t, name):
    ck = _TORCH_TO_CK.get(t.dtype)
    if ck is None:
        fail(Status.UNSUPPORTED, f"argument '{name}' is a torch tensor of {t.dtype}, which "
             "ck does not take (accepted: float32, float64, float16, bfloat16, float8 types, "
             "int8, uint8, int32).")
    if t.is_cuda:  # (t.device builds a device object per call: slower than these two)
        place = _cuda_places.get(t.get_device())
        if place is None:
            place = _cuda_places[t.get_device()] = ("cuda", t.get_device())
    elif t.is_cpu:
        place = HOST
    else:
        dev = t.device
        fail(Status.UNSUPPORTED, f"argument '{name}' is on device {dev}; ck runs on CUDA GPUs "
             "and on its CPU emulator (cpu tensors).")
    return Arg(t, t.data_ptr(), ck, tuple(t.shape), tuple(t.stride()), place, "torch")


def describe(obj, name="x"):
    """The Arg of a NumPy array, torch tensor or __dlpack__ object."""
    if type(obj) is np.ndarray:
        return _from_numpy(obj, name)
    if torch is not None and type(obj) is torch.Tensor:
        return _from_torch(obj, name)
    if isinstance(obj, np.ndarray):
        return _from_numpy(obj, name)
    if torch is not None and isinstance(obj, torch.Tensor):
        return _from_torch(obj, name)
    if hasattr(obj, "__dlpack__"):
        dev_type = obj.__dlpack_device__()[0] if hasattr(obj, "__dlpack_device__") else 1
        if dev_type == 1:  # kDLCPU
            return _from_numpy(np.from_dlpack(obj), name)
        if torch is None:
            fail(Status.UNSUPPORTED, f"argument '{name}' is a DLPack tensor on device type "
                 f"{dev_type}; ck views GPU DLPack tensors through torch, which is not "
                 "installed.")
        return _from_torch(torch.utils.dlpack.from_dlpack(obj), name)
    if isinstance(obj, (list, tuple, float, int)):
        fail(Status.INVALID_ARGUMENT, f"argument '{name}' is a Python {type(obj).__name__}; "
             "ck takes NumPy arrays, torch tensors or __dlpack__ objects (e.g. "
             "numpy.asarray(...) first).")
    fail(Status.INVALID_ARGUMENT, f"argument '{name}' is a {type(obj).__name__}; ck takes "
         "NumPy arrays, torch tensors or objects with __dlpack__.")


def same_place(args, names):
    """All args on one device; returns that place."""
    place = args[0].place
    for a, n in zip(args[1:], names[1:]):
        if a.place != place:
            where = lambda p: "the CPU (emulator)" if p[0] == "host" else f"cuda:{p[1]}"
            fail(Status.INVALID_ARGUMENT, f"argument '{n}' is on {where(a.place)} but "
                 f"'{names[0]}' is on {where(place)}; every tensor of a ck call must be on "
                 "one device.")
    return place


_np_out = {}  # ck dtype -> np.dtype of outputs


def empty(like, shape, dtype):
    """A new output of `like`'s framework and device (its caching allocator for torch)."""
    if like.kind == "torch":
        tdt = _CK_TO_TORCH.get(dtype)
        if tdt is None:
            fail(Status.UNSUPPORTED, f"torch has no dtype for ck's {DTYPE_NAMES.get(dtype)}.")
        shape = tuple(shape)
        dev = _torch_devices.get(like.place)
        if dev is None:  # (t.device makes a new device object at every access)
            dev = _torch_devices[like.place] = like.obj.device
        t = torch.empty(shape, dtype=tdt, device=dev)
        return t, Arg(t, t.data_ptr(), dtype, shape, contiguous_strides(shape),
                      like.place, "torch")
    npdt = _np_out.get(dtype)
    if npdt is not None:
        a = np.empty(shape, dtype=npdt)
        return a, Arg(a, _np_pointer(a), dtype, shape,
                      contiguous_strides(shape), HOST, "numpy")
    npn = _CK_TO_NP.get(dtype)
    if npn is None:
        fail(Status.UNSUPPORTED, f"NumPy has no dtype for ck's {DTYPE_NAMES.get(dtype)}; "
             "install ml_dtypes for bfloat16 and float8 arrays.")
    try:
        npdt = np.dtype(npn)
    except TypeError:
        try:
            import ml_dtypes  # noqa: F401

            npdt = np.dtype(getattr(ml_dtypes, npn))
        except (ImportError, AttributeError):
            fail(Status.UNSUPPORTED, f"NumPy has no {npn} dtype; install ml_dtypes for "
                 "bfloat16 and float8 arrays.")
    _np_out[dtype] = npdt
    return empty(like, shape, dtype)


_packed = {}


def contiguous_strides(shape):
    st = _packed.get(shape)
    if st is None:
        st = _contiguous_strides(shape)
        if len(_packed) < 4096:
            _packed[shape] = st
    return st


def _contiguous_strides(shape):
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= max(shape[i], 1)
    return tuple(strides)


def framework_dtype(like, dtype):
    """The framework dtype object of ck dtype `dtype` for outputs like `like`."""
    if like.kind == "torch":
        return _CK_TO_TORCH[dtype]
    return np.dtype(_CK_TO_NP[dtype])


class _Packs(threading.local):
    def __init__(self):
        self.free = {}  # size -> a Pack of the calling thread, reused by its next call


_packs = _Packs()


class Pack:
    """One C buffer holding a call's tensor descriptions (and option structs): their addresses
    are what the C functions receive. Pack(size) reuses the calling thread's buffer of that
    size (a call's buffer is only read during its C call, which returns before the thread
    packs another; ck copies what it keeps)."""

    __slots__ = ("buf", "base", "mem")

    def __new__(cls, size):
        p = _packs.free.get(size)
        if p is None:
            p = object.__new__(cls)
            p.buf = ctypes.create_string_buffer(size)
            p.base = ctypes.addressof(p.buf)
            p.mem = memoryview(p.buf).cast("B")  # slices of a ctypes array copy slowly
            if len(_packs.free) < 64:
                _packs.free[size] = p
        return p

    @classmethod
    def owned(cls, size):
        """A buffer of the caller's own (a call template keeps it), not the thread's."""
        p = object.__new__(cls)
        p.buf = ctypes.create_string_buffer(size)
        p.base = ctypes.addressof(p.buf)
        p.mem = memoryview(p.buf).cast("B")
        return p

    def tensors(self, args, offset=0):
        addrs = []
        for a in args:
            if a is None:
                addrs.append(None)
                continue
            a.pack_into(self.mem, offset)
            addrs.append(self.base + offset)
            offset += TENSOR_SIZE
        return addrs
