"""layer_norm and rms_norm (forward and backward), with a fused residual add, and the fused
per-row dynamic quantization (rms_norm_quant, smooth_quant): ck/norm.h.

Autograd uses ck's backward kernel (ck_norm_backward) from the forward's saved mean/rstd."""
import struct

import numpy as np

from . import _fast, _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import TENSOR_SIZE, Pack, ck_dtype_of, describe, empty, same_place

LAYERNORM, RMSNORM, NONE = 0, 1, 2
_FWD = struct.Struct("=if10Q")  # ck_norm_forward_desc
_BWD = struct.Struct("=i4x8Q")  # ck_norm_backward_desc
_EPS = {_tensor.F32: 1.1920928955078125e-07, _tensor.F16: 0.0009765625,
        _tensor.BF16: 0.0078125}


def _flatten_tail(x, k):
    """x viewed as [..., prod(last k dims)] without a copy (refused when impossible)."""
    if k == 1:
        return x
    shape = tuple(x.shape)
    lead, tail = shape[:-k], shape[-k:]
    n = int(np.prod(tail))
    if _torchops.is_torch(x):
        try:
            return x.view(*lead, n)
        except RuntimeError:
            pass
    elif isinstance(x, np.ndarray):
        item = x.itemsize
        expect = item
        ok = True
        for d, s in zip(reversed(tail), reversed(x.strides[-k:])):
            if d != 1 and s != expect:
                ok = False
            expect *= d
        if ok:
            return x.reshape(*lead, n)
    fail(Status.UNSUPPORTED, f"the last {k} dimensions of 'x' (shape {shape}) are normalized "
         "together, so they must be packed (contiguous); make them so (x.contiguous()) or "
         "normalize over the last dimension only.")


def _normalized_ndim(x, normalized_shape):
    if isinstance(normalized_shape, int):
        if x.shape and x.shape[-1] == normalized_shape:
            return 1
        normalized_shape = (normalized_shape,)
    elif type(normalized_shape) is tuple and len(normalized_shape) == 1 and x.shape and \
            x.shape[-1] == normalized_shape[0]:
        return 1
    ns = tuple(normalized_shape)
    shape = tuple(x.shape)
    if len(ns) == 0 or shape[len(shape) - len(ns):] != ns:
        fail(Status.INVALID_ARGUMENT, f"argument 'normalized_shape' = {ns} is not the trailing "
             f"dimensions of x's shape {shape}.")
    return len(ns)


def _ones(xa, n):
    dt = xa.dtype if xa.dtype in _tensor.FLOATS else _tensor.F32
    if xa.kind == "torch":
        t = _tensor.torch.ones(n, dtype=_tensor._CK_TO_TORCH[dt], device=xa.obj.device)
    else:
        t = np.ones(n, dtype=np.dtype(_tensor._CK_TO_NP[dt]))
    return describe(t, "weight")


def _vec(obj, n, name):
    """A [N] parameter (weight, bias, smooth) as an Arg, viewed flat."""
    if obj is None:
        return None
    shape = obj.shape
    if (len(shape) != 1 or shape[0] != n) and int(np.prod(shape)) == n:
        obj = obj.reshape(n)
    return describe(obj, name)


def _forward(kind, x, weight, bias, residual, smooth, eps, qdtype, want_stats):
    """Runs ck_norm_forward on x [..., N]; returns (y, y_scale, residual_out, mean, rstd)
    (None where absent)."""
    xa = describe(x, "x")
    n = xa.shape[-1] if xa.rank else 1
    lead = tuple(xa.shape[:-1])
    args, names = [xa], ["x"]
    ga = None
    if kind != NONE:
        ga = _vec(weight, n, "weight") if weight is not None else _ones(xa, n)
        args.append(ga), names.append("weight")
    ba = sa = ra = None
    if bias is not None or residual is not None or smooth is not None:
        ba = _vec(bias, n, "bias")
        ra = describe(residual, "residual") if residual is not None else None
        sa = _vec(smooth, n, "smooth")
        for a, nm in ((ba, "bias"), (ra, "residual"), (sa, "smooth")):
            if a is not None:
                args.append(a), names.append(nm)
    same_place(args, names)
    if eps is None:
        eps = _EPS.get(xa.dtype, _EPS[_tensor.F32])
    ydt = xa.dtype if qdtype is None else ck_dtype_of(qdtype, "dtype")
    y, ya = empty(xa, xa.shape, ydt)
    ys = ysa = ro = roa = mean = ma = rstd = rsa = None
    if qdtype is not None:
        ys, ysa = empty(xa, lead, _tensor.F32)
    if ra is not None:
        ro, roa = empty(xa, xa.shape, xa.dtype)
    if want_stats:
        rstd, rsa = empty(xa, lead, _tensor.F32)
        if kind == LAYERNORM:
            mean, ma = empty(xa, lead, _tensor.F32)
    p = Pack(10 * TENSOR_SIZE + _FWD.size)
    ptrs = p.tensors([xa, ga, ba, ra, sa, ya, ysa, roa, ma, rsa])
    _FWD.pack_into(p.buf, 10 * TENSOR_SIZE, kind, eps, *[q or 0 for q in ptrs])
    call(_lib.ck_norm_forward, _runtime.context(xa.place), p.base + 10 * TENSOR_SIZE)
    return y, ys, ro, mean, rstd


