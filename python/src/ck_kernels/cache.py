"""The kernel cache: ck compiles each generated kernel once and keeps the binary on disk
($CK_CACHE_DIR, default ~/.cache/ck); each thread's contexts also keep the kernels they built in
memory (runtime.kernel_count)."""
import ctypes
import struct
from collections import namedtuple

from . import _lib
from ._lib import call

Entry = namedtuple("Entry", "file kind bytes mtime valid")
_ENTRY = struct.Struct("=256s16sQqi4x")  # ck_cache_entry


def directory():
    """The cache directory ($CK_CACHE_DIR, else $XDG_CACHE_HOME/ck, else ~/.cache/ck)."""
    buf = ctypes.create_string_buffer(4096)
    call(_lib.ck_cache_dir, buf, 4096)
    return buf.value.decode()


def entries():
    """The compiled kernels on disk: Entry(file, kind ('cubin' or 'host-so'), bytes, mtime,
    valid)."""
    ptr, count = ctypes.c_void_p(), ctypes.c_int()
    call(_lib.ck_cache_list, ctypes.byref(ptr), ctypes.byref(count))
    out = []
    try:
        raw = ctypes.string_at(ptr.value, _ENTRY.size * count.value) if count.value else b""
        for i in range(count.value):
            f, k, b, m, v = _ENTRY.unpack_from(raw, i * _ENTRY.size)
            out.append(Entry(f.split(b"\0", 1)[0].decode(), k.split(b"\0", 1)[0].decode(),
                             b, m, bool(v)))
    finally:
        _lib.libc_free(ptr.value)
    return out


def clear():
    """Delete every compiled kernel on disk; returns how many were removed."""
    n = ctypes.c_int()
    call(_lib.ck_cache_clear, ctypes.byref(n))
    return n.value


def gemm_plan_count():
    """GEMM plans the calling thread keeps (one per distinct problem and context): a repeated
    ck.gemm / ck.matmul of the same problem reuses its plan and does no generation."""
    from .gemm import plan_count

    return plan_count()


def clear_gemm_plans():
    """Destroy the calling thread's GEMM plans (the kernels stay cached: a later call re-plans
    without compiling)."""
    from .gemm import clear_plans
    from .gemm_ptr_array import clear_plans as clear_ptr_array_plans

    clear_plans()
    clear_ptr_array_plans()
