"""Reductions over any set of dimensions (ck_reduce): sum, mean, amax, amin, sum of squares,
L2 norm, argmax, argmin; with an element pre-op (abs, square) and post-ops (scale, sqrt)."""
import ctypes
import struct

from . import _fast, _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import TENSOR_SIZE, Pack, ck_dtype_of, describe, empty

OPS = {"sum": 0, "mean": 1, "max": 2, "amax": 2, "min": 3, "amin": 3, "sumsq": 4,
       "sum_squares": 4, "norm2": 5, "argmax": 6, "argmin": 7}
PRES = {None: 0, "none": 0, "abs": 1, "square": 2}
# ck_reduce_options: ck_reduce_pre pre; double scale; int post_sqrt; unsigned flags
_OPTS = struct.Struct("=i4xdiI")


def _axes(dim, rank):
    if dim is None:
        return tuple(range(rank))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(d + rank if d < 0 else d for d in dim)


def _out_shape(shape, axes, keepdim):
    if keepdim:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _default_dtype(op, xdt):
    if op >= 6:
        return _tensor.I32
    if xdt in (_tensor.F32, _tensor.F64, _tensor.F16, _tensor.BF16):
        return xdt
    return _tensor.F64 if xdt == _tensor.I32 else _tensor.F32


def _reduce_core(x, op, dim, keepdim, pre, scale, sqrt, dtype, out=None, record=None):
    opn = OPS.get(op)
    if opn is None:
        fail(Status.INVALID_ARGUMENT, f"reduce: argument 'op' = {op!r}; accepted: "
             f"{', '.join(OPS)}.")
    pren = PRES.get(pre)
    if pren is None:
        fail(Status.INVALID_ARGUMENT, f"reduce: argument 'pre' = {pre!r}; accepted: None, "
             "'abs', 'square'.")
    xa = describe(x, "x")
    axes = _axes(dim, xa.rank)
    if xa.rank == 0:
        fail(Status.INVALID_ARGUMENT, "reduce: argument 'x' is a scalar (rank 0); ck reduces "
             "tensors of rank 1 to 6.")
    if out is None:
        shape = _out_shape(xa.shape, set(axes), keepdim)
        odt = _default_dtype(opn, xa.dtype) if dtype is None else ck_dtype_of(dtype)
        out, ya = empty(xa, shape, odt)
    else:
        ya = describe(out, "out")
    _tensor.same_place([xa, ya], ["x", "out"])
    na = len(axes)
    p = (Pack.owned if record else Pack)(2 * TENSOR_SIZE + _OPTS.size + 4 * max(na, 1))
    xp, yp = p.tensors([xa, ya])
    o = 2 * TENSOR_SIZE
    _OPTS.pack_into(p.buf, o, pren, scale, 1 if sqrt else 0, 0)
    struct.pack_into(f"={na}i", p.buf, o + _OPTS.size, *axes)
    ctx = _runtime.context(xa.place)
    args = (ctx, opn, xp, p.base + o + _OPTS.size, na, yp, p.base + o)
    call(_lib.ck_reduce, *args)
    if record:
        _fast.record(record, (x,), (out,), _lib.ck_reduce, args, p.buf, (0, TENSOR_SIZE))
    return out


def _impl(x, op, dim, keepdim, pre, scale, sqrt, dtype):
    return _reduce_core(x, op, dim, keepdim, pre, scale, sqrt, dtype)


def _fake(x, op, dim, keepdim, pre, scale, sqrt, dtype):
    axes = _axes(dim, x.dim())
    shape = _out_shape(tuple(x.shape), set(axes), keepdim)
    if dtype is None:
        dtype = _tensor._CK_TO_TORCH[_default_dtype(OPS.get(op, 0), ck_dtype_of(x.dtype))]
    return x.new_empty(shape, dtype=dtype)


def _setup(ctx, inputs, output):
    x, op, dim, keepdim, pre, scale, sqrt, dtype = inputs
    ctx.op, ctx.keepdim, ctx.scale, ctx.shape, ctx.dtype = op, keepdim, scale, x.shape, x.dtype
    ctx.axes = _axes(dim, x.dim())
    ctx.plain = pre in (None, "none") and not sqrt and OPS.get(op) in (0, 1)