def _forward_plain(kind, x, weight, bias, eps, record=None):
    """y = norm(x) * weight (+ bias) over the last dimension, nothing else (the common call):
    what _forward does for it, with fewer steps per call."""
    xa, ga = describe(x, "x"), describe(weight, "weight")
    ba = describe(bias, "bias") if bias is not None else None
    n = xa.shape[-1] if xa.rank else 1
    if ga.shape != (n,) or (ba is not None and ba.shape != (n,)):
        y, _, _, _, _ = _forward(kind, x, weight, bias, None, None, eps, None, False)
        return y
    if ba is None:
        same_place([xa, ga], ["x", "weight"])
    else:
        same_place([xa, ga, ba], ["x", "weight", "bias"])
    if eps is None:
        eps = _EPS.get(xa.dtype, _EPS[_tensor.F32])
    y, ya = empty(xa, xa.shape, xa.dtype)
    p = (Pack.owned if record else Pack)(10 * TENSOR_SIZE + _FWD.size)
    xp, gp, yp, bp = p.tensors([xa, ga, ya, ba])
    _FWD.pack_into(p.buf, 10 * TENSOR_SIZE, kind, eps, xp, gp, bp or 0, 0, 0, yp, 0, 0, 0, 0)
    ctx = _runtime.context(xa.place)
    call(_lib.ck_norm_forward, ctx, p.base + 10 * TENSOR_SIZE)
    if record:  # the descriptions at 0 (x), 1 (weight), 3 (bias), 2 (y)
        ts = (x, weight) if ba is None else (x, weight, bias)
        slots = (0, TENSOR_SIZE) + ((3 * TENSOR_SIZE,) if ba else ()) + (2 * TENSOR_SIZE,)
        _fast.record(record, ts, (y,), _lib.ck_norm_forward, (ctx, p.base + 10 * TENSOR_SIZE),
                     p.buf, slots)
    return y


def _backward_core(kind, dy, x, gamma, mean, rstd, need_dgamma, need_dbeta):
    dya, xa, ga = describe(dy, "dy"), describe(x, "x"), describe(gamma, "weight")
    ma = describe(mean, "mean") if mean is not None else None
    rsa = describe(rstd, "rstd")
    same_place([dya, xa, ga, rsa], ["dy", "x", "weight", "rstd"])
    dx, dxa = empty(xa, xa.shape, xa.dtype)
    dg = dga = db = dba = None
    if need_dgamma:
        dg, dga = empty(ga, ga.shape, ga.dtype)
    if need_dbeta:
        db, dba = empty(ga, ga.shape, ga.dtype)
    p = Pack(8 * TENSOR_SIZE + _BWD.size)
    ptrs = p.tensors([dya, xa, ga, ma, rsa, dxa, dga, dba])
    _BWD.pack_into(p.buf, 8 * TENSOR_SIZE, kind, *[q or 0 for q in ptrs])
    call(_lib.ck_norm_backward, _runtime.context(xa.place), p.base + 8 * TENSOR_SIZE)
    return dx, dg, db


# ---- torch custom ops ----------------------------------------------------------------------
def _empty0(x):
    return x.new_empty((0,))


