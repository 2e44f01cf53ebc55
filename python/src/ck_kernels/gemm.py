"""matmul and gemm on tensor cores (ck/gemm.h):

    D = epilogue(alpha * A B + beta * C),  epilogue(x) = program(act(x + bias))

Each operand is a 2-D tensor with one unit stride: row-major, or column-major (a transposed
view such as a.T / a.t(), read in place, no copy), or a 3-D batch of such matrices
([batch, rows, cols], any batch stride): one strided batched GEMM, a 2-D operand (or a batch of
1) broadcast to every batch as torch.matmul does. The problem (sizes, types, orders, leading
dimensions, epilogue) is made into a ck_gemm_plan once per context (that is, per device and
stream of the calling thread) and cached here, so a repeated call only packs the pointers and
launches (ck_gemm_plan_execute). A and B pointers that are not 16-byte aligned, where the plan
would copy with 16-byte vectors, go through the one-call ck_gemm(), which picks element-wise
copies (rare: views starting inside a row).

Autograd for matmul: dA = dC B^T and dB = A^T dC, two more ck GEMMs on transposed views.
"""
import ctypes
import struct
import sys

from . import _fast, _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import TENSOR, TENSOR_SIZE, ck_dtype_of, describe, empty, same_place

__all__ = ["matmul", "gemm", "tune", "plan_instance", "ACTIVATIONS"]

ROW, COL = 0, 1
# ck_gemm_problem: m, n, k; a, b, c, d (dtype, order, ld, batch_stride); compute, bias,
# bias_dtype, activation; const ck_ew_program *epilogue; batch, bias_batch_stride;
# extra_count; extras[4] (op, broadcast, dtype, order, ld, batch_stride); scale_a, scale_b
# (mode, block_mn, block_k, order, ld: per-tensor here); b_packed, b_zeros
_PROBLEM = struct.Struct("=3q" + "iiqq" * 4 + "iiiiQ" + "2q" + "i4x" + "iiiiqq" * 4 +
                         "iiiiq" * 2 + "ii")
_NO_QUANT = (0,) * 12
# ck_gemm_args: a, b, c, d, bias; alpha, beta, scale_a, scale_b, scale_d; extra[4];
# a_scales, b_scales, b_zeros
_ARGS = struct.Struct("=5Q5f4x4Q3Q")
_MAX_EXTRAS = 4
_EXTRA_OPS = {"add": 1, "mul": 2}
_NO_EXTRAS = (0,) * (1 + 6 * _MAX_EXTRAS)
_NO_EXTRA_PTRS = (0,) * _MAX_EXTRAS
# ck_gemm_options: alpha, beta, scale_a, scale_b, scale_d; compute; bias; bias_mode;
# activation; epilogue; instance
_OPTIONS = struct.Struct("=5fiQiiQi4x")
# ck_gemm_candidate: id, name[96], family, tile_m, tile_n, tile_k, stages, cluster,
# est_waves, score, tuned
_CANDIDATE = struct.Struct("=i96s6i4xddi4x")
_NO_C = 15  # CK_DTYPE_COUNT: the problem has no C

ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu_tanh": 2, "gelu": 3, "gelu_erf": 3,
               "silu": 4, "sigmoid": 5}
_COMPUTE = {None: 0, "default": 0, "tf32": 1, "f32": 2, "3xtf32": 2}
_BIAS_MODES = {"row": 1, "col": 2, "column": 2}
_BIAS_NAMES = {1: "row", 2: "col"}
# D's type when out_dtype is not given: the inputs' own for 16-bit and f32 inputs, f32 for
# fp8, i32 for i8 (the accumulator)
_DEFAULT_D = {_tensor.F32: _tensor.F32, _tensor.F16: _tensor.F16, _tensor.BF16: _tensor.BF16,
              _tensor.FP8_E4M3: _tensor.F32, _tensor.FP8_E5M2: _tensor.F32,
              _tensor.I8: _tensor.I32}
_ITEMSIZE = {_tensor.F32: 4, _tensor.F16: 2, _tensor.BF16: 2, _tensor.FP8_E4M3: 1,
             _tensor.FP8_E5M2: 1, _tensor.I8: 1, _tensor.I32: 4, _tensor.F64: 8,
             _tensor.U8: 1}

_MAX_PLANS = 1024


def _plans():
    """The calling thread's plan cache: problem key (context first) -> plan address."""
    s = _runtime._state()
    p = s.get("gemm_plans")
    if p is None:
        p = s["gemm_plans"] = {}
    return p


def clear_plans():
    """Destroy the calling thread's cached GEMM plans (their kernels stay in the contexts'
    kernel caches, so a later call only re-plans)."""
    plans = _plans()
    _fast.clear()  # templates hold plans
    for plan in plans.values():
        _lib.ck_gemm_plan_destroy(plan)
    plans.clear()


def plan_count():
    """Number of GEMM plans the calling thread has cached."""
    return len(_plans())


