"""conv1d / conv2d / conv3d: ck's grouped convolution (ck/conv.h, an implicit GEMM over the
im2col descriptor) with torch.nn.functional.conv{1,2,3}d's arguments.

input [N, C, *spatial], weight [K, C / groups, *filter], bias [K] or None; stride, padding,
dilation an int or one per spatial dim, padding also "valid" or "same" (stride 1, as torch);
groups divides C and K. Types bf16, f16 (NumPy: float16) and f32 (TF32 tensor cores, as
torch's default for cuDNN convolutions): the result has the input's type and torch's shape.
8-bit inputs (ck's fp8 and int8 tensor cores, forward only, per-tensor scales 1): input and
weight both int8 give int32 (the exact sums), both float8 (e4m3fn / e5m2, any mix) float32;
the C API (ck_conv_args.scale_x / scale_w / scale_y) takes scales and other output types.
Autograd (ck::conv): the input's gradient by ck's backward data, the weight's by ck's backward
weight (ck::conv_backward_data / _weight, NCHW), the bias's by torch's sum.

Layouts: a packed NCHW input runs with CK_CONV_LAYOUT_NCHW (ck permutes it into CK's NHWGC in
the context's workspace and the output back). A channels-last input (torch.channels_last /
channels_last_3d, or any tensor whose memory is [N, *spatial, C] packed) is read in place as
NHWGC; its weight is read in place when it is channels-last too ([K, *filter, C / groups] in
memory: CK's GKYXC), else permuted once by ck_permute; the output is then channels-last, as
torch returns it. Other strides are made packed first.
"""
import ctypes
import struct

import numpy as np

from . import _fast, _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import BF16, F16, F32, FP8_E4M3, FP8_E5M2, I8, I32, describe, empty, same_place

_FP8 = (FP8_E4M3, FP8_E5M2)


def _out_dtype(a, b):
    """The forward's output type for inputs of ck types a and b; None when ck has no
    convolution of that pair."""
    if a in (F32, F16, BF16):
        return a if b == a else None
    if a == I8:
        return I32 if b == I8 else None
    if a in _FP8:
        return F32 if b in _FP8 else None
    return None

# ck_conv_problem: direction, ndim; n, g, c, k; in, filter, out, stride, dilation, pad_left,
# pad_right (3 each); in/wei/out dtype, compute, bias, bias_dtype, activation, residual,
# residual_dtype, layout
_PROBLEM = struct.Struct("=2i4q21q10i")
_PROBLEM_BUF = 1024  # room for fields a later libck appends (ck_conv_problem_init fills them)
# ck_conv_args: x, w, y, bias, residual; alpha, scale_x, scale_w, scale_y
_ARGS = struct.Struct("=5Q4f")
_LAYOUT_NHWGC, _LAYOUT_NCHW = 0, 1
_FWD, _BWD_DATA, _BWD_WEIGHT = 0, 1, 2
_MAX_PLANS = 256

_P = ctypes.c_void_p
_problem_init = _lib._sig("ck_conv_problem_init", [_P], None)
_plan_create = _lib._sig("ck_conv_plan_create", [_P, _P, _P])
_plan_execute = _lib._sig("ck_conv_plan_execute", [_P, _P])
_plan_destroy = _lib._sig("ck_conv_plan_destroy", [_P], None)


def _plans():
    st = _runtime._state()
    p = st.get("conv_plans")
    if p is None:
        p = st["conv_plans"] = {}
    return p


def _tuple(v, nd, name, fn):
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        fail(Status.INVALID_ARGUMENT, f"{fn}: '{name}' = {v} has {len(v)} entries; give one "
             f"int or {nd} (one per spatial dim).")
    return v


