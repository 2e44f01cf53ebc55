"""Fused elementwise expressions (ck_elementwise) and casts (ck_cast)."""
import ctypes
import struct

from . import _fast, _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import TENSOR_SIZE, Pack, ck_dtype_of, describe, empty, same_place

_PROGRAM_SIZE = 4 + 4 + 64 * 24  # ck_ew_program: int count; ck_ew_step steps[64] (8-aligned)
_programs = {}


def _program(expr):
    """The parsed program of `expr` (parsed once per distinct text)."""
    return _program_entry(expr)[0]


def _program_entry(expr):
    """(program buffer, its address) of `expr`, parsed once per distinct text."""
    e = _programs.get(expr)
    if e is None:
        if not isinstance(expr, str):
            fail(Status.INVALID_ARGUMENT, f"elementwise: argument 'expr' is a "
                 f"{type(expr).__name__}; accepted: an expression such as 'relu(x0 * x1)'.")
        prog = ctypes.create_string_buffer(_PROGRAM_SIZE)
        call(_lib.ck_ew_parse, expr.encode(), prog)
        e = (prog, ctypes.addressof(prog))
        if len(_programs) < 4096:
            _programs[expr] = e
    return e


def _broadcast(shapes, names):
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s, n in zip(shapes, names):
        for i, d in enumerate(s):
            j = rank - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                fail(Status.INVALID_ARGUMENT, f"elementwise: argument '{n}' of shape "
                     f"{tuple(s)} does not broadcast with the others (dimension {i} is {d}, "
                     f"expected 1 or {out[j]}).")
    return tuple(out)


_WIDTH = {_tensor.F64: 4, _tensor.F32: 3, _tensor.F16: 2, _tensor.BF16: 1}
_NAMES = ("x0", "x1", "x2", "x3")


def _result_dtype(args):
    """The widest float type of the inputs (f64, f32, f16, bf16 in that order), else x0's."""
    best, width = args[0].dtype, 0
    for a in args:
        w = _WIDTH.get(a.dtype, 0)
        if w > width:
            best, width = a.dtype, w
    return best


def _ew_core(expr, inputs, dtype=None, out=None, record=None):
    if not 1 <= len(inputs) <= 4:
        fail(Status.INVALID_ARGUMENT, f"elementwise: {len(inputs)} inputs given; accepted: 1 "
             "to 4 (x0..x3).")
    names = _NAMES[:len(inputs)]
    args = [describe(t, n) for t, n in zip(inputs, names)]
    if out is None:
        shape = args[0].shape
        if len(args) > 1 and any(a.shape != shape for a in args):
            shape = _broadcast([a.shape for a in args], names)
        odt = _result_dtype(args) if dtype is None else ck_dtype_of(dtype)
        out, ya = empty(args[0], shape, odt)
    else:
        ya = describe(out, "out")
    place = same_place(args + [ya], names + ("out",))
    p = (Pack.owned if record else Pack)((len(args) + 1) * TENSOR_SIZE)
    addrs = p.tensors([ya] + args)
    ctx = _runtime.context(place)
    entry = _program_entry(expr)
    call(_lib.ck_elementwise, ctx, entry[1], addrs[1], len(args), addrs[0])
    if record:  # y's description first, then the inputs'
        _fast.record(record, inputs, (out,), _lib.ck_elementwise,
                     (ctx, entry[1], addrs[1], len(args), addrs[0]), p.buf,
                     tuple(i * TENSOR_SIZE for i in range(1, len(args) + 1)) + (0,), keep=entry)
    return out


def _ew_impl(expr, inputs, dtype):
    return _ew_core(expr, inputs, dtype)


def _ew_fake(expr, inputs, dtype):
    torch = _torchops.torch
    shape = _broadcast([tuple(t.shape) for t in inputs], [f"x{i}" for i in range(len(inputs))])
    if dtype is None:
        dtype = _tensor._CK_TO_TORCH[_result_dtype([describe_meta(t) for t in inputs])]
    return inputs[0].new_empty(shape, dtype=dtype)