def _matrix(arg, rows, cols, name, op):
    """(order, ld) of a rows x cols operand (or of each matrix of a batch) from its strides (in
    elements)."""
    s0, s1 = arg.strides[-2:]
    if s1 == 1 and (rows == 1 or s0 >= cols):
        return ROW, (cols if rows == 1 else s0)
    if s0 == 1 and (cols == 1 or s1 >= rows):
        return COL, (rows if cols == 1 else s1)
    fail(Status.UNSUPPORTED, f"{op}: argument '{name}' of shape ({rows}, {cols}) has strides "
         f"{tuple(arg.strides)}; accepted: row-major (strides (ld >= {cols}, 1)) or "
         f"column-major (strides (1, ld >= {rows}), e.g. a transposed view); make it so "
         "first (e.g. .contiguous()).")


def _bias_mode(ba, m, n, mode, op):
    """CK_GEMM_BIAS_ROW / _COL for bias `ba` over an m x n result, by NumPy broadcasting
    ((n,) or (1, n): one value per column; (m, 1): one per row) or by `mode`."""
    shape = tuple(ba.shape)
    if mode is not None:
        code = _BIAS_MODES.get(mode)
        if code is None:
            fail(Status.INVALID_ARGUMENT, f"{op}: argument 'bias_mode' = {mode!r}; accepted: "
                 "'row' (one value per row, M values) or 'col' (one per column, N values).")
    elif shape in ((n,), (1, n)):
        code = 2
    elif shape == (m, 1):
        code = 1
    else:
        fail(Status.INVALID_ARGUMENT, f"{op}: argument 'bias' of shape {shape} does not "
             f"broadcast over the {m} x {n} result; accepted: ({n},) or (1, {n}) (per column), "
             f"({m}, 1) (per row), or bias_mode='row' / 'col' with {m} / {n} values.")
    want = m if code == 1 else n
    count = 1
    for d in shape:
        count *= d
    if count != want:
        fail(Status.INVALID_ARGUMENT, f"{op}: argument 'bias' of shape {shape} with bias_mode "
             f"'{_BIAS_NAMES[code]}' must hold {want} values ("
             f"{'M' if code == 1 else 'N'}).")
    if want > 1:
        for d, s in zip(shape, ba.strides):
            if d != 1 and s != 1:
                fail(Status.UNSUPPORTED, f"{op}: argument 'bias' of shape {shape} has strides "
                     f"{tuple(ba.strides)}; the bias vector must be contiguous.")
    return code


def _create_plan(ctx, key, m, n, k, ad, ao, ald, bd, bo, bld, cd, co, cld, dd, do, dld,
                 compute, bias, bias_dtype, act, epi, instance, batch=1, strides=(0,) * 5,
                 extras=_NO_EXTRAS, tune=None, quant=_NO_QUANT):
    """strides: the batch strides of a, b, c, d and bias (elements; 0: broadcast).
    extras: extra_count and the 4 packed ck_gemm_extra fields (_extras_fields).
    quant: scale_a, scale_b (mode, block_mn, block_k, order, ld each), b_packed, b_zeros.
    tune: (packed ck_gemm_args, reps, progress): time the candidates (ck_gemm_tune) and
    return the winner instead of planning."""
    prog = 0
    if epi is not None:
        from .elementwise import _program

        prog = ctypes.addressof(_program(epi))  # copied into the plan
    sa, sb, sc, sd, sbias = strides
    buf = ctypes.create_string_buffer(_PROBLEM.pack(
        m, n, k, ad, ao, ald, sa, bd, bo, bld, sb, cd, co, cld, sc, dd, do, dld, sd, compute,
        bias, bias_dtype, act, prog, batch, sbias, *extras, *quant))
    if tune is not None:
        return _tune_problem(ctx, buf, *tune)
    out = ctypes.c_void_p()
    call(_lib.ck_gemm_plan_create, ctx, buf, instance, ctypes.byref(out))
    plans = _plans()
    if len(plans) >= _MAX_PLANS:
        clear_plans()
    plans[key] = out.value
    return out.value


def _candidate(buf):
    v = _CANDIDATE.unpack(bytes(buf))
    fields = ("id", "name", "family", "tile_m", "tile_n", "tile_k", "stages", "cluster",
              "est_waves", "score", "tuned")
    d = dict(zip(fields, v))
    d["name"] = d["name"].split(b"\0", 1)[0].decode()
    return d


def _tune_problem(ctx, problem, args, reps, progress):
    def report(user, index, count, cand, ms):
        if progress:
            c = _candidate(ctypes.string_at(cand, _CANDIDATE.size))
            t = "%.4f ms" % ms if ms >= 0 else "could not run"
            print("ck tune gemm: %d/%d %s %s" % (index + 1, count, c["name"], t), file=sys.stderr,
                  flush=True)

    cb = _lib.GEMM_TUNE_PROGRESS(report)
    best = ctypes.create_string_buffer(_CANDIDATE.size)
    best_ms = ctypes.c_double()
    call(_lib.ck_gemm_tune, ctx, problem, ctypes.create_string_buffer(args, len(args)), reps, cb,
         None, best, ctypes.byref(best_ms))
    clear_plans()  # plans made before took the heuristic's instance
    d = _candidate(best)
    d["ms"] = best_ms.value
    return d


