"""max_pool2d / avg_pool2d (and the 3-D forms): ck's pooling (ck/pool.h) with
torch.nn.functional's arguments and semantics (ceil_mode, dilation, count_include_pad,
divisor_override, NaN propagation, int64 indices flattened over the spatial dims).

input [N, C, *spatial] or unbatched [C, *spatial]; bf16, f16 (NumPy: float16), f32. ck's
kernels read channels-last memory: a channels-last input (torch.channels_last / _3d, or any
tensor whose memory is [N, *spatial, C] packed) is read in place and the result is
channels-last, as torch returns it; another input is permuted by ck_permute into channels-last
first and the result permuted back (packed NCHW). max_pool's gradient (torch autograd) runs
ck's max-pool backward: the gradient gathered per input element through the indices, in a
fixed order (deterministic, no atomics).
"""
import ctypes
import struct

import numpy as np

from . import _fast, _lib, _runtime, _torchops
from ._lib import Status, fail
from ._tensor import BF16, F16, F32, describe, empty, same_place
from .conv import _is_channels_last, _is_packed, _tuple

# ck_pool_problem: mode, ndim; n, c; in, kernel, stride, dilation, pad (3 each); ceil_mode,
# count_include_pad; divisor_override; dtype, index
_PROBLEM = struct.Struct("=2i2q15q2iq2i")
_MAX, _AVG = 0, 1
_INDEX_NONE, _INDEX_I64 = 0, 2
_P = ctypes.c_void_p
_forward = _lib._sig("ck_pool_forward", [_P, _P, _P, _P, _P])
_backward = _lib._sig("ck_pool_backward", [_P, _P, _P, _P, _P])


def _out_len(i, k, p, s, d, ceil_mode):
    """torch's pooling_output_shape (0 where the arguments are invalid: ck refuses them)."""
    if s < 1 or k < 1 or d < 1:
        return 0
    num = i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= i + p:
        o -= 1
    return max(o, 0)


def _problem(mode, nd, n, c, sp, kernel, stride, dilation, padding, ceil_mode, include_pad,
             divisor, dtype, index):
    three = lambda v, fill: tuple(v) + (fill,) * (3 - nd)  # noqa: E731
    buf = ctypes.create_string_buffer(_PROBLEM.size)
    _PROBLEM.pack_into(buf, 0, mode, nd, n, c, *three(sp, 1), *three(kernel, 1),
                       *three(stride, 1), *three(dilation, 1), *three(padding, 0),
                       int(ceil_mode), int(include_pad), divisor or 0, dtype, index)
    return buf


def _perm_to_last(nd):
    return (0,) + tuple(range(2, nd + 2)) + (1,)


def _perm_to_first(nd):
    return (0, nd + 1) + tuple(range(1, nd + 1))


def _view(obj, perm):
    return obj.transpose(perm) if isinstance(obj, np.ndarray) else obj.permute(*perm)


def _as_f64(obj):
    """int64 memory seen as float64 (ck_permute moves the 8-byte elements unchanged)."""
    if isinstance(obj, np.ndarray):
        return obj.view(np.float64)
    return obj.view(_torchops.torch.float64)


def _as_i64(obj):
    if isinstance(obj, np.ndarray):
        return obj.view(np.int64)
    return obj.view(_torchops.torch.int64)


def _channels_last(x, xa, nd):
    """(memory object [N, *spatial, C] packed, its Arg, whether x was read in place)."""
    if not _is_packed(xa) and _is_channels_last(xa):
        return None, xa, True
    from .permute import permute

    m = permute(x, _perm_to_last(nd))
    return m, describe(m, "input"), False


def _new_index(like, shape):
    if like.kind == "torch":
        t = _torchops.torch.empty(shape, dtype=_torchops.torch.int64, device=like.obj.device)
        return t, t.data_ptr()
    a = np.empty(shape, dtype=np.int64)
    return a, a.ctypes.data