class _Meta:
    __slots__ = ("dtype",)

    def __init__(self, d):
        self.dtype = d


def describe_meta(t):
    return _Meta(_tensor.ck_dtype_of(t.dtype))


def _steps(prog):
    count = struct.unpack_from("=i", prog, 0)[0]
    return [struct.unpack_from("=iidi4x", prog, 8 + 24 * i) for i in range(count)]


def _eval_torch(expr, inputs):
    """The program of expr evaluated with torch operations (differentiable): the backward of
    ck.elementwise is the gradient of this evaluation, computed by torch."""
    torch = _torchops.torch
    F = torch.nn.functional
    stack = []
    unary = {8: torch.neg, 9: torch.relu, 10: lambda a: F.gelu(a, approximate="tanh"),
             11: F.gelu, 12: F.silu, 13: torch.sigmoid, 14: torch.exp}
    binary = {2: torch.add, 3: torch.sub, 4: torch.mul, 5: torch.div, 6: torch.fmax,
              7: torch.fmin}
    for op, inp, value, dt in _steps(_program(expr)):
        if op == 0:
            stack.append(inputs[inp])
        elif op == 1:
            stack.append(torch.tensor(value, dtype=inputs[0].dtype, device=inputs[0].device))
        elif op in unary:
            stack.append(unary[op](stack.pop()))
        elif op in binary:
            b = stack.pop()
            stack.append(binary[op](stack.pop(), b))
        elif op == 15:
            stack.append(stack.pop() * value)
        else:  # cast: rounded value forward, identity gradient (straight through)
            a = stack.pop()
            tdt = _tensor._CK_TO_TORCH.get(dt)
            stack.append(a + (a.to(tdt).to(a.dtype) - a).detach() if tdt is not None else a)
    return stack[0]


def _ew_setup(ctx, inputs, output):
    expr, tensors, dtype = inputs
    ctx.expr = expr
    ctx.save_for_backward(*tensors)


def _ew_backward(ctx, dy):
    torch = _torchops.torch
    xs = ctx.saved_tensors
    wide = torch.float64 if any(x.dtype == torch.float64 for x in xs) else torch.float32
    with torch.enable_grad():
        leaves = [x.detach().to(wide).requires_grad_(x.is_floating_point()) for x in xs]
        y = _eval_torch(ctx.expr, leaves)
        diff = [t for t in leaves if t.requires_grad]
        grads = torch.autograd.grad(y, diff, dy.to(wide), allow_unused=True)
    it = iter(grads)
    out = []
    for x, leaf in zip(xs, leaves):
        g = next(it) if leaf.requires_grad else None
        if g is not None:
            # sum over the dimensions x was broadcast along
            while g.dim() > x.dim():
                g = g.sum(0)
            for d, n in enumerate(x.shape):
                if n == 1 and g.shape[d] != 1:
                    g = g.sum(d, keepdim=True)
            g = g.to(x.dtype)
        out.append(g)
    return None, out, None


_ew_op = _torchops.op("elementwise(str expr, Tensor[] inputs, ScalarType? dtype) -> Tensor",
                      _ew_impl, _ew_fake, _ew_backward, _ew_setup)


def _torch_dtype(dtype):
    if dtype is None or isinstance(dtype, _torchops.torch.dtype):
        return dtype
    return _tensor._CK_TO_TORCH.get(ck_dtype_of(dtype))


def elementwise(expr, *inputs, dtype=None, out=None):
    """out = expr(x0, x1, ...) per element in one kernel, inputs broadcast as in NumPy.
    expr uses x0..x3 (or a..d), + - * /, numbers and relu gelu gelu_tanh gelu_erf silu sigmoid
    exp neg max min add sub mul div scale(e, c) cast(e, dtype); computed in fp32 (fp64 when a
    tensor is f64). dtype: the output type (default: the widest float type of the inputs)."""
    if out is None and dtype is None and not _fast.is_compiling() and 1 <= len(inputs) <= 4:
        opts = ("ew", expr)
        y = _fast.call(opts, *inputs)  # a repeated eager call (_fast)
        if y is not None:
            return y
        if _torchops.is_torch(inputs[0]) and _torchops.direct(*inputs):
            return _ew_core(expr, inputs, record=opts)
    if out is None and _ew_op is not None and _torchops.is_torch(inputs[0] if inputs else None) \
            and not _torchops.direct(*inputs):
        return _ew_op(expr, list(inputs), _torch_dtype(dtype))
    return _ew_core(expr, inputs, dtype, out)