def _pack_tensor(buf, off, ptr, dtype, shape, strides):
    r = len(shape)
    TENSOR.pack_into(buf, off, ptr, dtype, r, *shape, *(0,) * (8 - r), *strides,
                     *(0,) * (8 - r))
    return ctypes.addressof(buf) + off


def _run_onecall(ctx, aa, ba, ca, da, bias_a, bias_code, bias_len, alpha, beta, sa, sb, sd,
                 compute, act, epi, instance, bias_batch=None):
    """ck_gemm() over tensor descriptions: used for A / B pointers that are not 16-byte
    aligned (the one-call form then chooses element-wise copies)."""
    buf = ctypes.create_string_buffer(5 * TENSOR_SIZE + _OPTIONS.size)
    pa = _pack_tensor(buf, 0, aa.ptr, aa.dtype, aa.shape, aa.strides)
    pb = _pack_tensor(buf, TENSOR_SIZE, ba.ptr, ba.dtype, ba.shape, ba.strides)
    pd = _pack_tensor(buf, 2 * TENSOR_SIZE, da.ptr, da.dtype, da.shape, da.strides)
    pc = _pack_tensor(buf, 3 * TENSOR_SIZE, ca.ptr, ca.dtype, ca.shape, ca.strides) \
        if ca is not None else None
    if bias_a is None:
        pbias = 0
    elif bias_batch:  # (batch, stride): one vector per batch
        pbias = _pack_tensor(buf, 4 * TENSOR_SIZE, bias_a.ptr, bias_a.dtype,
                             (bias_batch[0], bias_len), (bias_batch[1], 1))
    else:
        pbias = _pack_tensor(buf, 4 * TENSOR_SIZE, bias_a.ptr, bias_a.dtype, (bias_len,), (1,))
    prog = 0
    if epi is not None:
        from .elementwise import _program

        prog = ctypes.addressof(_program(epi))
    _OPTIONS.pack_into(buf, 5 * TENSOR_SIZE, alpha, beta, sa, sb, sd, compute, pbias,
                       bias_code, act, prog, instance)
    call(_lib.ck_gemm, ctx, pa, pb, pc, pd, ctypes.addressof(buf) + 5 * TENSOR_SIZE)


def _extras_desc(extras, m, n, op):
    """The multi-D extras [(tensor, 'add' | 'mul'), ...] as (described tensors, the problem's
    extra fields, pointers). (M, N): full, (N,) or (1, N): per column, (M, 1): per row; each
    serves every batch."""
    if extras is None:
        return [], _NO_EXTRAS, _NO_EXTRA_PTRS
    extras = list(extras)
    if len(extras) > _MAX_EXTRAS:
        fail(Status.INVALID_ARGUMENT, f"{op}: {len(extras)} extras; accepted: at most "
             f"{_MAX_EXTRAS} (tensor, 'add' | 'mul') pairs.")
    descs, fields, ptrs = [], [len(extras)], []
    for i, item in enumerate(extras):
        if not isinstance(item, (tuple, list)) or len(item) != 2 or item[1] not in _EXTRA_OPS:
            fail(Status.INVALID_ARGUMENT, f"{op}: extras[{i}] = {item!r}; expected a pair "
                 "(tensor, 'add' | 'mul').")
        t, opname = item
        ea = describe(t, f"extras[{i}]")
        shape, st = tuple(ea.shape), tuple(ea.strides)
        if shape == (m, n) and (m, n) != (1, 1):
            eo, eld = _matrix(ea, m, n, f"extras[{i}]", op)
            bc = 3
        elif shape in ((n,), (1, n)) and (n == 1 or st[-1] == 1):
            bc, eo, eld = 2, ROW, 0
        elif shape == (m, 1) and (m == 1 or st[0] == 1):
            bc, eo, eld = 1, ROW, 0
        else:
            fail(Status.INVALID_ARGUMENT, f"{op}: extras[{i}] has shape {shape} (strides {st}); "
                 f"accepted: ({m}, {n}) (full), ({n},) or (1, {n}) (per column) or ({m}, 1) "
                 "(per row), vectors contiguous.")
        descs.append(ea)
        fields += [_EXTRA_OPS[opname], bc, ea.dtype, eo, eld, 0]
        ptrs.append(ea.ptr)
    fields += [0] * (6 * (_MAX_EXTRAS - len(extras)))
    ptrs += [0] * (_MAX_EXTRAS - len(extras))
    return descs, tuple(fields), tuple(ptrs)