def _pool_core(x, mode, kernel, stride, padding, dilation, ceil_mode, include_pad, divisor,
               want_indices, fn, record=None):
    xa = describe(x, "input")
    nd = len(kernel)
    if xa.rank != nd + 2:
        fail(Status.INVALID_ARGUMENT, f"{fn}: input has shape {tuple(xa.shape)}; expected "
             f"{nd + 2} dims [N, C, {nd} spatial dims] (or {nd + 1} unbatched).")
    if xa.dtype not in (F32, F16, BF16):
        fail(Status.UNSUPPORTED, f"{fn}: input type {xa.dtype}; accepted: float32, float16, "
             "bfloat16.")
    n, c, sp = xa.shape[0], xa.shape[1], tuple(xa.shape[2:])
    out_sp = tuple(_out_len(i, k, p, s, d, ceil_mode)
                   for i, k, p, s, d in zip(sp, kernel, padding, stride, dilation))
    index = _INDEX_I64 if want_indices else _INDEX_NONE
    prob = _problem(mode, nd, n, c, sp, kernel, stride, dilation, padding, ceil_mode,
                    include_pad, divisor, xa.dtype, index)
    ctx = _runtime.context(xa.place)
    xm, xma, in_place = _channels_last(x, xa, nd)
    ym, yma = empty(xa, (n,) + out_sp + (c,), xa.dtype)
    im, iptr = _new_index(xa, (n,) + out_sp + (c,)) if want_indices else (None, 0)
    if _forward(ctx, prob, xma.ptr, yma.ptr, iptr):
        raise _lib.error()
    if record and in_place:  # the call's template: results as channels-last memory
        _fast.record(record, (x,), (ym, im) if want_indices else (ym,), _forward,
                     (ctx, ctypes.addressof(prob), xma.ptr, yma.ptr, iptr), prob,
                     (_fast.arg(2), _fast.arg(3)) + ((_fast.arg(4),) if want_indices else ()))
    if in_place:  # channels-last results, viewed as [N, C, *out]
        y = _view(ym, _perm_to_first(nd))
        ind = _view(im, _perm_to_first(nd)) if want_indices else None
    else:
        from .permute import permute

        y = permute(ym, _perm_to_first(nd))
        ind = _as_i64(permute(_as_f64(im), _perm_to_first(nd))) if want_indices else None
    return y, ind


def _max_backward_core(dy, ind, x_shape, kernel, stride, padding, dilation, ceil_mode):
    """dx [N, C, *in] from dy and the forward's int64 indices (both [N, C, *out])."""
    from .permute import permute

    nd = len(kernel)
    ga = describe(dy, "grad_output")
    n, c, sp = x_shape[0], x_shape[1], tuple(x_shape[2:])
    if not (not _is_packed(ga) and _is_channels_last(ga)):
        dy = permute(dy, _perm_to_last(nd))
        ga = describe(dy, "grad_output")
    if not (ind.dim() == nd + 2 and not ind.is_contiguous() and
            ind.permute(*_perm_to_last(nd)).is_contiguous()):
        ind = _as_i64(permute(_as_f64(ind), _perm_to_last(nd)))
    prob = _problem(_MAX, nd, n, c, sp, kernel, stride, dilation, padding, ceil_mode, 1, 0,
                    ga.dtype, _INDEX_I64)
    ctx = _runtime.context(ga.place)
    dxm, dxa = empty(ga, (n,) + sp + (c,), ga.dtype)
    if _backward(ctx, prob, ga.ptr, ind.data_ptr(), dxa.ptr):
        raise _lib.error()
    return permute(dxm, _perm_to_first(nd))


def _max_impl(x, kernel, stride, padding, dilation, ceil_mode):
    y, ind = _pool_core(x, _MAX, tuple(kernel), tuple(stride), tuple(padding), tuple(dilation),
                        ceil_mode, True, 0, True, "max_pool")
    return y.contiguous(), ind.contiguous()


def _fake_shape(x, kernel, stride, padding, dilation, ceil_mode):
    return tuple(x.shape[:2]) + tuple(
        _out_len(i, k, p, s, d, ceil_mode)
        for i, k, p, s, d in zip(x.shape[2:], kernel, padding, stride, dilation))


def _max_fake(x, kernel, stride, padding, dilation, ceil_mode):
    shape = _fake_shape(x, kernel, stride, padding, dilation, ceil_mode)
    return x.new_empty(shape), x.new_empty(shape, dtype=_torchops.torch.int64)