# ---- cast ---------------------------------------------------------------------------------
# ck_convert_options: ck_round_mode round; ck_overflow_mode overflow; float scale; uint64 seed
_CONVERT = struct.Struct("=iif4xQ")
_modes = {}


def _mode(fn, name, what):
    key = (what, name)
    v = _modes.get(key)
    if v is None:
        out = ctypes.c_int()
        call(fn, str(name).encode(), ctypes.byref(out))
        v = _modes[key] = out.value
    return v


def _cast_core(x, dtype, scale, rounding, overflow, seed, out=None, record=None):
    xa = describe(x, "x")
    if out is None:
        out, ya = empty(xa, xa.shape, ck_dtype_of(dtype))
    else:
        ya = describe(out, "out")
    place = same_place([xa, ya], ["x", "out"])
    p = (Pack.owned if record else Pack)(2 * TENSOR_SIZE + _CONVERT.size)
    yp, xp = p.tensors([ya, xa])
    _CONVERT.pack_into(p.buf, 2 * TENSOR_SIZE,
                       _mode(_lib.ck_round_mode_from_name, rounding, "round"),
                       _mode(_lib.ck_overflow_mode_from_name, overflow, "overflow"),
                       scale, seed)
    ctx = _runtime.context(place)
    call(_lib.ck_cast, ctx, xp, yp, p.base + 2 * TENSOR_SIZE)
    if record:  # y's description first, then x's
        _fast.record(record, (x,), (out,), _lib.ck_cast, (ctx, xp, yp, p.base + 2 * TENSOR_SIZE),
                     p.buf, (TENSOR_SIZE, 0))
    return out


def _cast_impl(x, dtype, scale, rounding, overflow, seed):
    return _cast_core(x, dtype, scale, rounding, overflow, seed)


def _cast_fake(x, dtype, scale, rounding, overflow, seed):
    return x.new_empty(x.shape, dtype=dtype)


def _cast_setup(ctx, inputs, output):
    ctx.scale, ctx.dtype = inputs[2], inputs[0].dtype


def _cast_backward(ctx, dy):  # rounding is taken as the identity (straight through), as .to()
    return (dy * ctx.scale).to(ctx.dtype), None, None, None, None, None


_cast_op = _torchops.op("cast(Tensor x, ScalarType dtype, float scale, str rounding, "
                        "str overflow, int seed) -> Tensor", _cast_impl, _cast_fake,
                        _cast_backward, _cast_setup)


def cast(x, dtype, *, scale=1.0, rounding="rne", overflow="default", seed=0, out=None):
    """x * scale converted to dtype, bit for bit as ck's conversions: rounding 'rne' (nearest
    even), 'rtz', 'rna' or 'sr' (stochastic, element i uses a random word from seed); overflow
    'default' (saturate for fp8, IEEE otherwise), 'sat' or 'nonsat'."""
    if out is None and not _fast.is_compiling():
        opts = ("cast", dtype, scale, rounding, overflow, seed)
        y = _fast.call(opts, x)  # a repeated eager call (_fast)
        if y is not None:
            return y
        if _torchops.is_torch(x) and _torchops.direct(x):
            return _cast_core(x, dtype, scale, rounding, overflow, seed, record=opts)
    if out is None and _cast_op is not None and _torchops.is_torch(x) and \
            not _torchops.direct(x):
        return _cast_op(x, _torch_dtype(dtype), float(scale), rounding, overflow, int(seed))
    return _cast_core(x, dtype, scale, rounding, overflow, seed, out)