def _gemm_core(a, b, c=None, alpha=1.0, beta=None, bias=None, bias_mode=None, activation=None,
               epilogue=None, out_dtype=None, compute=None, scale_a=1.0, scale_b=1.0,
               scale_d=1.0, out=None, instance=-1, op="gemm", want_plan=False, extras=None,
               tune=None):
    aa, ba = describe(a, "a"), describe(b, "b")
    if aa.rank not in (2, 3) or ba.rank not in (2, 3):
        fail(Status.INVALID_ARGUMENT if min(aa.rank, ba.rank) < 2 else Status.NOT_IMPLEMENTED,
             f"{op}: 'a' has shape {tuple(aa.shape)} and 'b' {tuple(ba.shape)}; ck's GEMM "
             "takes 2-D operands (matrices) or 3-D batches of them ([batch, rows, cols]; a "
             "2-D operand is broadcast to every batch).")
    m, k = aa.shape[-2:]
    k2, n = ba.shape[-2:]
    if k2 != k:
        fail(Status.INVALID_ARGUMENT, f"{op}: 'a' of shape {tuple(aa.shape)} and 'b' of shape "
             f"{tuple(ba.shape)} do not chain: a's columns ({k}) must equal b's rows ({k2}).")
    batched = aa.rank == 3 or ba.rank == 3
    lead = [x.shape[0] for x in (aa, ba) if x.rank == 3]
    batch = max(lead) if lead else 1
    if any(x not in (1, batch) for x in lead):
        fail(Status.INVALID_ARGUMENT, f"{op}: the batches of 'a' {tuple(aa.shape)} and 'b' "
             f"{tuple(ba.shape)} do not broadcast: each must be {batch} or 1.")
    mshape = (batch, m, n) if batched else (m, n)

    def bstride(x):  # the batch stride of an operand: 0 broadcasts it
        return x.strides[0] if x.rank == 3 and x.shape[0] > 1 else 0

    args, names = [aa, ba], ["a", "b"]
    ca = bias_a = None
    if c is not None:
        ca = describe(c, "c")
        cshape = tuple(ca.shape)
        if cshape != (m, n) and not (batched and len(cshape) == 3 and cshape[1:] == (m, n) and
                                     cshape[0] in (1, batch)):
            fail(Status.INVALID_ARGUMENT, f"{op}: argument 'c' has shape {cshape}; "
                 f"expected {mshape}, the result's shape"
                 f"{' (or a batch of 1, or one matrix, broadcast)' if batched else ''} (a "
                 "per-row or per-column vector goes in 'bias').")
        args.append(ca), names.append("c")
        if beta is None:
            beta = 1.0
    elif beta is None:
        beta = 0.0
    elif beta != 0:
        fail(Status.INVALID_ARGUMENT, f"{op}: argument 'beta' = {beta} without 'c'; give c "
             "(the matrix beta scales) or leave beta at 0.")
    bias_code = 0
    bias_dtype = 0
    bias_stride = 0
    if bias is not None:
        bias_a = describe(bias, "bias")
        bv = bias_a
        if batched and bias_a.rank == 3:  # (batch or 1, 1, N) / (batch or 1, M, 1)
            if bias_a.shape[0] not in (1, batch):
                fail(Status.INVALID_ARGUMENT, f"{op}: argument 'bias' of shape "
                     f"{tuple(bias_a.shape)}: its batch must be {batch} or 1.")
            bias_stride = bstride(bias_a)
            bv = type("_BiasView", (), {"shape": tuple(bias_a.shape[1:]),
                                        "strides": tuple(bias_a.strides[1:])})()
        bias_code = _bias_mode(bv, m, n, bias_mode, op)
        bias_dtype = bias_a.dtype
        args.append(bias_a), names.append("bias")
    elif bias_mode is not None:
        fail(Status.INVALID_ARGUMENT, f"{op}: argument 'bias_mode' = {bias_mode!r} without "
             "'bias'.")
    xdescs, xfields, xptrs = _extras_desc(extras, m, n, op)
    for i, xa in enumerate(xdescs):
        args.append(xa), names.append(f"extras[{i}]")
    act = ACTIVATIONS.get(activation, -1) if isinstance(activation, (str, type(None))) else -1
    if act < 0:
        fail(Status.INVALID_ARGUMENT, f"{op}: argument 'activation' = {activation!r}; accepted: "
             "None, 'relu', 'gelu' (erf, as torch's default), 'gelu_tanh', 'silu', 'sigmoid'.")
    cmp = _COMPUTE.get(compute, -1) if isinstance(compute, (str, type(None))) else -1
    if cmp < 0:
        fail(Status.INVALID_ARGUMENT, f"{op}: argument 'compute' = {compute!r}; accepted: None "
             "(the inputs' own tensor-core type; TF32 for float32), 'tf32', or 'f32' (float32 "
             "inputs with f32-class accuracy, 3xTF32).")
    if out is None:
        if out_dtype is None:
            dd = _DEFAULT_D.get(aa.dtype)
            if dd is None:  # let ck refuse the input types with its sentence
                dd = _tensor.F32
        else:
            dd = ck_dtype_of(out_dtype, "out_dtype")
        out, da = empty(aa, mshape, dd)
    else:
        da = describe(out, "out")
        if tuple(da.shape) != mshape:
            fail(Status.INVALID_ARGUMENT, f"{op}: argument 'out' has shape {tuple(da.shape)}; "
                 f"expected {mshape}.")
        if out_dtype is not None and ck_dtype_of(out_dtype, "out_dtype") != da.dtype:
            fail(Status.INVALID_ARGUMENT, f"{op}: argument 'out_dtype' = {out_dtype} differs "
                 f"from the type of 'out' ({_tensor.DTYPE_NAMES.get(da.dtype)}).")
        args.append(da), names.append("out")
    place = same_place(args, names)
    if m == 0 or n == 0 or batch == 0:
        return (out, None) if want_plan else out
    if k == 0:
        if op == "matmul":  # an empty sum: zeros, as torch.matmul
            if da.kind == "torch":
                out.zero_()
            else:
                out[...] = 0
            return (out, None) if want_plan else out
        fail(Status.UNSUPPORTED, f"{op}: k = 0 (a is {m} x 0); ck's GEMM takes k >= 1 (the "
             "epilogue alone is an elementwise operation: ck.elementwise).")
    ao, ald = _matrix(aa, m, k, "a", op)
    bo, bld = _matrix(ba, k, n, "b", op)
    do, dld = _matrix(da, m, n, "out", op)
    if ca is not None:
        co, cld = _matrix(ca, m, n, "c", op)
        cd = ca.dtype
    else:
        cd, co, cld = _NO_C, ROW, 0
    strides = (bstride(aa), bstride(ba), bstride(ca) if ca is not None else 0, bstride(da),
               bias_stride)
    if batch == 1:
        strides = (0,) * 5
    ctx = _runtime.context(place)
    # a plan copies A / B with 16-byte vectors where ld * size (and the batch stride * size) is
    # a multiple of 16; such copies need 16-byte aligned pointers
    ia, ib = _ITEMSIZE.get(aa.dtype, 1), _ITEMSIZE.get(ba.dtype, 1)
    if (aa.ptr % 16 and (ald * ia) % 16 == 0 and (strides[0] * ia) % 16 == 0) or \
            (ba.ptr % 16 and (bld * ib) % 16 == 0 and (strides[1] * ib) % 16 == 0):
        if xdescs:
            fail(Status.UNSUPPORTED, f"{op}: 'a' or 'b' is not 16-byte aligned, which only the "
                 "one-call form handles, and it takes no extras; pass aligned operands.")
        _run_onecall(ctx, aa, ba, ca, da, bias_a, bias_code, m if bias_code == 1 else n,
                     alpha, beta, scale_a, scale_b, scale_d, cmp, act, epilogue,
                     instance, (batch, bias_stride) if bias_stride else None)
        return (out, None) if want_plan else out
    key = (ctx, m, n, k, aa.dtype, ao, ald, ba.dtype, bo, bld, cd, co, cld, da.dtype, do, dld,
           cmp, bias_code, bias_dtype, act, epilogue, instance, batch, strides, xfields)
    args = _ARGS.pack(aa.ptr, ba.ptr, ca.ptr if ca is not None else 0, da.ptr,
                      bias_a.ptr if bias_a is not None else 0, alpha, beta, scale_a, scale_b,
                      scale_d, *xptrs, 0, 0, 0)
    plan = None if tune is not None else _plans().get(key)
    if plan is None:
        plan = _create_plan(ctx, key, m, n, k, aa.dtype, ao, ald, ba.dtype, bo, bld, cd, co,
                            cld, da.dtype, do, dld, cmp, bias_code, bias_dtype, act, epilogue,
                            instance, batch, strides, xfields,
                            (args,) + tune if tune is not None else None)
        if tune is not None:
            return plan  # the winner's description
    st = _lib.ck_gemm_plan_execute(plan, args)
    if st:
        raise _lib.error()
    return (out, plan) if want_plan else out