def _backward(ctx, dy):
    """sum and mean (no pre-op, no sqrt): dy broadcast back; the other reductions have no
    backward in ck (an error, not a zero gradient)."""
    if not ctx.plain:
        from ._lib import CkError

        raise CkError(Status.NOT_IMPLEMENTED, f"ck.reduce('{ctx.op}') has a backward only for "
                      "'sum' and 'mean' without pre-op or sqrt; use torch where a gradient "
                      "must flow through this reduction.")
    g = dy
    if not ctx.keepdim:
        for a in sorted(ctx.axes):
            g = g.unsqueeze(a)
    scale = ctx.scale
    if OPS[ctx.op] == 1:
        n = 1
        for a in ctx.axes:
            n *= ctx.shape[a]
        scale = scale / max(n, 1)
    return (g * scale).expand(ctx.shape).to(ctx.dtype), None, None, None, None, None, None, None


_op = _torchops.op("reduce(Tensor x, str op, int[]? dim, bool keepdim, str? pre, float scale, "
                   "bool sqrt, ScalarType? dtype) -> Tensor", _impl, _fake, _backward, _setup)


def reduce(x, op, dim=None, keepdim=False, *, pre=None, scale=1.0, sqrt=False, dtype=None,
           out=None):
    """op ('sum', 'mean', 'amax', 'amin', 'sumsq', 'norm2', 'argmax', 'argmin') over `dim` (an
    int, a sequence, or None for all), after the element pre-op `pre` (None, 'abs', 'square'),
    then `* scale` and a square root when `sqrt`. Accumulates in fp32 (fp64 for f64 and i32).
    dtype: the output type (default: x's float type; f32 for i8/u8, f64 for i32; arg ops:
    int32 indices)."""
    if out is None and dtype is None and not _fast.is_compiling():
        opts = ("reduce", op, tuple(dim) if type(dim) is list else dim, keepdim, pre, scale,
                sqrt)
        y = _fast.call(opts, x)  # a repeated eager call (_fast)
        if y is not None:
            return y
        if _torchops.is_torch(x) and _torchops.direct(x):
            return _reduce_core(x, op, dim, keepdim, pre, scale, sqrt, None, record=opts)
    if out is None and _op is not None and _torchops.is_torch(x) and not _torchops.direct(x):
        if isinstance(dim, int):
            dim = [dim]
        elif dim is not None:
            dim = list(dim)
        if dtype is not None and not isinstance(dtype, _torchops.torch.dtype):
            dtype = _tensor._CK_TO_TORCH.get(ck_dtype_of(dtype))
        return _op(x, op, dim, keepdim, pre, float(scale), sqrt, dtype)
    return _reduce_core(x, op, dim, keepdim, pre, scale, sqrt, dtype, out)


def sum(x, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001
    """torch.sum / numpy.sum over dim."""
    return reduce(x, "sum", dim, keepdim, dtype=dtype, out=out)


def mean(x, dim=None, keepdim=False, *, dtype=None, out=None):
    return reduce(x, "mean", dim, keepdim, dtype=dtype, out=out)


def amax(x, dim=None, keepdim=False, *, out=None):
    return reduce(x, "amax", dim, keepdim, out=out)


def amin(x, dim=None, keepdim=False, *, out=None):
    return reduce(x, "amin", dim, keepdim, out=out)


def argmax(x, dim, keepdim=False, *, out=None):
    """Index along dim of the largest element (first on ties, first NaN), as int32."""
    return reduce(x, "argmax", dim, keepdim, out=out)


def argmin(x, dim, keepdim=False, *, out=None):
    return reduce(x, "argmin", dim, keepdim, out=out)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.vector_norm for ord 2 (sqrt of the sum of squares) and 1 (sum of |x|)."""
    if ord == 2:
        return reduce(x, "norm2", dim, keepdim, dtype=dtype, out=out)
    if ord == 1:
        return reduce(x, "sum", dim, keepdim, pre="abs", dtype=dtype, out=out)
    if ord == float("inf"):
        return reduce(x, "amax", dim, keepdim, pre="abs", dtype=dtype, out=out)
    fail(Status.UNSUPPORTED, f"vector_norm: argument 'ord' = {ord!r}; accepted: 1, 2, inf.")
