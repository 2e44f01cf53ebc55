#!/usr/bin/env python3
"""The Python binding's own time per call of every function, for a cached kernel: each C
operation ck_kernels calls is replaced by a C function that returns at once (libc's
sched_yield, a fraction of a microsecond), so what remains is argument inspection, descriptions,
the context and stream lookup, the output allocation (the framework's allocator) and the ctypes
call. Inputs: NumPy arrays, torch CPU tensors and, with a GPU, torch CUDA tensors (where the
stream lookup and torch's CUDA allocator are part of it). Prints microseconds per call (median
of 5 runs of N calls).

    PYTHONPATH=python/src CK_KERNELS_LIB=build/lib/libck.so python3 bench/python_binding.py
"""
import ctypes
import statistics
import sys
import timeit

import numpy as np

import ck_kernels as ck
from ck_kernels import _fast, _lib

N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 5000
NUMPY = "--no-numpy" not in sys.argv  # (on a GPU host: skips building the emulator's kernels)
OPS = ["ck_softmax", "ck_topk_softmax", "ck_norm_forward", "ck_reduce", "ck_permute", "ck_cast",
       "ck_elementwise", "ck_gemm_plan_execute", "ck_attention_plan_execute"]


def us(fn, n=N):
    fn()
    return statistics.median(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


def stub(name):
    f = getattr(_lib, name)
    nargs = len(f.argtypes or ())
    g = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * nargs)(
        ctypes.cast(ctypes.CDLL(None).sched_yield, ctypes.c_void_p).value)
    return g


def calls(xp, lib):
    """(name, fn) of every function on inputs made by xp (a NumPy- or torch-like maker)."""
    x = xp.randn(64, 1024)
    w = xp.randn(1024)
    h = xp.randn(64, 64, dtype="f16")
    hb = xp.randn(64, 64, dtype="f16")
    bias = xp.randn(64, dtype="f16")
    logits = xp.randn(64, 128)
    q = xp.randn(1, 64, 2, 64, dtype="f16")
    out = [
        ("softmax", lambda: ck.softmax(x)),
        ("log_softmax", lambda: ck.log_softmax(x)),
        ("layer_norm(w, b)", lambda: ck.layer_norm(x, (1024,), w, w)),
        ("rms_norm(w)", lambda: ck.rms_norm(x, (1024,), w, 1e-6)),
        ("sum(dim=-1)", lambda: ck.sum(x, -1)),
        ("permute((1, 0))", lambda: ck.permute(x, (1, 0))),
        ("cast(f16)", lambda: ck.cast(x, xp.f16)),
        ("elementwise('silu(x0)')", lambda: ck.elementwise("silu(x0)", x)),
        ("elementwise('x0 * x1', 2 inputs)", lambda: ck.elementwise("x0 * x1", x, x)),
        ("topk_softmax(k=8)", lambda: ck.topk_softmax(logits, 8)),
        ("matmul 64^3 f16", lambda: ck.matmul(h, hb)),
        ("gemm(bias, silu)", lambda: ck.gemm(h, hb, bias=bias, activation="silu")),
        ("scaled_dot_product_attention", lambda: ck.scaled_dot_product_attention(q, q, q)),
    ]
    if hasattr(ck, "conv2d") and xp.name != "numpy":
        img = xp.randn(2, 16, 8, 8, dtype="f16")
        wt = xp.randn(16, 16, 3, 3, dtype="f16")
        out.append(("conv2d 3x3", lambda: ck.conv2d(img, wt, padding=1)))
        cl = img.contiguous(memory_format=xp.torch.channels_last)  # read in place
        out.append(("max_pool2d 3x3 (channels_last)", lambda: ck.max_pool2d(cl, 3, 2, 1)))
    return out


class NumpyMaker:
    name = "numpy"
    f16 = np.float16

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def randn(self, *shape, dtype="f32"):
        return self.rng.standard_normal(shape).astype(np.float16 if dtype == "f16" else
                                                      np.float32)


class TorchMaker:
    def __init__(self, torch, dev):
        self.torch, self.dev, self.name = torch, dev, "torch " + dev
        self.f16 = torch.float16

    def randn(self, *shape, dtype="f32"):
        t = self.torch
        return t.randn(*shape, device=self.dev).to(t.float16 if dtype == "f16" else t.float32)


# C functions the operation modules bound themselves (module, attribute)
PRIVATE = [("ck_kernels.conv", "_plan_execute"), ("ck_kernels.pool", "_forward")]


def measure(maker):
    rows = []
    fns = calls(maker, _lib)
    for name, fn in fns:  # the real calls first: kernels built, plans made
        fn()
    saved = [(_lib, n, getattr(_lib, n)) for n in OPS]
    saved += [(sys.modules[m], a, getattr(sys.modules[m], a)) for m, a in PRIVATE
              if m in sys.modules and hasattr(sys.modules[m], a)]
    for mod, n, f in saved:
        g = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * len(f.argtypes or ()))(
            ctypes.cast(ctypes.CDLL(None).sched_yield, ctypes.c_void_p).value)
        setattr(mod, n, g)
    _fast.clear()  # call templates made before the swap hold the real functions
    try:
        for name, fn in fns:
            rows.append((f"{maker.name}: ck.{name}", us(fn)))
    finally:
        for mod, n, f in saved:
            setattr(mod, n, f)
        _fast.clear()
    return rows


def main():
    a = ctypes.c_void_p(1)
    floor = stub("ck_softmax")
    rows = [("bare ctypes call of 4 pointers (floor)", us(lambda: floor(a, a, a, a)))]
    makers = [NumpyMaker()] if NUMPY else []
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and hasattr(torch.ops, "ck"):
        makers.append(TorchMaker(torch, "cpu"))
        if torch.cuda.is_available():
            makers.append(TorchMaker(torch, "cuda"))
    ctx = torch.no_grad() if torch is not None else None
    if ctx:
        ctx.__enter__()
    for m in makers:
        rows += measure(m)
        if torch is not None and m.name == "torch cuda":
            torch.cuda.synchronize()
    print(f"{'binding time per call (C operation stubbed)':58s} us/call")
    for name, v in rows:
        print(f"{name:58s} {v:7.2f}")


if __name__ == "__main__":
    main()