def _matmul_core(a, b):
    """a @ b for the common case (matrices on one device, nonempty, of a type with a default
    D, aligned) on _gemm_bias_act's short path; everything else takes _gemm_core."""
    rec = _MM_OPTS if _torchops.is_torch(a) and _torchops.direct(a, b) else None
    y = _gemm_bias_act(a, b, None, None, 1.0, "matmul", record=rec)
    return y if y is not None else _gemm_core(a, b, op="matmul")


_MM_OPTS = ("gemm", None, 1.0)  # the call-template options of matmul = gemm without epilogue


def _gemm_bias_act(a, b, bias, activation, alpha, op="gemm", record=None):
    """act(alpha * a @ b + bias) for matrices and a per-column bias vector (N,) or none (the
    plain product and the common epilogue) with the fewest steps per call; None when the case
    is not this one (the caller then takes _gemm_core)."""
    aa, ba = describe(a, "a"), describe(b, "b")
    sa, sb = aa.shape, ba.shape
    dd = _DEFAULT_D.get(aa.dtype)
    act = ACTIVATIONS.get(activation, -1) if isinstance(activation, (str, type(None))) else -1
    if len(sa) != 2 or len(sb) != 2 or dd is None or aa.place != ba.place or act < 0:
        return None
    m, k = sa
    k2, n = sb
    if k != k2 or not m or not n or not k:
        return None
    bias_a, bias_dtype, code = None, 0, 0
    if bias is not None:
        bias_a = describe(bias, "bias")
        if bias_a.shape != (n,) or (n > 1 and bias_a.strides[0] != 1) or \
                bias_a.place != aa.place:
            return None
        bias_dtype, code = bias_a.dtype, 2
    ao, ald = _matrix(aa, m, k, "a", op)
    bo, bld = _matrix(ba, k, n, "b", op)
    if (aa.ptr % 16 and (ald * _ITEMSIZE.get(aa.dtype, 1)) % 16 == 0) or \
            (ba.ptr % 16 and (bld * _ITEMSIZE.get(ba.dtype, 1)) % 16 == 0):
        return None
    ctx = _runtime.context(aa.place)
    key = ("ba", ctx, m, n, k, aa.dtype, ao, ald, ba.dtype, bo, bld, dd, bias_dtype, code, act)
    plan = _plans().get(key)
    if plan is None:
        plan = _create_plan(ctx, key, m, n, k, aa.dtype, ao, ald, ba.dtype, bo, bld, _NO_C,
                            ROW, 0, dd, ROW, n, 0, code, bias_dtype, act, None, -1)
    out, da = empty(aa, (m, n), dd)
    args = _ARGS.pack(aa.ptr, ba.ptr, 0, da.ptr, bias_a.ptr if bias_a is not None else 0,
                      alpha, 0.0, 1.0, 1.0, 1.0, *_NO_EXTRA_PTRS, 0, 0, 0)
    if not record:
        if _lib.ck_gemm_plan_execute(plan, args):
            raise _lib.error()
        return out
    # the call from a buffer a template keeps: a, b, (c,) d, bias pointers first; a and b
    # must stay 16-byte aligned where the plan copies them with 16-byte vectors
    buf = ctypes.create_string_buffer(args, len(args))
    if _lib.ck_gemm_plan_execute(plan, buf):
        raise _lib.error()
    align = (16 if (ald * _ITEMSIZE.get(aa.dtype, 1)) % 16 == 0 else 1,
             16 if (bld * _ITEMSIZE.get(ba.dtype, 1)) % 16 == 0 else 1)
    ts = (a, b) if bias is None else (a, b, bias)
    _fast.record(record, ts, (out,), _lib.ck_gemm_plan_execute, (plan, ctypes.addressof(buf)),
                 buf, (0, 8) + ((32,) if bias is not None else ()) + (24,),
                 align + ((1,) if bias is not None else ()))
    return out


