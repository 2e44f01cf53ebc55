#!/usr/bin/env python3
"""Host overhead of ck_kernels per call for a cached kernel (a cached plan for matmul and
gemm): the Python binding's own time
(argument inspection, descriptions, context lookup, output allocation, the ctypes call) with
the C operation replaced by a C function that returns at once, so the kernel's run does not
hide it. Prints microseconds per call (median of 7 runs of N calls).

    PYTHONPATH=python/src CK_KERNELS_LIB=build/lib/libck.so python3 bench/python_overhead.py

On a GPU the same script also times the real call with torch CUDA tensors (launch included)
against the equivalent torch function."""
import ctypes
import statistics
import sys
import timeit

import numpy as np

import ck_kernels as ck
from ck_kernels import _lib

N = 20000


def us(fn, n=N):
    fn()
    return statistics.median(timeit.repeat(fn, number=n, repeat=7)) / n * 1e6


def noop_like(name, nargs):
    """A C function that ignores its arguments and returns 0 (CK_SUCCESS): libc's sched_yield
    (a system call of a fraction of a microsecond, so the figures are slightly pessimistic),
    typed like the operation `name` it replaces."""
    return ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * nargs)(
        ctypes.cast(ctypes.CDLL(None).sched_yield, ctypes.c_void_p).value)


rows = []
x = np.random.default_rng(0).standard_normal((64, 1024)).astype(np.float32)
w = np.ones(1024, np.float32)
ck.softmax(x), ck.rms_norm(x, (1024,), w), ck.elementwise("silu(x0)", x)  # build the kernels
xa = x[:, :64].astype(np.float16)
wb = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float16)
bias = np.ones(64, np.float32)
ck.matmul(xa, wb), ck.matmul(xa, wb.T), ck.gemm(xa, wb, bias=bias, activation="silu")
rows.append(("softmax numpy, emulator kernel included", us(lambda: ck.softmax(x), 200)))

saved = {n: getattr(_lib, n) for n in ("ck_softmax", "ck_norm_forward", "ck_elementwise")}
_lib.ck_softmax = noop_like("ck_softmax", 4)
_lib.ck_norm_forward = noop_like("ck_norm_forward", 2)
_lib.ck_elementwise = noop_like("ck_elementwise", 5)
saved["ck_gemm_plan_execute"] = _lib.ck_gemm_plan_execute
_lib.ck_gemm_plan_execute = noop_like("ck_gemm_plan_execute", 2)
from ck_kernels import _fast  # noqa: E402

_fast.clear()  # call templates made before the swap would call the real functions
bare = _lib.ck_softmax
a = ctypes.c_void_p(1)
rows.append(("bare ctypes call (floor)", us(lambda: bare(a, a, a, a))))
out = np.empty_like(x)
rows.append(("ck.softmax(numpy, out=)", us(lambda: ck.softmax(x, out=out))))
rows.append(("ck.softmax(numpy)", us(lambda: ck.softmax(x))))
rows.append(("ck.rms_norm(numpy)", us(lambda: ck.rms_norm(x, (1024,), w, 1e-6))))
rows.append(("ck.elementwise('silu(x0)', numpy)", us(lambda: ck.elementwise("silu(x0)", x))))
rows.append(("ck.matmul(numpy) (cached plan)", us(lambda: ck.matmul(xa, wb))))
rows.append(("ck.matmul(numpy, b.T view)", us(lambda: ck.matmul(xa, wb.T))))
rows.append(("ck.gemm(numpy, bias=, activation='silu')",
             us(lambda: ck.gemm(xa, wb, bias=bias, activation="silu"))))
try:
    import torch
except ImportError:
    torch = None