def _max_setup(ctx, inputs, output):
    x, kernel, stride, padding, dilation, ceil_mode = inputs
    ctx.geometry = (tuple(x.shape), tuple(kernel), tuple(stride), tuple(padding),
                    tuple(dilation), bool(ceil_mode))
    ctx.save_for_backward(output[1])
    ctx.mark_non_differentiable(output[1])


def _max_backward(ctx, dy, _dind):
    (ind,) = ctx.saved_tensors
    shape, kernel, stride, padding, dilation, ceil_mode = ctx.geometry
    dx = _maxb_op(dy, ind, list(shape), list(kernel), list(stride), list(padding),
                  list(dilation), ceil_mode)
    return dx, None, None, None, None, None


def _maxb_impl(dy, ind, x_shape, kernel, stride, padding, dilation, ceil_mode):
    return _max_backward_core(dy, ind, tuple(x_shape), tuple(kernel), tuple(stride),
                              tuple(padding), tuple(dilation), ceil_mode)


def _maxb_fake(dy, ind, x_shape, kernel, stride, padding, dilation, ceil_mode):
    return dy.new_empty(tuple(x_shape))


def _avg_impl(x, kernel, stride, padding, ceil_mode, include_pad, divisor):
    y, _ = _pool_core(x, _AVG, tuple(kernel), tuple(stride), tuple(padding),
                      (1,) * len(kernel), ceil_mode, include_pad, divisor or 0, False,
                      "avg_pool")
    return y.contiguous()


def _avg_fake(x, kernel, stride, padding, ceil_mode, include_pad, divisor):
    return x.new_empty(_fake_shape(x, kernel, stride, padding, (1,) * len(kernel), ceil_mode))


_maxb_op = _torchops.op("max_pool_backward(Tensor grad_output, Tensor indices, int[] x_shape, "
                        "int[] kernel, int[] stride, int[] padding, int[] dilation, "
                        "bool ceil_mode) -> Tensor", _maxb_impl, _maxb_fake)
_max_op = _torchops.op("max_pool(Tensor x, int[] kernel, int[] stride, int[] padding, "
                       "int[] dilation, bool ceil_mode) -> (Tensor, Tensor)", _max_impl,
                       _max_fake, _max_backward, _max_setup)
_avg_op = _torchops.op("avg_pool(Tensor x, int[] kernel, int[] stride, int[] padding, "
                       "bool ceil_mode, bool count_include_pad, int? divisor_override) -> "
                       "Tensor", _avg_impl, _avg_fake)


def _batched(x, nd, fn):
    r = len(x.shape)
    if r == nd + 1:
        return (x[None] if isinstance(x, np.ndarray) else x.unsqueeze(0)), True
    if r != nd + 2:
        fail(Status.INVALID_ARGUMENT, f"{fn}: input has shape {tuple(x.shape)}; expected "
             f"[N, C, {nd} spatial dims] or [C, {nd} spatial dims].")
    return x, False


def _args(nd, kernel_size, stride, padding, dilation, fn):
    k = _tuple(kernel_size, nd, "kernel_size", fn)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _tuple(stride, nd, "stride", fn)
    return k, s, _tuple(padding, nd, "padding", fn), _tuple(dilation, nd, "dilation", fn)


def _hashable(v):
    return tuple(v) if type(v) is list else v


def _fast_pool(opts, x, nd, indices):
    """A repeated eager call on channels-last x (_fast): its results viewed as [N, C, *out]."""
    r = _fast.call(opts, x)
    if r is None:
        return None
    perm = _perm_to_first(nd)
    return (r[0].permute(perm), r[1].permute(perm)) if indices else r.permute(perm)