def tune(a, b, c=None, *, reps=20, progress=True, **kw):
    """Time every candidate instance of gemm(a, b, c, **kw) on these tensors (their output is
    overwritten; pass out= to choose it), store the fastest in ck's tuning table for this
    device and problem (as `ck tune gemm` does), and return it as a dict (id, name, ..., ms).
    Later gemm/matmul calls with the same problem on this device use it. progress: one line
    per candidate on stderr."""
    if int(reps) < 1:
        fail(Status.INVALID_ARGUMENT, f"tune: reps = {reps}; at least 1 timed run is needed.")
    r = _gemm_core(a, b, c, op="tune", tune=(int(reps), bool(progress)), **kw)
    if not isinstance(r, dict):
        fail(Status.INVALID_ARGUMENT, "tune: this problem runs without a plan (an empty result, "
             "or A / B not 16-byte aligned), so there is nothing to tune.")
    return r


def plan_instance(a, b, **kw):
    """The instance ck chooses for gemm(a, b, **kw), as a dict (id, name, family, tile_m,
    tile_n, tile_k, stages, cluster, est_waves, score, tuned); runs the GEMM once."""
    _, plan = _gemm_core(a, b, want_plan=True, **kw)
    if plan is None:
        fail(Status.INVALID_ARGUMENT, "plan_instance: this call used no cached plan (empty "
             "result, or A / B not 16-byte aligned).")
    buf = ctypes.create_string_buffer(_CANDIDATE.size)
    call(_lib.ck_gemm_plan_instance, plan, buf)
    return _candidate(buf.raw)


# ---- torch custom ops ----------------------------------------------------------------------
def _torch_dtype(dtype):
    if dtype is None or isinstance(dtype, _torchops.torch.dtype):
        return dtype
    return _tensor._CK_TO_TORCH.get(ck_dtype_of(dtype, "out_dtype"))


def _as_matrix(t):
    """t itself when ck reads it in place (one unit stride in each matrix), else a contiguous
    copy: for gradients, which autograd may hand over expanded (stride 0)."""
    s0, s1 = t.stride()[-2:]
    r, c = t.shape[-2:]
    if (s1 == 1 and (r == 1 or s0 >= c)) or (s0 == 1 and (c == 1 or s1 >= r)):
        return t
    return t.contiguous()


def _mm_impl(a, b):
    return _matmul_core(a, b)