if torch is not None and hasattr(torch.ops, "ck"):
    t = torch.from_numpy(x)
    tw = torch.from_numpy(w)
    with torch.no_grad():
        rows.append(("ck.softmax(torch cpu), eager no-grad (direct)", us(lambda: ck.softmax(t))))
        rows.append(("ck.rms_norm(torch cpu), eager no-grad (direct)", us(lambda: ck.rms_norm(t, (1024,), tw,
                                                                               1e-6))))
        rows.append(("torch.empty_like alone (allocation floor)", us(lambda: torch.empty_like(t))))
        ta, tb = torch.from_numpy(xa), torch.from_numpy(wb)
        ck.matmul(ta, tb), ck.matmul(ta, tb.t())
        rows.append(("ck.matmul(torch cpu), eager no-grad (direct)",
                     us(lambda: ck.matmul(ta, tb))))
        rows.append(("ck.matmul(torch cpu, b.t()), eager no-grad",
                     us(lambda: ck.matmul(ta, tb.t()))))
    tg = t.clone().requires_grad_()
    rows.append(("ck.softmax(torch cpu, requires_grad): torch.ops.ck + autograd",
                 us(lambda: ck.softmax(tg), 2000)))
    tag = torch.from_numpy(xa).clone().requires_grad_()
    rows.append(("ck.matmul(torch cpu, requires_grad): torch.ops.ck + autograd",
                 us(lambda: ck.matmul(tag, tb), 2000)))
for n, f in saved.items():
    setattr(_lib, n, f)
_fast.clear()
if torch is not None and torch.cuda.is_available():
    tc = torch.randn(64, 1024, device="cuda")
    ck.softmax(tc)
    torch.cuda.synchronize()
    with torch.no_grad():
        rows.append(("GPU: ck.softmax(torch cuda), launch included", us(lambda: ck.softmax(tc))))
        rows.append(("GPU: torch.softmax(torch cuda)", us(lambda: torch.softmax(tc, -1))))
        # the C API's own time for the same call: ck_softmax through ctypes with the
        # descriptions packed once (the ctypes floor included)
        from ck_kernels import _runtime, _tensor
        xa_, ya_ = _tensor.describe(tc, "x"), _tensor.describe(torch.empty_like(tc), "y")
        pk = _tensor.Pack(3 * _tensor.TENSOR_SIZE + 24)
        xp_, yp_, _ = pk.tensors([xa_, ya_, None])
        import struct as _st
        _st.Struct("=ifQi4x").pack_into(pk.buf, 3 * _tensor.TENSOR_SIZE, 0, 1.0, 0, 0)
        ctx_ = _runtime.context(xa_.place)
        opt_ = pk.base + 3 * _tensor.TENSOR_SIZE
        fn_ = _lib.ck_softmax
        rows.append(("GPU: C API ck_softmax (ctypes, packed once)",
                     us(lambda: fn_(ctx_, xp_, yp_, opt_))))
        ha = torch.randn(64, 64, device="cuda", dtype=torch.float16)
        hb = torch.randn(64, 64, device="cuda", dtype=torch.float16)
        hbias = torch.randn(64, device="cuda", dtype=torch.float16)
        ck.matmul(ha, hb), ck.gemm(ha, hb, bias=hbias, activation="silu")
        torch.cuda.synchronize()
        rows.append(("GPU: ck.matmul(torch cuda f16 64^3), launch included",
                     us(lambda: ck.matmul(ha, hb))))
        rows.append(("GPU: torch.matmul(torch cuda f16 64^3)", us(lambda: torch.matmul(ha, hb))))
        _gm = sys.modules["ck_kernels.gemm"]  # (ck_kernels.gemm is also the function)
        cctx = _runtime.context(("cuda", ha.get_device()))
        plan_ = [v for k_, v in _gm._plans().items()  # ha @ hb's: no bias, no activation
                 if k_[0] == "ba" and k_[1] == cctx and k_[2:5] == (64, 64, 64) and
                 k_[13] == 0 and k_[14] == 0][0]
        hd = torch.empty(64, 64, device="cuda", dtype=torch.float16)
        args_ = _gm._ARGS.pack(ha.data_ptr(), hb.data_ptr(), 0, hd.data_ptr(), 0, 1.0, 0.0,
                               1.0, 1.0, 1.0, 0, 0, 0, 0, 0, 0, 0)
        ex_ = _lib.ck_gemm_plan_execute
        rows.append(("GPU: C API ck_gemm_plan_execute (ctypes, packed once)",
                     us(lambda: ex_(plan_, args_))))
        rows.append(("GPU: ck.gemm(bias, silu), launch included",
                     us(lambda: ck.gemm(ha, hb, bias=hbias, activation="silu"))))
        rows.append(("GPU: torch.nn.functional.silu(torch.addmm(bias, a, b))",
                     us(lambda: torch.nn.functional.silu(torch.addmm(hbias, ha, hb)))))
    torch.cuda.synchronize()

print(f"{'path':58s} us/call")
for name, v in rows:
    print(f"{name:58s} {v:7.2f}")
sys.stdout.flush()