def _padding(padding, nd, weight_shape, dilation, stride, fn):
    """(left, right) per dim from torch's padding argument (int, tuple, 'valid', 'same')."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * nd, (0,) * nd
        if padding != "same":
            fail(Status.INVALID_ARGUMENT, f"{fn}: padding = '{padding}'; accepted: an int, "
                 "one int per spatial dim, 'valid' or 'same'.")
        if any(s != 1 for s in stride):
            fail(Status.INVALID_ARGUMENT, f"{fn}: padding='same' needs stride 1 (as torch); "
                 f"stride = {stride}.")
        total = [d * (f - 1) for d, f in zip(dilation, weight_shape[2:])]
        left = tuple(t // 2 for t in total)
        return left, tuple(t - lo for t, lo in zip(total, left))
    p = _tuple(padding, nd, "padding", fn)
    return p, p


def _output_lengths(in_sp, fil, stride, dilation, pl, pr):
    """torch's output lengths (0 where the arguments are invalid: ck's checks refuse them)."""
    return tuple(max((i + a + b - d * (f - 1) - 1) // s + 1, 0) if s >= 1 else 0
                 for i, f, s, d, a, b in zip(in_sp, fil, stride, dilation, pl, pr))


def _strides_match(shape, strides, order):
    """strides are those of shape's dims packed in `order` (innermost first), ignoring dims of
    length 1 (plain comparisons: also for torch's symbolic sizes in fake tensors)."""
    acc = 1
    for d in order:
        if shape[d] != 1 and strides[d] != acc:
            return False
        acc = acc * shape[d]
    return True


def _is_channels_last(arg):
    """True when arg's memory is [N, *spatial, C] packed."""
    r = len(arg.shape)
    return _strides_match(arg.shape, arg.strides, [1] + list(range(r - 1, 1, -1)) + [0])


def _is_packed(arg):
    r = len(arg.shape)
    return _strides_match(arg.shape, arg.strides, list(range(r - 1, -1, -1)))


def _packed(obj, arg, name):
    """A packed (row-major) copy of obj when its strides are not packed."""
    if _is_packed(arg):
        return obj, arg
    if arg.kind == "torch":
        obj = obj.contiguous()
    else:
        obj = np.ascontiguousarray(obj)
    return obj, describe(obj, name)


def _channels_last_weight(w, wa, nd):
    """The weight as [K, *filter, C/G] packed memory (CK's GKYXC), read in place if it is."""
    if _is_channels_last(wa):
        return wa
    from .permute import permute

    w2 = permute(w, (0,) + tuple(range(2, 2 + nd)) + (1,))
    return describe(w2, "weight")


def _plan(ctx, direction, layout, n, c, k, groups, in_sp, fil, stride, dilation, pad_l, pad_r,
          dtype, bias_dtype, types=None):
    """The cached ck_conv plan of the problem (created, and refused with ck's sentence, on the
    first call); types: (in, wei, out) when they are not all `dtype`."""
    nd = len(in_sp)
    types = types or (dtype, dtype, dtype)
    key = (ctx, direction, layout, n, c, k, groups, in_sp, fil, stride, dilation, pad_l, pad_r,
           types, bias_dtype)
    plans = _plans()
    plan = plans.get(key)
    if plan is None:
        prob = ctypes.create_string_buffer(_PROBLEM_BUF)
        _problem_init(prob)
        three = lambda v, fill: tuple(v) + (fill,) * (3 - nd)  # noqa: E731
        _PROBLEM.pack_into(prob, 0, direction, nd, n, groups, c, k, *three(in_sp, 1),
                           *three(fil, 1), *three((0,) * nd, 1), *three(stride, 1),
                           *three(dilation, 1), *three(pad_l, 0), *three(pad_r, 0), *types,
                           0, 0 if bias_dtype is None else 1,
                           F32 if bias_dtype is None else bias_dtype, 0, 0, F32, layout)
        ptr = ctypes.c_void_p()
        call(_plan_create, ctx, prob, ctypes.byref(ptr))
        if len(plans) >= _MAX_PLANS:
            _fast.clear()  # templates hold plans
            for v in plans.values():
                _plan_destroy(v)
            plans.clear()
        plan = plans[key] = ptr.value
    return plan


def _conv_core(x, weight, bias, stride, pad_l, pad_r, dilation, groups, fn, record=None):
    xa, wa = describe(x, "input"), describe(weight, "weight")
    ba = describe(bias, "bias") if bias is not None else None
    nd = xa.rank - 2
    if nd < 1 or nd > 3 or wa.rank != xa.rank:
        fail(Status.INVALID_ARGUMENT, f"{fn}: input {tuple(xa.shape)} and weight "
             f"{tuple(wa.shape)} must both have 2 + spatial dims (3, 4 or 5 dims; [N, C, ...] "
             "and [K, C / groups, ...]).")
    n, c = xa.shape[0], xa.shape[1]
    k, cg = wa.shape[0], wa.shape[1]
    if groups < 1 or c % groups or k % groups or cg * groups != c:
        fail(Status.INVALID_ARGUMENT, f"{fn}: input has {c} channels, weight {tuple(wa.shape)} "
             f"and groups = {groups}; needed: groups divides C and K and weight.shape[1] = "
             "C / groups.")
    odt = _out_dtype(xa.dtype, wa.dtype)
    if odt is None:
        fail(Status.UNSUPPORTED, f"{fn}: input and weight must have one type among float32, "
             f"float16, bfloat16, or be both int8 or both float8 (e4m3fn / e5m2) (got "
             f"{_tensor.DTYPE_NAMES.get(xa.dtype)} and {_tensor.DTYPE_NAMES.get(wa.dtype)}).")
    if ba is not None and (ba.rank != 1 or ba.shape[0] != k or (ba.strides[0] != 1 and k > 1)):
        fail(Status.INVALID_ARGUMENT, f"{fn}: bias has shape {tuple(ba.shape)} strides "
             f"{tuple(ba.strides)}; expected a packed [{k}] (one value per output channel).")
    place = same_place([xa, wa] + ([ba] if ba else []),
                       ["input", "weight"] + (["bias"] if ba else []))
    in_sp, fil = tuple(xa.shape[2:]), tuple(wa.shape[2:])
    out_sp = _output_lengths(in_sp, fil, stride, dilation, pad_l, pad_r)
    channels_last = not _is_packed(xa) and _is_channels_last(xa)
    layout = _LAYOUT_NHWGC if channels_last else _LAYOUT_NCHW
    plan = _plan(_runtime.context(place), _FWD, layout, n, c, k, groups, in_sp, fil, stride,
                 dilation, pad_l, pad_r, xa.dtype, ba.dtype if ba else None,
                 (xa.dtype, wa.dtype, odt))
    if channels_last:
        wa = _channels_last_weight(weight, wa, nd)
        # the output as [N, *out, K] memory, returned as an [N, K, *out] view
        ymem, ya = empty(xa, (n,) + out_sp + (k,), odt)
        perm = (0, nd + 1) + tuple(range(1, nd + 1))
        out = ymem.permute(*perm) if ya.kind == "torch" else ymem.transpose(perm)
    else:
        record = record if _is_packed(xa) and _is_packed(wa) else None  # both read in place
        x, xa = _packed(x, xa, "input")
        weight, wa = _packed(weight, wa, "weight")
        out, ya = empty(xa, (n, k) + out_sp, odt)
    args = _ARGS.pack(xa.ptr, wa.ptr, ya.ptr, ba.ptr if ba else 0, 0, 1.0, 1.0, 1.0, 1.0)
    if not record or channels_last:
        if _plan_execute(plan, args):
            raise _lib.error()
        return out
    # NCHW, both packed (read in place): the call from a buffer a template keeps, whose x, w,
    # y, bias pointers come first
    buf = ctypes.create_string_buffer(args, len(args))
    if _plan_execute(plan, buf):
        raise _lib.error()
    _fast.record(record, (x, weight) if ba is None else (x, weight, bias), (out,),
                 _plan_execute, (plan, ctypes.addressof(buf)), buf,
                 (0, 8) + ((24,) if ba else ()) + (16,))
    return out


def _grad_core(direction, a, b, shape, stride, pad_l, pad_r, dilation, groups):
    """Backward data (a = dY, b = W; the result dX of `shape`) or backward weight (a = X,
    b = dY; the result dW of `shape`), NCHW packed (ck permutes through its workspace)."""
    fn = "conv backward " + ("data" if direction == _BWD_DATA else "weight")
    aa, ba = describe(a, "a"), describe(b, "b")
    a, aa = _packed(a, aa, "a")
    b, ba = _packed(b, ba, "b")
    place = same_place([aa, ba], ["grad_output" if direction == _BWD_DATA else "input",
                                  "weight" if direction == _BWD_DATA else "grad_output"])
    if direction == _BWD_DATA:
        x_shape, w_shape = tuple(shape), tuple(ba.shape)
    else:
        x_shape, w_shape = tuple(aa.shape), tuple(shape)
    n, c, k = x_shape[0], x_shape[1], w_shape[0]
    if aa.dtype != ba.dtype or aa.dtype not in (F32, F16, BF16):
        fail(Status.UNSUPPORTED, f"{fn}: the tensors must have one type among float32, "
             "float16, bfloat16 (8-bit backward convolutions, which need per-tensor scales, "
             "are in ck's C API: ck_conv_args).")
    plan = _plan(_runtime.context(place), direction, _LAYOUT_NCHW, n, c, k, groups,
                 tuple(x_shape[2:]), tuple(w_shape[2:]), stride, dilation, pad_l, pad_r,
                 aa.dtype, None)
    out, oa = empty(aa, tuple(shape), aa.dtype)
    if direction == _BWD_DATA:
        args = _ARGS.pack(oa.ptr, ba.ptr, aa.ptr, 0, 0, 1.0, 1.0, 1.0, 1.0)
    else:
        args = _ARGS.pack(aa.ptr, oa.ptr, ba.ptr, 0, 0, 1.0, 1.0, 1.0, 1.0)
    if _plan_execute(plan, args):
        raise _lib.error()
    return out


def _bwd_data_impl(dy, weight, x_shape, stride, pad_l, pad_r, dilation, groups):
    return _grad_core(_BWD_DATA, dy, weight, tuple(x_shape), tuple(stride), tuple(pad_l),
                      tuple(pad_r), tuple(dilation), groups)


def _bwd_weight_impl(x, dy, w_shape, stride, pad_l, pad_r, dilation, groups):
    return _grad_core(_BWD_WEIGHT, x, dy, tuple(w_shape), tuple(stride), tuple(pad_l),
                      tuple(pad_r), tuple(dilation), groups)


def _bwd_data_fake(dy, weight, x_shape, stride, pad_l, pad_r, dilation, groups):
    return dy.new_empty(tuple(x_shape))


def _bwd_weight_fake(x, dy, w_shape, stride, pad_l, pad_r, dilation, groups):
    return x.new_empty(tuple(w_shape))


_bwd_data_op = _torchops.op("conv_backward_data(Tensor grad_output, Tensor weight, "
                            "int[] x_shape, int[] stride, int[] pad_left, int[] pad_right, "
                            "int[] dilation, int groups) -> Tensor", _bwd_data_impl,
                            _bwd_data_fake)
_bwd_weight_op = _torchops.op("conv_backward_weight(Tensor input, Tensor grad_output, "
                              "int[] w_shape, int[] stride, int[] pad_left, int[] pad_right, "
                              "int[] dilation, int groups) -> Tensor", _bwd_weight_impl,
                              _bwd_weight_fake)


def _setup(ctx, inputs, output):
    x, w, bias, stride, pad_l, pad_r, dilation, groups = inputs
    ctx.geometry = (list(stride), list(pad_l), list(pad_r), list(dilation), groups)
    ctx.has_bias = bias is not None
    ctx.save_for_backward(x, w)


def _backward(ctx, dy):
    x, w = ctx.saved_tensors
    stride, pad_l, pad_r, dilation, groups = ctx.geometry
    dx = dw = db = None
    if ctx.needs_input_grad[0]:
        dx = _bwd_data_op(dy, w, list(x.shape), stride, pad_l, pad_r, dilation, groups)
    if ctx.needs_input_grad[1]:
        dw = _bwd_weight_op(x, dy, list(w.shape), stride, pad_l, pad_r, dilation, groups)
    if ctx.has_bias and ctx.needs_input_grad[2]:
        db = dy.sum(dim=[0] + list(range(2, dy.dim()))).to(dy.dtype)
    return dx, dw, db, None, None, None, None, None


def conv_backward_data(grad_output, weight, input_shape, stride=1, padding=0, dilation=1,
                       groups=1):
    """The gradient of conv{1,2,3}d with respect to its input: [N, C, *input_shape[2:]]
    (packed NCHW) from grad_output [N, K, *out] and weight (ck's backward data)."""
    nd = len(input_shape) - 2
    s, d = _tuple(stride, nd, "stride", "conv_backward_data"), _tuple(dilation, nd, "dilation",
                                                                      "conv_backward_data")
    pl, pr = _padding(padding, nd, tuple(weight.shape), d, s, "conv_backward_data")
    return _grad_core(_BWD_DATA, grad_output, weight, tuple(input_shape), s, pl, pr, d,
                      int(groups))


def conv_backward_weight(input, grad_output, weight_shape, stride=1, padding=0, dilation=1,
                         groups=1):
    """The gradient of conv{1,2,3}d with respect to its weight: [K, C/groups, *filter] from
    input and grad_output (ck's backward weight: one block per tile reduces the whole batch and
    spatial range, deterministic)."""
    nd = len(weight_shape) - 2
    s, d = _tuple(stride, nd, "stride", "conv_backward_weight"), _tuple(
        dilation, nd, "dilation", "conv_backward_weight")
    pl, pr = _padding(padding, nd, tuple(weight_shape), d, s, "conv_backward_weight")
    return _grad_core(_BWD_WEIGHT, input, grad_output, tuple(weight_shape), s, pl, pr, d,
                      int(groups))


def _impl(input, weight, bias, stride, pad_l, pad_r, dilation, groups):
    return _conv_core(input, weight, bias, tuple(stride), tuple(pad_l), tuple(pad_r),
                      tuple(dilation), groups, "conv")


def _fake(input, weight, bias, stride, pad_l, pad_r, dilation, groups):
    nd = input.dim() - 2
    out_sp = _output_lengths(tuple(input.shape[2:]), tuple(weight.shape[2:]), stride, dilation,
                             pad_l, pad_r)
    shape = (input.shape[0], weight.shape[0]) + out_sp
    xa = _tensor.Arg(None, 0, 0, tuple(input.shape), tuple(input.stride()), None, "fake")
    import torch

    dt = torch.int32 if input.dtype == torch.int8 else \
        torch.float32 if input.dtype.itemsize == 1 else input.dtype  # as _out_dtype
    if not _is_packed(xa) and _is_channels_last(xa):  # as _conv_core
        mem = input.new_empty((shape[0],) + out_sp + (shape[1],), dtype=dt)
        return mem.permute(0, nd + 1, *range(1, nd + 1))
    return input.new_empty(shape, dtype=dt)


_op = _torchops.op("conv(Tensor input, Tensor weight, Tensor? bias, int[] stride, "
                   "int[] pad_left, int[] pad_right, int[] dilation, int groups) -> Tensor",
                   _impl, _fake, _backward, _setup)


def _hashable(v):
    return tuple(v) if type(v) is list else v


def _conv(nd, input, weight, bias, stride, padding, dilation, groups, fn):
    opts = None
    if not _fast.is_compiling():
        opts = ("conv", nd, _hashable(stride), _hashable(padding), _hashable(dilation), groups)
        y = _fast.call(opts, input, weight) if bias is None else \
            _fast.call(opts, input, weight, bias)
        if y is not None:  # a repeated eager call (_fast)
            return y
    stride = _tuple(stride, nd, "stride", fn)
    dilation = _tuple(dilation, nd, "dilation", fn)
    wshape = tuple(weight.shape)
    if len(wshape) != nd + 2:
        fail(Status.INVALID_ARGUMENT, f"{fn}: weight has shape {wshape}; expected {nd + 2} "
             f"dims [K, C / groups, {nd} filter dims].")
    pad_l, pad_r = _padding(padding, nd, wshape, dilation, stride, fn)
    ishape = tuple(input.shape)
    if len(ishape) != nd + 2:
        fail(Status.INVALID_ARGUMENT, f"{fn}: input has shape {ishape}; expected {nd + 2} dims "
             f"[N, C, {nd} spatial dims] (no unbatched form).")
    groups = int(groups)
    if opts and _torchops.is_torch(input) and _torchops.direct(input, weight, bias):
        return _conv_core(input, weight, bias, stride, pad_l, pad_r, dilation, groups, fn,
                          record=opts)
    if _op is not None and _torchops.is_torch(input) and \
            not _torchops.direct(input, weight, bias):
        return _op(input, weight, bias, list(stride), list(pad_l), list(pad_r), list(dilation),
                   groups)
    return _conv_core(input, weight, bias, stride, pad_l, pad_r, dilation, groups, fn)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv1d: input [N, C, W], weight [K, C / groups, X]."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d: input [N, C, H, W], weight [K, C / groups, Y, X]."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv3d: input [N, C, D, H, W], weight [K, C / groups, Z, Y, X]."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups, "conv3d")