def _result_shape(a, b, op):
    """The shape of a @ b for 2-D / 3-D operands (a 2-D one broadcast over the batch)."""
    if a.dim() not in (2, 3) or b.dim() not in (2, 3) or a.shape[-1] != b.shape[-2]:
        fail(Status.INVALID_ARGUMENT, f"{op}: 'a' of shape {tuple(a.shape)} and 'b' of "
             f"shape {tuple(b.shape)} are not matrices (or batches of them) that chain.")
    lead = [x.shape[0] for x in (a, b) if x.dim() == 3]
    mn = (a.shape[-2], b.shape[-1])
    return (max(lead),) + mn if lead else mn


def _mm_fake(a, b):
    dd = _DEFAULT_D.get(_tensor._TORCH_TO_CK.get(a.dtype), _tensor.F32)
    return a.new_empty(_result_shape(a, b, "matmul"), dtype=_tensor._CK_TO_TORCH[dd])


def _mm_setup(ctx, inputs, output):
    a, b = inputs
    ctx.save_for_backward(a, b)


def _mm_backward(ctx, dc):
    a, b = ctx.saved_tensors
    da = db = None
    dc = _as_matrix(dc)
    if dc.dtype != a.dtype:
        dc = dc.to(a.dtype)
    # dA = dC B^T, dB = A^T dC (transposes read in place: the other order); an operand
    # broadcast over the batch gets the sum of its batches' gradients
    if ctx.needs_input_grad[0]:
        da = _mm_op(dc, b.transpose(-1, -2))
        if da.dim() > a.dim() or (a.dim() == 3 and a.shape[0] == 1 and da.shape[0] > 1):
            da = da.sum(0, keepdim=a.dim() == 3)
    if ctx.needs_input_grad[1]:
        db = _mm_op(a.transpose(-1, -2), dc)
        if db.dim() > b.dim() or (b.dim() == 3 and b.shape[0] == 1 and db.shape[0] > 1):
            db = db.sum(0, keepdim=b.dim() == 3)
    return da, db


_mm_op = _torchops.op("matmul(Tensor a, Tensor b) -> Tensor", _mm_impl, _mm_fake,
                      _mm_backward, _mm_setup)


def _gemm_impl(a, b, c, alpha, beta, bias, bias_mode, activation, epilogue, out_dtype,
               compute, scale_a, scale_b, scale_d):
    return _gemm_core(a, b, c, alpha, beta, bias, bias_mode or None, activation or None,
                      epilogue, out_dtype, compute or None, scale_a, scale_b, scale_d)


def _gemm_fake(a, b, c, alpha, beta, bias, bias_mode, activation, epilogue, out_dtype,
               compute, scale_a, scale_b, scale_d):
    shape = _result_shape(a, b, "gemm")
    if out_dtype is None:
        dd = _DEFAULT_D.get(_tensor._TORCH_TO_CK.get(a.dtype), _tensor.F32)
        out_dtype = _tensor._CK_TO_TORCH[dd]
    return a.new_empty(shape, dtype=out_dtype)


_gemm_op = _torchops.op(
    "gemm(Tensor a, Tensor b, Tensor? c, float alpha, float beta, Tensor? bias, str bias_mode, "
    "str activation, str? epilogue, ScalarType? out_dtype, str compute, float scale_a, "
    "float scale_b, float scale_d) -> Tensor", _gemm_impl, _gemm_fake)


def _as_2d(x, first):
    """A 1-D operand of matmul as a matrix view: [K] -> [1, K] (first) or [K, 1] (second)."""
    if _torchops.is_torch(x):
        return x.unsqueeze(0 if first else 1)
    return x.reshape((1, -1) if first else (-1, 1))


def matmul(a, b, *, out=None):
    """a @ b (torch.matmul) for matrices, and vectors as torch treats them ([K] @ [K, N] ->
    [N], [M, K] @ [K] -> [M]). The result has the inputs' type (float32 inputs are multiplied
    as TF32 on tensor cores, accumulated in float32; use gemm(compute='f32') for f32-class
    accuracy). Operands may be transposed views (read in place). 3-D operands [batch, M, K] @
    [batch, K, N] are one strided batched GEMM; a 2-D operand (or a batch of 1) is broadcast
    to every batch, as torch.matmul does; 4-D and more are refused. With torch,
    differentiable (the gradients are ck GEMMs too)."""
    if not hasattr(a, "shape"):  # a __dlpack__ object: its NumPy / torch view
        a = describe(a, "a").obj
    if not hasattr(b, "shape"):
        b = describe(b, "b").obj
    if out is None and not _fast.is_compiling():
        y = _fast.call(_MM_OPTS, a, b)  # a repeated eager call (_fast)
        if y is not None:
            return y
    ra = len(a.shape)
    rb = len(b.shape)
    if ra in (2, 3) and rb in (2, 3):
        if out is None and _mm_op is not None and _torchops.is_torch(a) and \
                _torchops.is_torch(b) and not _torchops.direct(a, b):
            return _mm_op(a, b)
        if out is None:
            return _matmul_core(a, b)
        return _gemm_core(a, b, out=out, op="matmul")
    if ra == 0 or rb == 0:
        fail(Status.INVALID_ARGUMENT, "matmul: both arguments need at least one dimension "
             f"(shapes {tuple(a.shape)} and {tuple(b.shape)}).")
    if ra > 3 or rb > 3:
        fail(Status.NOT_IMPLEMENTED, f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} "
             "have more than one batch dimension; accepted: 1-D, 2-D and 3-D operands "
             "(flatten the leading dimensions into one batch first, e.g. x.reshape(-1, M, K)).")
    if out is not None:
        fail(Status.INVALID_ARGUMENT, "matmul: argument 'out' is accepted for 2-D and 3-D "
             "operands only.")
    y = matmul(_as_2d(a, True) if ra == 1 else a, _as_2d(b, False) if rb == 1 else b)
    if ra == 1 and rb == 1:
        return y.reshape(())
    if ra == 1:  # [K] @ [(B,) K, N]: the row of 1 goes
        return y.reshape(tuple(y.shape[:-2]) + (y.shape[-1],))
    return y.reshape(tuple(y.shape[:-1]))  # [(B,) M, K] @ [K]: the column of 1 goes


