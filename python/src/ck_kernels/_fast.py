"""Call templates: a repeated eager call on torch tensors in the fewest steps.

The first call of a function on given tensors (types, shapes, strides, devices), options and
current stream takes the general path, which checks everything, finds the context, packs the
ck_tensor descriptions and calls ck. It then leaves a *template* here: the C function, its
argument values (context and buffer addresses), the packed buffer with the slots where the
data pointers go, the alignment each input's pointer needs, and how the outputs are
allocated. A later call with the same key (`key(opts, *tensors)`) reads the data pointers,
allocates the outputs (torch's allocator), writes the pointers into the buffer and calls ck:
`call(opts, *tensors)` returns the output(s), or None when there is no template (or the call is
not a plain eager one: a subclass, a dispatch mode, a tensor that needs a gradient), and the
caller takes the general path. The caller checks `_torchops.is_compiling()` first, so traced
code (torch.compile) never sees these functions.

`key` and `call` are written twice: in C (the extension `_ckfast`, built with the package where
Python's headers are found; a few microseconds less per call) and here in Python (used
without it, or with CK_KERNELS_NO_EXT=1). Both read the same template layout (a list):

    [fn address, args (bytes: native uint64 each), buffer address,
     slots (bytes: int32 per input then per output: an offset into the buffer, or -2 - k
     for argument k, or -1 for none),
     align (bytes: int32 per input), outs (None: empty_like(first input); or a tuple of
     (args, kwargs) for torch.empty per output),
     ctypes function, args tuple, slots tuple, align tuple, what must stay alive]

Templates belong to the thread that made them (a thread writes only its own buffers).
Without torch every function here is a no-op.
"""
import ctypes
import importlib.machinery
import importlib.util
import os
import struct
import threading

from . import _lib, _torchops

torch = _torchops.torch
is_compiling = _torchops.is_compiling
Tensor = torch.Tensor if torch is not None else None  # `type(x) is Tensor`: False without torch
_LIMIT = 1024  # templates per thread
_PTR = struct.Struct("=Q")


class _Local(threading.local):
    def __init__(self):
        self.templates = {}


_local = _Local()


def template(fn, args, buf, slots, align=None, outs=None, keep=None):
    """A template for the C function `fn` (a ctypes function of libck) called with `args`
    (ints: addresses, the context), whose data pointers go at byte offsets `slots` of the
    ctypes buffer `buf` (inputs, then outputs; arg(k): into argument k; -1: not written). align[i]: the alignment input
    i's pointer needs (default none). outs: see the module's docstring."""
    addr = ctypes.cast(fn, ctypes.c_void_p).value
    n_in = len(slots) - (1 if outs is None else len(outs))
    align = tuple(align) if align is not None else (1,) * n_in
    args, slots = tuple(int(a) for a in args), tuple(slots)
    return [addr, struct.pack(f"={len(args)}Q", *args), ctypes.addressof(buf),
            struct.pack(f"={len(slots)}i", *slots), struct.pack(f"={len(align)}i", *align), outs,
            fn, args, slots, align, (buf, keep)]


def arg(k):
    """The slot of a data pointer passed as argument k of the C function."""
    return -2 - k


def output(shape, dtype, device):
    """An output spec of a template: torch.empty(shape, dtype=dtype, device=device)."""
    return ((tuple(shape),), {"dtype": dtype, "device": device})


def outputs(x, ys):
    """The output specs that allocate outputs like ys (which the general path allocated:
    contiguous): None (empty_like(x)) where that gives the same, else torch.empty's."""
    if len(ys) == 1 and ys[0].dtype == x.dtype and ys[0].shape == x.shape and \
            x.is_contiguous():
        return None
    return tuple(output(y.shape, y.dtype, y.device) for y in ys)


def record(opts, ts, ys, fn, args, buf, slots, align=None, keep=None):
    """After the general path's call fn(*args) on the torch tensors ts (inputs, in the order a
    later `call(opts, *ts)` passes them) with outputs ys, whose descriptions are in the ctypes
    buffer buf (its own: Pack.owned(...).buf, not the thread's Pack) with the data pointers at
    `slots` (inputs, then outputs): keep it as the template of later calls (keeping `keep`
    alive with it: what args point to)."""
    if torch is None or not _torchops.direct(*ts) or any(type(t) is not Tensor for t in ts):
        return
    put(key(opts, *ts), template(fn, args, buf, slots, align, outputs(ts[0], ys), keep))


def get(key):
    return _local.templates.get(key)


def put(key, t):
    table = _local.templates
    if len(table) < _LIMIT:
        table[key] = t


def clear():
    """Forget the calling thread's templates."""
    _local.templates.clear()


# ---- the Python version of key / call ------------------------------------------------------
def _stream(x):
    return _torchops.raw_stream(x.get_device()) if x.is_cuda else 0


def py_key(opts, *ts):
    """The template key of a call: (opts, the current stream, each tensor's dtype, shape,
    strides and device)."""
    k = [opts, _stream(ts[0]) if ts else 0]
    for x in ts:
        k += (x.dtype, x.shape, x.stride(), x.device)
    return tuple(k)


def py_call(opts, *ts):
    """The outputs of the recorded call on these tensors, or None (no template / not plain)."""
    if torch is None or not _torchops.direct(*ts):
        return None
    t = _local.templates.get(py_key(opts, *ts))
    if t is None:
        return None
    ptrs = [x.data_ptr() for x in ts]
    for p, a in zip(ptrs, t[9]):
        if a > 1 and p % a:
            return None
    outs = t[5]
    ys = [torch.empty_like(ts[0])] if outs is None else \
        [torch.empty(*a, **kw) for a, kw in outs]
    ptrs += [y.data_ptr() for y in ys]
    mem = memoryview(t[10][0]).cast("B")
    args = t[7]
    for off, p in zip(t[8], ptrs):
        if off >= 0:
            _PTR.pack_into(mem, off, p)
        elif off <= -2:
            args = args[:-2 - off] + (p,) + args[-1 - off:]
    if t[6](*args):
        raise _lib.error()
    return ys[0] if len(ys) == 1 else tuple(ys)


key, call = py_key, py_call


# ---- the C version, where it was built -----------------------------------------------------
def _load_ext():
    if torch is None or os.environ.get("CK_KERNELS_NO_EXT"):
        return None
    path = os.environ.get("CK_KERNELS_EXT")  # a build tree's extension (developing ck)
    try:
        if not path:
            from . import _ckfast  # the wheel's
            return _ckfast
        loader = importlib.machinery.ExtensionFileLoader("ck_kernels._ckfast", path)
        spec = importlib.util.spec_from_file_location("ck_kernels._ckfast", path, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        return mod
    except ImportError:
        return None


ext = _load_ext()
if ext is not None:
    ext.setup(_local, torch.Tensor, torch.is_grad_enabled, _torchops.dispatch_stack_len,
              _torchops.raw_stream,
              torch.empty_like, torch.empty, _lib.error)
    key, call = ext.key, ext.call  # noqa: F811


def where(x):
    """The device part of a key (is_cuda, is_cpu, ordinal), for records kept outside the
    templates."""
    return (x.is_cuda, x.is_cpu, x.get_device())
