"""Pointer-array batched GEMM (ck/gemm.h ck_gemm_ptr_array_*, docs/ops-gemm.md "Pointer-array
batches"):

    out[i] = act(alpha * a[i] @ b[i] + beta * c[i] + bias[i])      for i < len(a)

products of one shape whose matrices lie anywhere (cuBLAS's cublasGemmBatchedEx): one launch of
ck's grouped kernel reading the products' pointers from arrays in device memory. Entries may
repeat (one weight for every product, or an activation used twice). The plan (shape, types,
orders, leading dimensions, epilogue) is cached per context; a call packs the pointer arrays,
checks them on the host (ck_gemm_ptr_array_check: no output over another or over an input) and
launches.
"""
import ctypes
import struct

import numpy as np

from . import _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import describe, empty, same_place
from .gemm import (_ARGS, _CANDIDATE, _DEFAULT_D, _NO_C, _NO_EXTRA_PTRS, _NO_EXTRAS, _NO_QUANT,
                   _PROBLEM, ACTIVATIONS, _bias_mode, _candidate, _matrix)

__all__ = ["gemm_ptr_array"]

_ARRAYS = struct.Struct("=5Q")  # ck_gemm_ptr_arrays: a, b, c, d, bias
_OP = "gemm_ptr_array"


def _plans():
    """The calling thread's pointer-array plans: problem key (context first) -> plan."""
    s = _runtime._state()
    p = s.get("gemm_ptr_array_plans")
    if p is None:
        p = s["gemm_ptr_array_plans"] = {}
    return p


def clear_plans():
    """Destroy the calling thread's cached pointer-array plans."""
    plans = _plans()
    for plan in plans.values():
        _lib.ck_gemm_ptr_array_plan_destroy(plan)
    plans.clear()


def _list(x, name, count):
    """x as a list of count entries (None: None)."""
    if x is None:
        return None
    if not isinstance(x, (list, tuple)):
        fail(Status.INVALID_ARGUMENT, f"{_OP}: argument '{name}' must be a list (or tuple) of "
             f"matrices, one per product; got a {type(x).__name__}.")
    if count is not None and len(x) != count:
        fail(Status.INVALID_ARGUMENT, f"{_OP}: '{name}' has {len(x)} entries but 'a' has "
             f"{count}; every list needs one entry per product.")
    return list(x)


def _same_layout(args, name, rows, cols):
    """(dtype, order, ld) shared by every matrix of a list (the plan's one problem)."""
    first = None
    for i, x in enumerate(args):
        if x.rank != 2 or tuple(x.shape) != (rows, cols):
            fail(Status.INVALID_ARGUMENT, f"{_OP}: {name}[{i}] has shape {tuple(x.shape)}; "
                 f"every {name}[i] must be a ({rows}, {cols}) matrix.")
        lay = (x.dtype,) + _matrix(x, rows, cols, f"{name}[{i}]", _OP)
        if first is None:
            first = lay
        elif lay != first:
            fail(Status.INVALID_ARGUMENT, f"{_OP}: {name}[{i}] has strides {tuple(x.strides)} "
                 f"and type {_tensor.DTYPE_NAMES.get(x.dtype)}; every {name}[i] must have "
                 f"{name}[0]'s type, order and leading dimension (one problem for all).")
    return first


def _pointer_array(ptrs, like):
    """(device array object, its address) of the pointers, on like's device."""
    if like.kind == "torch" and like.place[0] != "host":
        t = _torchops.torch.tensor(ptrs, dtype=_torchops.torch.int64, device=like.obj.device)
        return t, t.data_ptr()
    a = np.array(ptrs, dtype=np.uint64)
    return a, a.ctypes.data