def gemm(a, b, c=None, *, alpha=1.0, beta=None, bias=None, bias_mode=None, activation=None,
         epilogue=None, out_dtype=None, compute=None, scale_a=1.0, scale_b=1.0, scale_d=1.0,
         out=None, instance=-1, extras=None):
    """out = epilogue(extras(act(alpha * scale_a * scale_b * (a @ b) + beta * c + bias))),
    one kernel.

    a [M, K], b [K, N], or batches [batch, M, K], [batch, K, N] (a 2-D operand or a batch of
    1 is broadcast to every batch; out is then [batch, M, N], c [batch or 1, M, N] or [M, N],
    bias as below for every batch or [batch, 1, N] / [batch, M, 1] one per batch): f16, bf16,
    f32 (TF32 by default; compute='f32' for 3xTF32), fp8
    e4m3/e5m2 (any mix; scale_a / scale_b are their per-tensor scales) or int8; each row- or
    column-major (transposed views are read in place). c [M, N] (optional; its type is
    out's or float32); beta defaults to 1 when c is given, else 0. bias: (N,) or (1, N) adds
    bias[j] to column j, (M, 1) adds bias[i] to row i (bias_mode='row'/'col' says it for a
    1-D vector), f32/f16/bf16. activation: None, 'relu', 'gelu' (erf), 'gelu_tanh', 'silu',
    'sigmoid'. epilogue: an elementwise expression of x0 applied last (e.g.
    'min(max(x0, -1), 1)'). out_dtype: f32/f16/bf16, fp8 (divided by scale_d first,
    saturating) or int32 for int8 inputs; default: the inputs' type (f32 for fp8 inputs, int32
    for int8). out: write into this [M, N] tensor (may be c itself for an in-place update).
    instance: an instance id from `ck gemm` candidates (-1: ck's choice). extras (multi-D): up
    to 4 pairs (tensor, 'add' | 'mul') applied in order after the activation, before the
    epilogue: a tensor [M, N] (full, either order), (N,) / (1, N) (per column) or (M, 1) (per
    row), f32/f16/bf16, the same for every batch; e.g. a gated unit
    gemm(x, w, activation='silu', extras=[(up, 'mul')]). It must not overlap out."""
    if out is None and instance == -1 and _gemm_op is not None and _torchops.is_torch(a) and \
            not extras and \
            _torchops.is_torch(b) and not _torchops.direct(a, b, c, bias):
        if beta is None:
            beta = 1.0 if c is not None else 0.0
        return _gemm_op(a, b, c, float(alpha), float(beta), bias, bias_mode or "",
                        activation or "", epilogue, _torch_dtype(out_dtype), compute or "",
                        float(scale_a), float(scale_b), float(scale_d))
    if out is None and c is None and beta is None and extras is None and epilogue is None and \
            out_dtype is None and compute is None and instance == -1 and bias_mode is None and \
            scale_a == 1.0 and scale_b == 1.0 and scale_d == 1.0 and \
            isinstance(alpha, (int, float)):
        rec = None
        if isinstance(activation, (str, type(None))) and not _fast.is_compiling():
            rec = ("gemm", activation, float(alpha))
            y = _fast.call(rec, a, b) if bias is None else _fast.call(rec, a, b, bias)
            if y is not None:  # a repeated eager call (_fast)
                return y
            if not (_torchops.is_torch(a) and _torchops.direct(a, b, bias)):
                rec = None
        y = _gemm_bias_act(a, b, bias, activation, float(alpha), record=rec)
        if y is not None:
            return y
    return _gemm_core(a, b, c, alpha, beta, bias, bias_mode, activation, epilogue, out_dtype,
                      compute, scale_a, scale_b, scale_d, out, instance, extras=extras)
