"""Call templates: a repeated eager call on torch tensors in the fewest steps.

A call of softmax, layer_norm / rms_norm or elementwise on contiguous torch tensors packs the
same ck_tensor descriptions and options every time except the data pointers. The general path
leaves its packed argument buffer here as a template, keyed by everything that went into it
(types, shapes, strides, device, options); a later call with the same key allocates the output
(torch.empty_like), writes the pointers into the template and calls ck -- no descriptions, no
checks that the key already implies. Templates belong to the thread that made them (each
thread writes only its own buffers). Without torch every function here is a no-op.
"""
import ctypes
import struct
import threading

from . import _lib, _runtime, _torchops

_PTR = struct.Struct("=Q")
torch = _torchops.torch
Tensor = torch.Tensor if torch is not None else None  # `type(x) is Tensor`: False without torch
_LIMIT = 1024  # templates per thread


class Template:
    """One call's argument buffer with its pointer slots: run(ptrs) writes ptrs into the slots
    (buffer offsets) and calls fn(context, *args), args made once by args_at(the buffer's
    address). `out` is what the caller allocates outputs from (shape, dtype, device), or
    None (outputs like the first input)."""

    __slots__ = ("buf", "mem", "base", "slots", "args", "fn", "place", "out", "keep")

    def __init__(self, data, slots, fn, place, args_at, out=None, keep=None):
        self.buf = ctypes.create_string_buffer(bytes(data), len(data))
        self.base = ctypes.addressof(self.buf)
        self.mem = memoryview(self.buf).cast("B")
        self.slots = slots
        self.args = tuple(args_at(self.base))
        self.fn, self.place, self.out, self.keep = fn, place, out, keep

    def run(self, ptrs):
        mem = self.mem
        for off, p in zip(self.slots, ptrs):
            _PTR.pack_into(mem, off, p)
        if self.fn(_runtime.context(self.place), *self.args):
            raise _lib.error()

    def new(self, i=0):
        """Output i, allocated by torch as recorded."""
        shape, dtype, device = self.out[i]
        return torch.empty(shape, dtype=dtype, device=device)


class _Local(threading.local):
    def __init__(self):
        self.templates = {}


_local = _Local()


def get(key):
    return _local.templates.get(key)


def put(key, template):
    t = _local.templates
    if len(t) < _LIMIT:
        t[key] = template


def clear():
    """Forget the calling thread's templates."""
    _local.templates.clear()


def where(x):
    """The device part of a template key: (is_cuda, is_cpu, ordinal), which tells CUDA, CPU
    and other devices (meta, ...) apart."""
    return (x.is_cuda, x.is_cpu, x.get_device())


if torch is not None:
    empty_like = torch.empty_like