def _core(a, b, c=None, alpha=1.0, beta=None, bias=None, activation=None, out_dtype=None):
    a = _list(a, "a", None)
    if a is None:
        fail(Status.INVALID_ARGUMENT, f"{_OP}: argument 'a' must be a list of matrices.")
    count = len(a)
    b, c, bias = _list(b, "b", count), _list(c, "c", count), _list(bias, "bias", count)
    if b is None:
        fail(Status.INVALID_ARGUMENT, f"{_OP}: argument 'b' must be a list of matrices.")
    if count == 0:
        return []
    aa = [describe(x, f"a[{i}]") for i, x in enumerate(a)]
    ba = [describe(x, f"b[{i}]") for i, x in enumerate(b)]
    ca = [describe(x, f"c[{i}]") for i, x in enumerate(c)] if c is not None else None
    bs = [describe(x, f"bias[{i}]") for i, x in enumerate(bias)] if bias is not None else None
    every = aa + ba + (ca or []) + (bs or [])
    place = same_place(every, ["a[0]"] * len(every))
    if aa[0].rank != 2 or ba[0].rank != 2 or aa[0].shape[1] != ba[0].shape[0]:
        fail(Status.INVALID_ARGUMENT, f"{_OP}: a[0] {tuple(aa[0].shape)} and b[0] "
             f"{tuple(ba[0].shape)} are not matrices that chain.")
    (m, k), n = aa[0].shape, ba[0].shape[1]
    if not m or not n or not k:
        fail(Status.INVALID_ARGUMENT, f"{_OP}: the products are {m} x {n} x {k}; accepted: "
             "M, N, K >= 1.")
    ad, ao, ald = _same_layout(aa, "a", m, k)
    bd, bo, bld = _same_layout(ba, "b", k, n)
    dd = _DEFAULT_D.get(ad, _tensor.F32) if out_dtype is None else \
        _tensor.ck_dtype_of(out_dtype, "out_dtype")
    act = ACTIVATIONS.get(activation, -1) if isinstance(activation, (str, type(None))) else -1
    if act < 0:
        fail(Status.INVALID_ARGUMENT, f"{_OP}: activation {activation!r}; accepted: "
             f"{sorted(x for x in ACTIVATIONS if x)}.")
    if beta is None:
        beta = 1.0 if c is not None else 0.0
    cd, co, cld = (_NO_C, 0, 0) if ca is None else _same_layout(ca, "c", m, n)
    bias_code, bias_dtype = 0, 0
    if bs is not None:
        bias_code = _bias_mode(bs[0], m, n, None, _OP)
        for i, x in enumerate(bs):
            if tuple(x.shape) != tuple(bs[0].shape) or x.dtype != bs[0].dtype:
                fail(Status.INVALID_ARGUMENT, f"{_OP}: bias[{i}] has shape {tuple(x.shape)}; "
                     f"every bias[i] must have bias[0]'s shape and type.")
        bias_dtype = bs[0].dtype
    ctx = _runtime.context(place)
    key = (ctx, m, n, k, ad, ao, ald, bd, bo, bld, cd, co, cld, dd, bias_code, bias_dtype, act)
    plans = _plans()
    plan = plans.get(key)
    if plan is None:
        buf = ctypes.create_string_buffer(_PROBLEM.pack(
            m, n, k, ad, ao, ald, 0, bd, bo, bld, 0, cd, co, cld, 0, dd, 0, n, 0, 0,
            bias_code, bias_dtype, act, 0, 1, 0, *_NO_EXTRAS, *_NO_QUANT))
        out = ctypes.c_void_p()
        call(_lib.ck_gemm_ptr_array_plan_create, ctx, buf, None, ctypes.byref(out))
        plan = plans[key] = out.value
    outs = [empty(aa[0], (m, n), dd) for _ in range(count)]
    ptrs = [[x.ptr for x in aa], [x.ptr for x in ba],
            [x.ptr for x in ca] if ca is not None else None, [o[1].ptr for o in outs],
            [x.ptr for x in bs] if bs is not None else None]
    args = _ARGS.pack(0, 0, 0, 0, 0, float(alpha), float(beta), 1.0, 1.0, 1.0, *_NO_EXTRA_PTRS,
                      0, 0, 0)
    host = [np.array(p, dtype=np.uint64) if p is not None else None for p in ptrs]
    hbuf = _ARRAYS.pack(*(h.ctypes.data if h is not None else 0 for h in host))
    call(_lib.ck_gemm_ptr_array_check, plan, hbuf, count, args)
    dev = [_pointer_array(p, aa[0]) if p is not None else (None, 0) for p in ptrs]
    dbuf = _ARRAYS.pack(*(d[1] for d in dev))
    call(_lib.ck_gemm_ptr_array_execute, plan, dbuf, count, args)
    return [o[0] for o in outs]


def plan_instance(a, b, **kw):
    """The instance ck chooses for gemm_ptr_array(a, b, **kw), as a dict (id, name, family,
    ...); runs the products once."""
    _core(a, b, **kw)
    plan = list(_plans().values())[-1]
    buf = ctypes.create_string_buffer(_CANDIDATE.size)
    call(_lib.ck_gemm_ptr_array_plan_instance, plan, buf)
    return _candidate(buf.raw)


def _impl(a, b, c, alpha, beta, bias, activation, out_dtype):
    return _core(a, b, c, alpha, beta, bias, activation or None, out_dtype)


def _fake(a, b, c, alpha, beta, bias, activation, out_dtype):
    if out_dtype is None:
        dd = _DEFAULT_D.get(_tensor._TORCH_TO_CK.get(a[0].dtype), _tensor.F32)
        out_dtype = _tensor._CK_TO_TORCH[dd]
    return [x.new_empty((x.shape[0], b[0].shape[1]), dtype=out_dtype) for x in a]


_op = _torchops.op(
    "gemm_ptr_array(Tensor[] a, Tensor[] b, Tensor[]? c, float alpha, float beta, "
    "Tensor[]? bias, str activation, ScalarType? out_dtype) -> Tensor[]", _impl, _fake)


def gemm_ptr_array(a, b, c=None, *, alpha=1.0, beta=None, bias=None, activation=None,
                   out_dtype=None):
    """[act(alpha * a[i] @ b[i] + beta * c[i] + bias[i]) for i], one launch (no autograd).

    a: a list of [M, K] matrices, b of [K, N] (one entry per product; entries may be the same
    tensor, e.g. one weight for all), each list's matrices of one type, order (row-major or a
    transposed view) and leading dimension; f16, bf16, f32 (TF32), fp8, int8 as ck.gemm takes
    them. c (optional): a list of [M, N] (out's type or float32); beta defaults to 1 with c,
    else 0. bias (optional): a list of (N,) / (1, N) (per column) or (M, 1) (per row) vectors.
    activation as ck.gemm's. Returns a list of new [M, N] outputs (out_dtype: default as
    ck.gemm's). The lists must have equal lengths; an empty list gives []."""
    if _op is not None and isinstance(a, (list, tuple)) and a and _torchops.is_torch(a[0]) and \
            not _torchops.direct(*a, *(b or ()), *(c or ()), *(bias or ())):
        if beta is None:
            beta = 1.0 if c is not None else 0.0
        return _op(list(a), list(b), list(c) if c is not None else None, float(alpha),
                   float(beta), list(bias) if bias is not None else None, activation or "",
                   out_dtype)
    return _core(a, b, c, alpha, beta, bias, activation, out_dtype)
