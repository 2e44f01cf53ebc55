"""Quantized GEMMs (ck/gemm.h, docs/ops-gemm.md "Block-scaled and mixed-input GEMM"):

    out = alpha * sum over K blocks kb of (A_kb @ B_kb) * sa(i, kb) * sb(kb, j)

block-scaled fp8 (DeepSeek-V3: A 1 x 128, B 128 x 128), row-col scales (fp8, SmoothQuant's
i8 x i8), and f16 / bf16 activations times B packed as int4 / uint4 (with zero points) / fp4
e2m1, two values per byte (low nibble = even k), with group scales. Each K block's partial sums
are promoted to f32 and scaled by ck's kernels; 4-bit values are dequantized in registers.
"""
import ctypes

from . import _lib, _runtime, _tensor, _torchops
from ._lib import Status, fail
from ._tensor import describe, empty, same_place
from .gemm import _ARGS, _NO_C, _NO_EXTRA_PTRS, COL, ROW, _create_plan, _matrix, _plans

__all__ = ["gemm_scaled"]

_FORMATS = {None: 0, "": 0, "int4": 1, "uint4": 2, "fp4": 3, "e2m1": 3}
_TENSOR, _VECTOR, _BLOCK = 0, 1, 2


def _scale(arg, name, mn, k, block, is_b):
    """(mode, block_mn, block_k, order, ld) of a scale tensor: None (per-tensor), 1-D (one
    per row of A / column of B) or 2-D (blocks; A's [M blocks, K blocks], B's [K blocks,
    N blocks], any order)."""
    if arg is None:
        return (_TENSOR, 0, 0, 0, 0)
    if arg.dtype != _tensor.F32:
        fail(Status.UNSUPPORTED, f"gemm_scaled: '{name}' must be float32, not "
             f"{_tensor.DTYPE_NAMES.get(arg.dtype)}.")
    if arg.rank == 1:
        if arg.shape[0] != mn or (mn > 1 and arg.strides[0] != 1):
            fail(Status.INVALID_ARGUMENT, f"gemm_scaled: '{name}' of shape {tuple(arg.shape)} "
                 f"must be a contiguous vector of {mn} values (one per "
                 f"{'column of B' if is_b else 'row of A'}).")
        return (_VECTOR, 0, 0, ROW, 0)
    if arg.rank != 2 or block is None or len(block) != 2:
        fail(Status.INVALID_ARGUMENT, f"gemm_scaled: '{name}' of shape {tuple(arg.shape)} "
             "must be 1-D (a vector) or 2-D (blocks, with the block given as (mn, k)).")
    bmn, bk = int(block[0]), int(block[1])
    if bmn < 1 or bk < 1:
        fail(Status.INVALID_ARGUMENT, f"gemm_scaled: blocks of {block}; accepted: positive.")
    nmn, nk = -(-mn // bmn), -(-k // bk)
    want = (nk, nmn) if is_b else (nmn, nk)
    if tuple(arg.shape) != want:
        fail(Status.INVALID_ARGUMENT, f"gemm_scaled: '{name}' has shape {tuple(arg.shape)}; "
             f"blocks of {bmn} x {bk} over {'K x N' if is_b else 'M x K'} need {want}.")
    order, ld = _matrix(arg, want[0], want[1], name, "gemm_scaled")
    return (_BLOCK, bmn, bk, order, ld)


def _core(a, b, a_scales=None, b_scales=None, a_block=(1, 128), b_block=None, b_format=None,
          b_zeros=None, out_dtype=None, alpha=1.0):
    aa, ba = describe(a, "a"), describe(b, "b")
    fmt = _FORMATS.get(b_format)
    if fmt is None:
        fail(Status.INVALID_ARGUMENT, f"gemm_scaled: b_format '{b_format}'; accepted: None, "
             "'int4', 'uint4', 'fp4'.")
    if aa.rank != 2 or ba.rank != 2:
        fail(Status.INVALID_ARGUMENT, "gemm_scaled: 'a' and 'b' must be matrices (2-D).")
    m, k = aa.shape
    if fmt:  # packed: b is the [N, K / 2] uint8 weight, two values of K per byte
        if ba.dtype != _tensor.U8 or ba.strides[1] != 1:
            fail(Status.INVALID_ARGUMENT, "gemm_scaled: a packed 'b' is a row-major uint8 "
                 f"[N, K / 2] array (two values per byte along K), not shape "
                 f"{tuple(ba.shape)} of {_tensor.DTYPE_NAMES.get(ba.dtype)}.")
        n = ba.shape[0]
        if 2 * ba.shape[1] != k:
            fail(Status.INVALID_ARGUMENT, f"gemm_scaled: packed 'b' {tuple(ba.shape)} holds "
                 f"K = {2 * ba.shape[1]} values per column; 'a' has K = {k}.")
        bo, bld = COL, (ba.strides[0] if n > 1 else ba.shape[1])
    else:
        k2, n = ba.shape
        if k2 != k:
            fail(Status.INVALID_ARGUMENT, f"gemm_scaled: 'a' {tuple(aa.shape)} and 'b' "
                 f"{tuple(ba.shape)} do not chain.")
        bo, bld = _matrix(ba, k, n, "b", "gemm_scaled")
    ao, ald = _matrix(aa, m, k, "a", "gemm_scaled")
    args, names = [aa, ba], ["a", "b"]
    sa = describe(a_scales, "a_scales") if a_scales is not None else None
    sb = describe(b_scales, "b_scales") if b_scales is not None else None
    zb = describe(b_zeros, "b_zeros") if b_zeros is not None else None
    for x, nm in ((sa, "a_scales"), (sb, "b_scales"), (zb, "b_zeros")):
        if x is not None:
            args.append(x), names.append(nm)
    place = same_place(args, names)
    if b_block is None:
        b_block = (1, k // sb.shape[0]) if fmt and sb is not None and sb.rank == 2 and \
            sb.shape[0] and k % sb.shape[0] == 0 else (128, 128)
    qa = _scale(sa, "a_scales", m, k, a_block, False)
    qb = _scale(sb, "b_scales", n, k, b_block, True)
    if zb is not None:
        if zb.dtype != _tensor.U8 or tuple(zb.shape) != tuple(sb.shape if sb else ()) or \
                tuple(zb.strides) != tuple(sb.strides):
            fail(Status.INVALID_ARGUMENT, "gemm_scaled: 'b_zeros' must be a uint8 array of "
                 "b_scales' shape and strides (one zero point per scale).")
    dd = _tensor.F32 if aa.dtype == _tensor.I8 else \
        (aa.dtype if aa.dtype in (_tensor.F16, _tensor.BF16) else _tensor.BF16)
    if out_dtype is not None:
        dd = _tensor.ck_dtype_of(out_dtype, "out_dtype")
    ctx = _runtime.context(place)
    bdt = _tensor.U8 if fmt else ba.dtype
    quant = qa + qb + (fmt, 1 if zb is not None else 0)
    key = ("q", ctx, m, n, k, aa.dtype, ao, ald, bdt, bo, bld, dd, quant)
    plan = _plans().get(key)
    if plan is None:
        plan = _create_plan(ctx, key, m, n, k, aa.dtype, ao, ald, bdt, bo, bld, _NO_C, ROW, 0,
                            dd, ROW, n, 0, 0, 0, 0, None, -1, quant=quant)
    out, da = empty(aa, (m, n), dd)
    st = _lib.ck_gemm_plan_execute(plan, _ARGS.pack(
        aa.ptr, ba.ptr, 0, da.ptr, 0, float(alpha), 0.0, 1.0, 1.0, 1.0, *_NO_EXTRA_PTRS,
        sa.ptr if sa else 0, sb.ptr if sb else 0, zb.ptr if zb else 0))
    if st:
        raise _lib.error()
    return out


def _impl(a, b, a_scales, b_scales, a_block, b_block, b_format, b_zeros, out_dtype, alpha):
    return _core(a, b, a_scales, b_scales, tuple(a_block) or (1, 128),
                 tuple(b_block) or None, b_format or None, b_zeros, out_dtype, alpha)


def _fake(a, b, a_scales, b_scales, a_block, b_block, b_format, b_zeros, out_dtype, alpha):
    import torch

    n = b.shape[0] if b_format else b.shape[1]
    if out_dtype is None:
        out_dtype = torch.float32 if a.dtype == torch.int8 else \
            (a.dtype if a.dtype in (torch.float16, torch.bfloat16) else torch.bfloat16)
    return a.new_empty((a.shape[0], n), dtype=out_dtype)


_op = _torchops.op(
    "gemm_scaled(Tensor a, Tensor b, Tensor? a_scales, Tensor? b_scales, int[] a_block, "
    "int[] b_block, str b_format, Tensor? b_zeros, ScalarType? out_dtype, float alpha) -> Tensor",
    _impl, _fake)


def gemm_scaled(a, b, *, a_scales=None, b_scales=None, a_block=(1, 128), b_block=None,
                b_format=None, b_zeros=None, out_dtype=None, alpha=1.0):
    """alpha * sum_kb (A_kb @ B_kb) * sa * sb, one kernel (no autograd).

    a [M, K]: fp8 e4m3/e5m2, int8, f16 or bf16, row- or column-major. b: [K, N] of a's kind
    (fp8 any mix, int8), or with b_format 'int4' / 'uint4' / 'fp4' a row-major uint8 [N, K/2]
    array holding two 4-bit values per byte along K (low nibble = even k) and a f16/bf16 a.
    a_scales: None (no scale), (M,) per row, or 2-D [ceil(M/bm), ceil(K/bk)] for a_block
    (bm, bk) (default (1, 128)). b_scales: None, (N,) per column, or 2-D [ceil(K/bk),
    ceil(N/bn)] for b_block (bn, bk) (default (128, 128); for packed b, (1, K / rows) from its
    shape: group scales). 2-D scales may be either order (e.g. DeepSeek's weight_scale_inv
    [N/128, K/128] passed as its transpose). b_zeros: uint8 zero points of uint4 b, shaped and
    strided as b_scales. float32 scales. out_dtype: default bf16 (fp8), f32 (int8), a's type
    (packed b)."""
    if _op is not None and _torchops.is_torch(a) and \
            not _torchops.direct(a, b, a_scales, b_scales, b_zeros):
        return _op(a, b, a_scales, b_scales, list(a_block or ()), list(b_block or ()),
                   b_format or "", b_zeros, out_dtype, float(alpha))
    return _core(a, b, a_scales, b_scales, a_block, b_block, b_format, b_zeros, out_dtype,
                 alpha)
