"""permute: a new tensor holding x's dimensions in a new order (ck_permute)."""
import struct

from . import _fast, _lib, _runtime, _torchops
from ._lib import Status, call, fail
from ._tensor import TENSOR_SIZE, Pack, describe, empty, same_place


def _perm(dims, rank):
    p = tuple(d + rank if d < 0 else d for d in dims)
    if sorted(p) != list(range(rank)):
        fail(Status.INVALID_ARGUMENT, f"permute: argument 'dims' = {tuple(dims)} is not a "
             f"permutation of the {rank} dimensions 0..{rank - 1}.")
    return p


def _permute_core(x, dims, out=None, record=None):
    xa = describe(x, "x")
    perm = _perm(dims, xa.rank)
    if out is None:
        out, ya = empty(xa, tuple(xa.shape[d] for d in perm), xa.dtype)
    else:
        ya = describe(out, "out")
    place = same_place([xa, ya], ["x", "out"])
    p = (Pack.owned if record else Pack)(2 * TENSOR_SIZE + 4 * max(len(perm), 1))
    yp, xp = p.tensors([ya, xa])
    struct.pack_into(f"={len(perm)}i", p.buf, 2 * TENSOR_SIZE, *perm)
    ctx = _runtime.context(place)
    call(_lib.ck_permute, ctx, xp, p.base + 2 * TENSOR_SIZE, yp)
    if record:  # y's description first, then x's
        _fast.record(record, (x,), (out,), _lib.ck_permute,
                     (ctx, xp, p.base + 2 * TENSOR_SIZE, yp), p.buf, (TENSOR_SIZE, 0))
    return out


def _impl(x, dims):
    return _permute_core(x, dims)


def _fake(x, dims):
    perm = _perm(dims, x.dim())
    return x.new_empty(tuple(x.shape[d] for d in perm))


def _setup(ctx, inputs, output):
    ctx.dims = inputs[1]


def _backward(ctx, dy):
    rank = len(ctx.dims)
    perm = _perm(ctx.dims, rank)
    inverse = [0] * rank
    for i, d in enumerate(perm):
        inverse[d] = i
    return permute(dy.contiguous(), inverse), None


_op = _torchops.op("permute(Tensor x, int[] dims) -> Tensor", _impl, _fake, _backward, _setup)


def permute(x, dims, *, out=None):
    """x.permute(dims) materialized into a new packed tensor (torch.permute returns a view;
    this is x.permute(dims).contiguous() in one kernel)."""
    if out is None and not _fast.is_compiling() and isinstance(dims, (tuple, list)):
        opts = ("permute", tuple(dims))
        y = _fast.call(opts, x)  # a repeated eager call (_fast)
        if y is not None:
            return y
        if _torchops.is_torch(x) and _torchops.direct(x):
            return _permute_core(x, dims, record=opts)
    if out is None and _op is not None and _torchops.is_torch(x) and not _torchops.direct(x):
        return _op(x, list(dims))
    return _permute_core(x, dims, out)