def _max_pool(nd, fn, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    opts = None
    if not _fast.is_compiling():
        opts = ("max_pool", nd, _hashable(kernel_size), _hashable(stride), _hashable(padding),
                _hashable(dilation), ceil_mode, return_indices)
        r = _fast_pool(opts, input, nd, return_indices)
        if r is not None:
            return r
    k, s, p, d = _args(nd, kernel_size, stride, padding, dilation, fn)
    x, unbatched = _batched(input, nd, fn)
    if _max_op is not None and _torchops.is_torch(x) and not _torchops.direct(x):
        y, ind = _max_op(x, list(k), list(s), list(p), list(d), bool(ceil_mode))
    else:
        y, ind = _pool_core(x, _MAX, k, s, p, d, bool(ceil_mode), True, 0, return_indices, fn,
                            record=None if unbatched else opts)
    if unbatched:
        y, ind = y[0], (ind[0] if ind is not None else None)
    return (y, ind) if return_indices else y


def _avg_pool(nd, fn, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    opts = None
    if not _fast.is_compiling():
        opts = ("avg_pool", nd, _hashable(kernel_size), _hashable(stride), _hashable(padding),
                ceil_mode, count_include_pad, divisor_override)
        r = _fast_pool(opts, input, nd, False)
        if r is not None:
            return r
    k, s, p, _ = _args(nd, kernel_size, stride, padding, 1, fn)
    if divisor_override is not None and int(divisor_override) <= 0:
        fail(Status.INVALID_ARGUMENT, f"{fn}: divisor_override = {divisor_override}; it must "
             "be > 0 (or None).")
    x, unbatched = _batched(input, nd, fn)
    if _avg_op is not None and _torchops.is_torch(x) and not _torchops.direct(x):
        y = _avg_op(x, list(k), list(s), list(p), bool(ceil_mode), bool(count_include_pad),
                    divisor_override)
    else:
        y, _ = _pool_core(x, _AVG, k, s, p, (1,) * nd, bool(ceil_mode), bool(count_include_pad),
                          int(divisor_override or 0), False, fn,
                          record=None if unbatched else opts)
    return y[0] if unbatched else y


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool2d (indices: int64, flattened over H x W)."""
    return _max_pool(2, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool3d (indices: int64, flattened over D x H x W)."""
    return _max_pool(3, "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """torch.nn.functional.avg_pool2d."""
    return _avg_pool(2, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """torch.nn.functional.avg_pool3d."""
    return _avg_pool(3, "avg_pool3d", input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def max_pool_backward(grad_output, indices, input_shape, kernel_size, stride=None, padding=0,
                      dilation=1, ceil_mode=False):
    """The gradient of max_pool{2,3}d with respect to its input from grad_output and the
    forward's int64 indices ([N, C, *out] each): [N, C, *input_shape[2:]], packed NCHW."""
    nd = len(input_shape) - 2
    k, s, p, d = _args(nd, kernel_size, stride, padding, dilation, "max_pool_backward")
    if isinstance(indices, np.ndarray):
        return _max_backward_np(grad_output, indices, tuple(input_shape), k, s, p, d,
                                bool(ceil_mode))
    return _max_backward_core(grad_output, indices, tuple(input_shape), k, s, p, d,
                              bool(ceil_mode))


def _max_backward_np(dy, ind, shape, k, s, p, d, ceil_mode):
    from .permute import permute

    nd = len(k)
    if ind.dtype != np.int64:
        fail(Status.INVALID_ARGUMENT, "max_pool_backward: indices must be int64 (as returned "
             "by max_pool2d(..., return_indices=True)).")
    dyl = permute(dy, _perm_to_last(nd))
    ga = describe(dyl, "grad_output")
    indl = np.ascontiguousarray(ind.transpose(_perm_to_last(nd)))
    if indl.shape != tuple(ga.shape):
        fail(Status.INVALID_ARGUMENT, f"max_pool_backward: indices {ind.shape} and grad_output "
             f"{dy.shape} must have one shape.")
    same_place([ga], ["grad_output"])
    prob = _problem(_MAX, nd, shape[0], shape[1], shape[2:], k, s, d, p, ceil_mode, 1, 0,
                    ga.dtype, _INDEX_I64)
    ctx = _runtime.context(ga.place)
    dxm, dxa = empty(ga, (shape[0],) + tuple(shape[2:]) + (shape[1],), ga.dtype)
    if _backward(ctx, prob, ga.ptr, indl.ctypes.data, dxa.ptr):
        raise _lib.error()
    return permute(dxm, _perm_to_first(nd))

