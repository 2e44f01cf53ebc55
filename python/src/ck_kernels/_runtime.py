"""Devices, contexts and streams behind the Python functions.

ck's objects are used by one thread at a time, so each Python thread gets its own: one ck
device per place (the emulator, or CUDA ordinal N, whose primary context ck_device_open
retains: the context of the CUDA runtime, which PyTorch and CuPy use), and one ck context per
(place, stream). On a GPU the stream is the caller's: torch.cuda.current_stream(device), wrapped
with ck_stream_wrap, so ck's kernels are ordered with torch's work with no synchronization.
One context per stream also keeps each context's workspace in the order of its own stream. A
context keeps the kernels it built, so a repeated call does no generation or compilation.
"""
import ctypes
import threading

from . import _lib
from ._lib import call

BACKEND_CUDA, BACKEND_HOST = 1, 2

_local = threading.local()


def _state():
    s = getattr(_local, "s", None)
    if s is None:
        s = _local.s = {"devices": {}, "contexts": {}}
    return s


def _device(place):
    devs = _state()["devices"]
    d = devs.get(place)
    if d is None:
        ptr = ctypes.c_void_p()
        backend = BACKEND_HOST if place[0] == "host" else BACKEND_CUDA
        call(_lib.ck_device_open, backend, place[1], ctypes.byref(ptr))
        d = devs[place] = ptr.value
    return d


_raw_stream = None


def set_stream_getter(fn):
    """fn(ordinal) -> the current CUstream handle (int) of the caller's framework."""
    global _raw_stream
    _raw_stream = fn


def context(place):
    """The ck context (address) for work on `place`, on the caller's current stream there."""
    stream = _raw_stream(place[1]) if place[0] == "cuda" and _raw_stream else 0
    key = (place, stream)
    ctxs = _state()["contexts"]
    c = ctxs.get(key)
    if c is None:
        dev = _device(place)
        ptr = ctypes.c_void_p()
        call(_lib.ck_context_create, dev, ctypes.byref(ptr))
        c = ptr.value
        if place[0] == "cuda":
            s = ctypes.c_void_p()
            call(_lib.ck_stream_wrap, dev, stream or None, ctypes.byref(s))
            _lib.ck_context_set_stream(c, s)
        ctxs[key] = c
    return c


def synchronize(place=("host", 0)):
    """Wait for ck's work on `place` (the current stream's context)."""
    call(_lib.ck_context_synchronize, context(place))


def kernel_count(place=("host", 0)):
    """Kernels built by the calling thread's context for `place` on the current stream."""
    return _lib.ck_context_kernel_count(context(place))
