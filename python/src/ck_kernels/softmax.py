"""softmax, log_softmax (last dimension; scale, additive mask, causal mask) and topk_softmax.

Backward: ck has no softmax backward kernel; the gradient is computed with ck's elementwise and
reduce operations: g = y * dy, s = sum(g, -1), dx = scale * (g - y * s) for softmax and
dx = scale * (dy - exp(y) * sum(dy, -1)) for log_softmax.
"""
import ctypes
import struct

from . import _fast, _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import TENSOR_SIZE, Pack, ck_dtype_of, describe, empty, same_place

# ck_softmax_options: int log; float scale; const ck_tensor *mask; int causal
_OPTS = struct.Struct("=ifQi4x")


def _last_dim(dim, rank, name):
    d = dim + rank if dim < 0 else dim
    if d != rank - 1:
        fail(Status.UNSUPPORTED, f"{name}: argument 'dim' = {dim} of a rank-{rank} tensor; ck "
             f"normalizes along the last dimension only (dim=-1); move the dimension last "
             "first (e.g. x.transpose(dim, -1)).")


def _softmax_core(x, dim, log, scale, mask, causal, dtype, out=None, record=None):
    xa = describe(x, "x")
    _last_dim(dim, xa.rank, "log_softmax" if log else "softmax")
    args, names = [xa], ["x"]
    ma = None
    if mask is not None:
        ma = describe(mask, "mask")
        args.append(ma), names.append("mask")
    if out is None:
        odt = xa.dtype if dtype is None else ck_dtype_of(dtype)
        out, ya = empty(xa, xa.shape, odt)
    else:
        ya = describe(out, "out")
        args.append(ya), names.append("out")
    place = same_place(args, names)
    p = (Pack.owned if record else Pack)(3 * TENSOR_SIZE + _OPTS.size)
    xp, yp, mp = p.tensors([xa, ya, ma])
    _OPTS.pack_into(p.buf, 3 * TENSOR_SIZE, 1 if log else 0, scale, mp or 0, 1 if causal else 0)
    ctx = _runtime.context(place)
    call(_lib.ck_softmax, ctx, xp, yp, p.base + 3 * TENSOR_SIZE)
    if record:
        _fast.record(record, (x,), (out,), _lib.ck_softmax,
                     (ctx, xp, yp, p.base + 3 * TENSOR_SIZE), p.buf, (0, TENSOR_SIZE))
    return out


# ---- torch custom ops ----------------------------------------------------------------------
def _impl(x, dim, log, scale, mask, causal, dtype):
    return _softmax_core(x, dim, log, scale, mask, causal, dtype)


def _fake(x, dim, log, scale, mask, causal, dtype):
    return x.new_empty(x.shape, dtype=dtype if dtype is not None else x.dtype)


def _setup(ctx, inputs, output):
    x, dim, log, scale, mask, causal, dtype = inputs
    ctx.save_for_backward(output)
    ctx.log, ctx.scale, ctx.dtype = log, scale, x.dtype


def _backward(ctx, dy):
    (y,) = ctx.saved_tensors
    from .elementwise import elementwise
    from .reduce import reduce

    if ctx.log:  # dx = scale * (dy - exp(y) * sum(dy))
        s = reduce(dy, "sum", dim=-1, keepdim=True, dtype=_tensor.F32)
        dx = elementwise(f"scale(x0 - exp(x1) * x2, {ctx.scale!r})", dy, y, s, dtype=ctx.dtype)
    else:  # g = y * dy; dx = scale * (g - y * sum(g))
        g = elementwise("x0 * x1", y, dy, dtype=_tensor.F32)
        s = reduce(g, "sum", dim=-1, keepdim=True, dtype=_tensor.F32)
        dx = elementwise(f"scale(x0 - x1 * x2, {ctx.scale!r})", g, y, s, dtype=ctx.dtype)
    return dx, None, None, None, None, None, None


_op = _torchops.op(
    "softmax(Tensor x, int dim, bool log, float scale, Tensor? mask, bool causal, "
    "ScalarType? dtype) -> Tensor", _impl, _fake, _backward, _setup)