def _fwd_impl(x, k, weight, bias, residual, eps, rms):
    kind = RMSNORM if rms else LAYERNORM
    x2 = _flatten_tail(x, k)
    r2 = _flatten_tail(residual, k) if residual is not None else None
    y, _, ro, mean, rstd = _forward(kind, x2, weight, bias, r2, None, eps, None, True)
    y = y.view(x.shape)
    ro = ro.view(x.shape) if ro is not None else _empty0(x)
    return y, ro, mean if mean is not None else _empty0(x), rstd


def _fwd_fake(x, k, weight, bias, residual, eps, rms):
    lead = tuple(x.shape[: x.dim() - k])
    f32 = _torchops.torch.float32
    return (x.new_empty(x.shape), x.new_empty(x.shape) if residual is not None else _empty0(x),
            x.new_empty(lead, dtype=f32) if not rms else _empty0(x).float(),
            x.new_empty(lead, dtype=f32))


def _fwd_setup(ctx, inputs, output):
    x, k, weight, bias, residual, eps, rms = inputs
    y, ro, mean, rstd = output
    ctx.mark_non_differentiable(mean, rstd)
    ctx.k, ctx.rms, ctx.has_res = k, rms, residual is not None
    ctx.has_w, ctx.has_b = weight is not None, bias is not None
    xin = ro if residual is not None else x
    ctx.save_for_backward(xin, weight, mean if not rms else None, rstd)


def _fwd_backward(ctx, dy, dro, dmean, drstd):
    xin, weight, mean, rstd = ctx.saved_tensors
    k = ctx.k
    n = 1
    for d in xin.shape[xin.dim() - k:]:
        n *= d
    g = weight if weight is not None else xin.new_ones(xin.shape[xin.dim() - k:])
    dx, dg, db = _bwd_op(dy.contiguous().view(-1, n), xin.reshape(-1, n), g.reshape(n),
                         mean.reshape(-1) if mean is not None else None, rstd.reshape(-1),
                         ctx.rms, ctx.has_w, ctx.has_b)
    dx = dx.view(xin.shape)
    if ctx.has_res and dro is not None:
        dx = dx + dro
    dres = dx if ctx.has_res else None
    dg = dg.view(weight.shape) if ctx.has_w else None
    db = db.view(weight.shape) if ctx.has_b else None
    return dx, None, dg, db, dres, None, None


def _bwd_impl(dy, x, gamma, mean, rstd, rms, need_dgamma, need_dbeta):
    dx, dg, db = _backward_core(RMSNORM if rms else LAYERNORM, dy, x, gamma, mean, rstd,
                                need_dgamma, need_dbeta)
    return dx, dg if dg is not None else _empty0(x), db if db is not None else _empty0(x)


def _bwd_fake(dy, x, gamma, mean, rstd, rms, need_dgamma, need_dbeta):
    return (x.new_empty(x.shape), gamma.new_empty(gamma.shape) if need_dgamma else _empty0(x),
            gamma.new_empty(gamma.shape) if need_dbeta else _empty0(x))


_fwd_op = _torchops.op("norm_fwd(Tensor x, int k, Tensor? weight, Tensor? bias, "
                       "Tensor? residual, float eps, bool rms) -> (Tensor, Tensor, Tensor, "
                       "Tensor)", _fwd_impl, _fwd_fake, _fwd_backward, _fwd_setup)
_bwd_op = _torchops.op("norm_bwd(Tensor dy, Tensor x, Tensor gamma, Tensor? mean, Tensor rstd, "
                       "bool rms, bool need_dgamma, bool need_dbeta) -> (Tensor, Tensor, "
                       "Tensor)", _bwd_impl, _bwd_fake)


def _norm(kind, x, normalized_shape, weight, bias, eps, residual):
    opts = None
    if residual is None and weight is not None and not _fast.is_compiling():
        opts = ("norm", kind, tuple(normalized_shape) if type(normalized_shape) is list
                else normalized_shape, eps)
        y = _fast.call(opts, x, weight) if bias is None else _fast.call(opts, x, weight, bias)
        if y is not None:  # a repeated eager call (_fast)
            return y
    k = _normalized_ndim(x, normalized_shape)
    if _fwd_op is not None and _torchops.is_torch(x) and \
            not _torchops.direct(x, weight, bias, residual):
        if eps is None:
            eps = _EPS.get(ck_dtype_of(x.dtype), _EPS[_tensor.F32])
        y, ro, _, _ = _fwd_op(x, k, weight, bias, residual, float(eps), kind == RMSNORM)
        return (y, ro) if residual is not None else y
    if k == 1:  # already [..., N]: no views, and the outputs have x's shape
        if residual is None and weight is not None:
            return _forward_plain(kind, x, weight, bias, eps,
                                  record=opts if _torchops.is_torch(x) else None)
        y, _, ro, _, _ = _forward(kind, x, weight, bias, residual, None, eps, None, False)
        return (y, ro) if residual is not None else y
    x2 = _flatten_tail(x, k)
    r2 = _flatten_tail(residual, k) if residual is not None else None
    y, _, ro, _, _ = _forward(kind, x2, weight, bias, r2, None, eps, None, False)
    y = y.reshape(x.shape)
    return (y, ro.reshape(x.shape)) if residual is not None else y


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5, *, residual=None):
    """torch.nn.functional.layer_norm. With residual: a = x + residual is normalized and
    (y, a) is returned (the fused add of pre-norm transformer blocks)."""
    return _norm(LAYERNORM, x, normalized_shape, weight, bias, eps, residual)