def _softmax(x, dim, log, scale, mask, causal, dtype, out):
    if mask is None and dtype is None and out is None and not _fast.is_compiling():
        opts = ("softmax", dim, log, scale, causal)
        y = _fast.call(opts, x)  # a repeated eager call (_fast)
        if y is not None:
            return y
        if _torchops.is_torch(x) and _torchops.direct(x):
            return _softmax_core(x, dim, log, scale, None, causal, None, record=opts)
    if out is None and _op is not None and _torchops.is_torch(x) and \
            not _torchops.direct(x, mask):
        if dtype is not None and not isinstance(dtype, _torchops.torch.dtype):
            dtype = _tensor._CK_TO_TORCH.get(ck_dtype_of(dtype))
        return _op(x, dim, log, float(scale), mask, causal, dtype)
    return _softmax_core(x, dim, log, scale, mask, causal, dtype, out)


def softmax(x, dim=-1, *, dtype=None, scale=1.0, mask=None, causal=False, out=None):
    """softmax(scale * x + mask) along the last dimension (torch.nn.functional.softmax;
    dim must be the last). dtype: the output type (f32/f16/bf16; default x's), computed in
    fp32. mask: additive, broadcastable to x (see ck/softmax.h); causal: hide j > i + (N - M)."""
    return _softmax(x, dim, False, scale, mask, causal, dtype, out)


def log_softmax(x, dim=-1, *, dtype=None, scale=1.0, mask=None, causal=False, out=None):
    """log of softmax (torch.nn.functional.log_softmax), same arguments as softmax."""
    return _softmax(x, dim, True, scale, mask, causal, dtype, out)


# ---- top-k softmax (MoE gating) ------------------------------------------------------------
def _topk_core(logits, k, renormalize, dtype, record=None):
    la = describe(logits, "logits")
    if la.rank != 2:
        fail(Status.INVALID_ARGUMENT, f"topk_softmax: argument 'logits' has rank {la.rank}; "
             "accepted: [tokens, experts].")
    wdt = _tensor.F32 if dtype is None else ck_dtype_of(dtype)
    w, wa = empty(la, (la.shape[0], k), wdt)
    i, ia = empty(la, (la.shape[0], k), _tensor.I32)
    p = (Pack.owned if record else Pack)(3 * TENSOR_SIZE)
    lp, ip, wp = p.tensors([la, ia, wa])
    ctx = _runtime.context(la.place)
    r = 1 if renormalize else 0
    call(_lib.ck_topk_softmax, ctx, lp, k, r, ip, wp)
    if record:  # logits at 0, indices at 1, weights at 2
        _fast.record(record, (logits,), (w, i), _lib.ck_topk_softmax, (ctx, lp, k, r, ip, wp),
                     p.buf, (0, 2 * TENSOR_SIZE, TENSOR_SIZE))
    return w, i


def _topk_fake(logits, k, renormalize, dtype):
    t = _torchops.torch
    rows = logits.shape[0]
    return (logits.new_empty((rows, k), dtype=dtype if dtype is not None else t.float32),
            logits.new_empty((rows, k), dtype=t.int32))


_topk_op = _torchops.op(
    "topk_softmax(Tensor logits, int k, bool renormalize, ScalarType? dtype) "
    "-> (Tensor, Tensor)", _topk_core, _topk_fake)


def topk_softmax(logits, k, renormalize=False, *, dtype=None):
    """MoE gating: softmax over experts of logits [tokens, experts], then the k largest.
    Returns (weights [tokens, k] (dtype, default float32), indices [tokens, k] int32), largest
    first, like torch.topk(torch.softmax(logits, -1), k); renormalize divides the weights by
    their sum."""
    if dtype is None and not _fast.is_compiling():
        opts = ("topk", k, renormalize)
        r = _fast.call(opts, logits)  # a repeated eager call (_fast)
        if r is not None:
            return r
        if _torchops.is_torch(logits) and _torchops.direct(logits):
            return _topk_core(logits, k, renormalize, None, record=opts)
    if _topk_op is not None and _torchops.is_torch(logits) and not _torchops.direct(logits):
        if dtype is not None and not isinstance(dtype, _torchops.torch.dtype):
            dtype = _tensor._CK_TO_TORCH.get(ck_dtype_of(dtype))
        return _topk_op(logits, k, renormalize, dtype)
    return _topk_core(logits, k, renormalize, dtype)