def rms_norm(x, normalized_shape, weight=None, eps=None, *, residual=None):
    """torch.nn.functional.rms_norm (eps None: the dtype's machine epsilon, as torch). With
    residual: a = x + residual is normalized and (y, a) is returned."""
    return _norm(RMSNORM, x, normalized_shape, weight, None, eps, residual)


# ---- quantized output ----------------------------------------------------------------------
def _quant_core(kind, x, k, weight, residual, smooth, eps, qdtype):
    x2 = _flatten_tail(x, k)
    r2 = _flatten_tail(residual, k) if residual is not None else None
    y, ys, ro, _, _ = _forward(kind, x2, weight, None, r2, smooth, eps, qdtype, False)
    return y.reshape(x.shape), ys, ro.reshape(x.shape) if ro is not None else None


def _q_impl(x, k, weight, residual, smooth, eps, dtype, rms):
    y, ys, ro = _quant_core(RMSNORM if rms else NONE, x, k, weight, residual, smooth, eps, dtype)
    return y, ys, ro if ro is not None else _empty0(x)


def _q_fake(x, k, weight, residual, smooth, eps, dtype, rms):
    lead = tuple(x.shape[: x.dim() - k])
    return (x.new_empty(x.shape, dtype=dtype),
            x.new_empty(lead, dtype=_torchops.torch.float32),
            x.new_empty(x.shape) if residual is not None else _empty0(x))


_q_op = _torchops.op("norm_quant(Tensor x, int k, Tensor? weight, Tensor? residual, "
                     "Tensor? smooth, float eps, ScalarType dtype, bool rms) -> (Tensor, "
                     "Tensor, Tensor)", _q_impl, _q_fake)


def _quant(kind, x, normalized_shape, weight, eps, residual, smooth, dtype):
    k = _normalized_ndim(x, normalized_shape)
    if _q_op is not None and _torchops.is_torch(x) and \
            not _torchops.direct(x, weight, residual, smooth):
        if not isinstance(dtype, _torchops.torch.dtype):
            dtype = _tensor._CK_TO_TORCH[ck_dtype_of(dtype)]
        if eps is None:
            eps = _EPS.get(ck_dtype_of(x.dtype), _EPS[_tensor.F32])
        y, ys, ro = _q_op(x, k, weight, residual, smooth, float(eps), dtype, kind == RMSNORM)
    else:
        y, ys, ro = _quant_core(kind, x, k, weight, residual, smooth, eps, dtype)
    return (y, ys, ro) if residual is not None else (y, ys)


def rms_norm_quant(x, normalized_shape, weight=None, eps=None, *, residual=None, smooth=None,
                   dtype="i8"):
    """RMSNorm fused with per-row dynamic quantization (CK's add_rmsnorm2d_rdquant):
    y' = rms_norm(x [+ residual]) * smooth; scale = max|y'| / qmax per row (qmax 127 for int8,
    448 for fp8e4m3); q = round(y' / scale). Returns (q, scale) or, with residual,
    (q, scale, x + residual). dtype: int8 or float8_e4m3fn ('i8' / 'fp8e4m3')."""
    return _quant(RMSNORM, x, normalized_shape, weight, eps, residual, smooth, dtype)


def smooth_quant(x, smooth=None, *, dtype="i8"):
    """Per-row dynamic quantization of x (times smooth per column): returns (q, scale)."""
    return _quant(NONE, x, (x.shape[-1],), None, 0.0, None, smooth, dtype)
