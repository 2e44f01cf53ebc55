"""matmul and gemm on the emulator with NumPy inputs against a float64 NumPy reference, every
element, within a bound derived from the inputs (the form of ck_gemm_tolerance: f32
accumulation over K terms, the inputs' rounding to the tensor-core type, D's rounding); every
order of A and B, odd shapes, each epilogue option, the plan cache and the error paths."""
import math

import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError, Status

SHAPES = [(1, 1, 1), (17, 33, 9), (65, 7, 130)]  # (M, N, K)
U = {np.float16: 2.0 ** -11, np.float32: 2.0 ** -24}  # unit roundoff of D


def operand(rng, rows, cols, dtype, col_major, scale=1.0):
    """A rows x cols operand of random values; column-major as the transposed view of a
    row-major array (what a.T gives: read in place, no copy)."""
    v = (scale * rng.standard_normal((rows, cols))).astype(dtype)
    return np.ascontiguousarray(v.T).T if col_major else v


def check(got, ref, s, k, d_unit, in_unit=0.0, lip=1.0):
    """Every element of got within the bound of ref; s = sum of |terms| per element."""
    ref = np.asarray(ref, np.float64)
    acc = 2 * ((k / 8 + 4) * 2.0 ** -24 * s + 2.0 ** -20 * (np.abs(ref) + s)) + 2 * in_unit * s
    bound = lip * acc + 2 * d_unit * np.abs(ref) + 1e-30
    err = np.abs(np.asarray(got, np.float64) - ref)
    assert got.shape == ref.shape
    assert np.all(np.isfinite(got))
    bad = err > bound
    if bad.any():
        i = np.unravel_index(np.argmax(err - bound), err.shape)
        pytest.fail(f"{bad.sum()} of {err.size} elements out of bound; worst at {i}: got "
                    f"{got[i]}, reference {ref[i]}, bound {bound[i]}")


def sum_abs(a, b):
    return np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("a_col", [False, True], ids=["a_row", "a_col"])
@pytest.mark.parametrize("b_col", [False, True], ids=["b_row", "b_col"])
def test_matmul_f16_every_order_matches_numpy(rng, m, n, k, a_col, b_col):
    a = operand(rng, m, k, np.float16, a_col)
    b = operand(rng, k, n, np.float16, b_col)
    y = ck.matmul(a, b)
    assert y.dtype == np.float16 and y.shape == (m, n)
    check(y, a.astype(np.float64) @ b.astype(np.float64), sum_abs(a, b), k, U[np.float16])


# tf32: an input's error is 2^-11 where the sm80 family rounds it (cvt.rna) and 2^-10 where the
# sm90 family's wgmma drops its low 13 bits (docs/ops-gemm.md; the policy may take either)
@pytest.mark.parametrize("compute,in_unit", [(None, 2.0 ** -10), ("f32", 2.0 ** -21)],
                         ids=["tf32", "3xtf32"])
def test_gemm_f32_inputs_tf32_and_3xtf32(rng, compute, in_unit):
    m, n, k = 17, 33, 9
    a = operand(rng, m, k, np.float32, False)
    b = operand(rng, k, n, np.float32, True)
    y = ck.gemm(a, b, compute=compute)
    assert y.dtype == np.float32
    check(y, a.astype(np.float64) @ b.astype(np.float64), sum_abs(a, b), k, U[np.float32],
          in_unit)


def test_matmul_f32_is_tf32_by_default(rng):
    a = operand(rng, 65, 130, np.float32, True)
    b = operand(rng, 130, 7, np.float32, False)
    check(ck.matmul(a, b), a.astype(np.float64) @ b.astype(np.float64), sum_abs(a, b), 130,
          U[np.float32], 2.0 ** -11)


def test_gemm_int8_to_int32_is_exact(rng):
    a = rng.integers(-128, 128, (17, 40), dtype=np.int8)
    b = np.asfortranarray(rng.integers(-128, 128, (40, 9), dtype=np.int8))
    y = ck.gemm(a, b)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, a.astype(np.int64) @ b.astype(np.int64))


def test_gemm_bf16_and_fp8_with_ml_dtypes(rng):
    ml = pytest.importorskip("ml_dtypes")
    m, n, k = 17, 33, 24
    a = operand(rng, m, k, ml.bfloat16, False)
    b = operand(rng, k, n, ml.bfloat16, True)
    y = ck.gemm(a, b, out_dtype=np.float32)
    check(y, a.astype(np.float64) @ b.astype(np.float64), sum_abs(a, b), k, U[np.float32])
    a8 = operand(rng, m, k, ml.float8_e4m3fn, False)
    b8 = operand(rng, k, n, ml.float8_e5m2, True)
    y = ck.gemm(a8, b8, scale_a=0.5, scale_b=2.0)  # f32 out by default for fp8 inputs
    assert y.dtype == np.float32
    check(y, a8.astype(np.float64) @ b8.astype(np.float64), sum_abs(a8, b8), k,
          U[np.float32])


def np_act(name, x):
    if name == "relu":
        return np.maximum(x, 0)
    if name == "gelu":
        erf = np.vectorize(math.erf)
        return 0.5 * x * (1 + erf(x / math.sqrt(2)))
    if name == "gelu_tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if name == "silu":
        return x / (1 + np.exp(-x))
    if name == "sigmoid":
        return 1 / (1 + np.exp(-x))
    return x


@pytest.mark.parametrize("act", [None, "relu", "gelu", "gelu_tanh", "silu", "sigmoid"])
def test_gemm_activations_with_column_bias(rng, act):
    m, n, k = 17, 33, 9
    a = operand(rng, m, k, np.float16, False)
    b = operand(rng, k, n, np.float16, True)
    bias = rng.standard_normal(n).astype(np.float32)
    y = ck.gemm(a, b, bias=bias, activation=act, out_dtype=np.float32)
    x = a.astype(np.float64) @ b.astype(np.float64) + bias
    s = sum_abs(a, b) + np.abs(bias)
    check(y, np_act(act, x), s, k, U[np.float32], lip=1.2)


def test_gemm_row_bias_alpha_beta_c(rng):
    m, n, k = 65, 7, 130
    a = operand(rng, m, k, np.float16, True)
    b = operand(rng, k, n, np.float16, False)
    c = operand(rng, m, n, np.float32, True)  # C of type f32 with f16 D, column-major
    bias = rng.standard_normal((m, 1)).astype(np.float16)  # (M, 1): one value per row
    y = ck.gemm(a, b, c, alpha=0.5, beta=-2.0, bias=bias)
    assert y.dtype == np.float16
    ab = a.astype(np.float64) @ b.astype(np.float64)
    ref = 0.5 * ab - 2.0 * c + bias.astype(np.float64)
    s = 0.5 * sum_abs(a, b) + 2 * np.abs(c) + np.abs(bias.astype(np.float64))
    check(y, ref, s, k, U[np.float16])
    # a 1-D bias of M values with bias_mode='row'; beta defaults to 1 with c
    y = ck.gemm(a, b, c, bias=bias.reshape(m), bias_mode="row", out_dtype=np.float32)
    check(y, ab + c + bias.astype(np.float64), sum_abs(a, b) + np.abs(c) + np.abs(bias), k,
          U[np.float32])


def test_gemm_multi_d_extras_gated_and_residual(rng):
    """extras (multi-D): silu(a @ b) * up (full, column-major) + residual (full f16) * a
    per-row scale + a per-column shift, in order, then the epilogue expression."""
    m, n, k = 17, 33, 9
    a = operand(rng, m, k, np.float16, False)
    b = operand(rng, k, n, np.float16, True)
    up = operand(rng, m, n, np.float32, True)
    res = operand(rng, m, n, np.float16, False)
    rs = rng.standard_normal((m, 1)).astype(np.float32)
    cs = rng.standard_normal(n).astype(np.float16)
    y = ck.gemm(a, b, activation="silu", out_dtype=np.float32, epilogue="x0 * 0.5",
                extras=[(up, "mul"), (res, "add"), (rs, "mul"), (cs, "add")])
    x = np_act("silu", a.astype(np.float64) @ b.astype(np.float64))
    ref = ((x * up + res.astype(np.float64)) * rs + cs.astype(np.float64)) * 0.5
    s = (sum_abs(a, b) * np.abs(up) + np.abs(res)) * np.abs(rs) + np.abs(cs)
    check(y, ref, s, k, U[np.float32], lip=1.2)
    with pytest.raises(CkError) as e:  # a vector of the wrong length
        ck.gemm(a, b, extras=[(cs[:5], "add")])
    assert e.value.status == Status.INVALID_ARGUMENT and "extras[0]" in str(e.value)
    with pytest.raises(CkError):  # an unknown op
        ck.gemm(a, b, extras=[(up, "sub")])
    with pytest.raises(CkError):  # more than 4
        ck.gemm(a, b, extras=[(up, "mul")] * 5)
    out = np.zeros((m, n), np.float32)
    with pytest.raises(CkError) as e:  # an extra that is the output
        ck.gemm(a, b, out=out, extras=[(out, "add")])
    assert "overlaps D" in str(e.value)


def test_gemm_in_place_accumulate_and_epilogue_expression(rng):
    m, n, k = 17, 33, 9
    a = operand(rng, m, k, np.float32, False)
    b = operand(rng, k, n, np.float32, False)
    c = rng.standard_normal((m, n)).astype(np.float32)
    c0 = c.copy()
    y = ck.gemm(a, b, c, out=c, compute="f32")  # D = A B + C, in place
    assert y is c
    ab = a.astype(np.float64) @ b.astype(np.float64)
    check(c, ab + c0, sum_abs(a, b) + np.abs(c0), k, U[np.float32], 2.0 ** -21)
    y = ck.gemm(a, b, activation="relu", epilogue="min(x0, 1) * 3", compute="f32")
    check(y, np.minimum(np.maximum(ab, 0), 1) * 3, 3 * sum_abs(a, b), k, U[np.float32],
          2.0 ** -21, lip=3)


def test_unaligned_operands_and_vectors(rng):
    """A view starting 2 bytes into its buffer (not 16-byte aligned): ck's one-call path,
    element-wise copies; 1-D operands as torch.matmul treats them."""
    m, n, k = 9, 12, 16
    buf = rng.standard_normal(m * k + 1).astype(np.float16)
    a = buf[1:].reshape(m, k)
    b = operand(rng, k, n, np.float16, False)
    check(ck.matmul(a, b), a.astype(np.float64) @ b.astype(np.float64), sum_abs(a, b), k,
          U[np.float16])
    v = b[:, 0].copy()
    y = ck.matmul(a.copy(), v)
    assert y.shape == (m,)
    check(y, a.astype(np.float64) @ v.astype(np.float64), sum_abs(a, v[:, None])[:, 0], k,
          U[np.float16])
    y = ck.matmul(v, b)
    assert y.shape == (n,)
    check(y, v.astype(np.float64) @ b.astype(np.float64), sum_abs(v[None, :], b)[0], k,
          U[np.float16])


# ---- strided batched GEMM: 3-D operands, a 2-D one broadcast (torch.matmul's rule) ----------
def batch_operand(rng, batch, rows, cols, dtype, col_major):
    """[batch, rows, cols], each matrix column-major if asked (a transposed view)."""
    v = rng.standard_normal((batch, rows, cols)).astype(dtype)
    return np.ascontiguousarray(v.transpose(0, 2, 1)).transpose(0, 2, 1) if col_major else v


@pytest.mark.parametrize("batch", [1, 2, 3])
@pytest.mark.parametrize("a_col,b_col", [(False, False), (True, False), (False, True)],
                         ids=["rr", "cr", "rc"])
def test_matmul_batched_matches_numpy(rng, batch, a_col, b_col):
    m, n, k = 17, 9, 33
    a = batch_operand(rng, batch, m, k, np.float16, a_col)
    b = batch_operand(rng, batch, k, n, np.float16, b_col)
    y = ck.matmul(a, b)
    assert y.shape == (batch, m, n) and y.dtype == np.float16
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check(y, a64 @ b64, np.abs(a64) @ np.abs(b64), k, U[np.float16])


def test_matmul_batched_broadcasts_a_2d_operand(rng):
    m, n, k = 13, 11, 20
    a = batch_operand(rng, 3, m, k, np.float16, False)
    w = operand(rng, k, n, np.float16, True)  # one weight for every batch (batch stride 0)
    y = ck.matmul(a, w)
    a64, w64 = a.astype(np.float64), w.astype(np.float64)
    check(y, a64 @ w64, np.abs(a64) @ np.abs(w64), k, U[np.float16])
    x = operand(rng, m, k, np.float16, False)  # 2-D A against a batch of B
    b = batch_operand(rng, 2, k, n, np.float16, False)
    y = ck.matmul(x, b)
    assert y.shape == (2, m, n)
    check(y, x.astype(np.float64) @ b.astype(np.float64),
          np.abs(x.astype(np.float64)) @ np.abs(b.astype(np.float64)), k, U[np.float16])
    y = ck.matmul(a[:1], b[:1].repeat(3, 0))  # a batch of 1 broadcast like a 2-D operand
    assert y.shape == (3, m, n)
    v = rng.standard_normal(k).astype(np.float16)  # [B, M, K] @ [K] -> [B, M]
    y = ck.matmul(a, v)
    assert y.shape == (3, m)
    check(y, a.astype(np.float64) @ v.astype(np.float64),
          np.abs(a.astype(np.float64)) @ np.abs(v.astype(np.float64)), k, U[np.float16])


def test_gemm_batched_with_c_and_bias_per_batch(rng):
    batch, m, n, k = 3, 19, 10, 24
    a = batch_operand(rng, batch, m, k, np.float16, True)
    b = batch_operand(rng, batch, k, n, np.float16, False)
    c = rng.standard_normal((batch, m, n)).astype(np.float32)
    bias = rng.standard_normal((batch, 1, n)).astype(np.float32)  # one per batch, per column
    out = np.full((batch, m, n), np.nan, np.float32)
    y = ck.gemm(a, b, c, alpha=0.5, beta=-1.0, bias=bias, activation="relu", out=out)
    assert y is out
    ab = a.astype(np.float64) @ b.astype(np.float64)
    s = 0.5 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))) + np.abs(c) + \
        np.abs(bias)
    check(y, np.maximum(0.5 * ab - c + bias, 0), s, k, U[np.float32])
    # C broadcast (2-D) and one bias per row for every batch
    c2 = rng.standard_normal((m, n)).astype(np.float32)
    rb = rng.standard_normal((m, 1)).astype(np.float32)
    y = ck.gemm(a, b, c2, bias=rb, out_dtype=np.float32)
    check(y, ab + c2 + rb, s + np.abs(c2) + np.abs(rb), k, U[np.float32])
    # misaligned A (the one-call form's element-wise copies), bias per batch per row
    buf = np.empty(batch * m * k + 8, np.float16)
    a2 = buf[1:1 + batch * m * k].reshape(batch, m, k)
    a2[...] = a
    brow = rng.standard_normal((batch, m, 1)).astype(np.float32)
    y = ck.gemm(a2, b, bias=brow, out_dtype=np.float32)
    check(y, ab + brow, s + np.abs(brow), k, U[np.float32])


def test_empty_shapes():
    a = np.ones((0, 4), np.float16)
    assert ck.matmul(a, np.ones((4, 3), np.float16)).shape == (0, 3)
    z = ck.matmul(np.ones((3, 0), np.float32), np.ones((0, 5), np.float32))
    np.testing.assert_array_equal(z, np.zeros((3, 5), np.float32))
    with pytest.raises(CkError, match="k = 0"):
        ck.gemm(np.ones((3, 0), np.float32), np.ones((0, 5), np.float32))


def test_repeated_call_reuses_its_plan(rng):
    a = operand(rng, 17, 9, np.float16, False)
    b = operand(rng, 9, 33, np.float16, False)
    ck.matmul(a, b)
    plans, kernels = ck.cache.gemm_plan_count(), ck.kernel_count()
    for _ in range(3):
        ck.matmul(operand(rng, 17, 9, np.float16, False), b)
    assert ck.cache.gemm_plan_count() == plans and ck.kernel_count() == kernels
    ck.cache.clear_gemm_plans()
    assert ck.cache.gemm_plan_count() == 0
    ck.matmul(a, b)  # re-planned from the context's kernel cache: nothing compiled
    assert ck.cache.gemm_plan_count() == 1 and ck.kernel_count() == kernels
    info = ck.gemm_instance(a, b)
    assert info["family"] in (80, 90) and info["name"]


# ---- error paths: CkError with the status and a sentence -----------------------------------
def sentence(e):
    return e.value.message.endswith(".") and str(e.value).startswith("CK_ERROR_")


def test_shape_mismatch_is_refused():
    with pytest.raises(CkError) as e:
        ck.matmul(np.ones((3, 4), np.float16), np.ones((5, 2), np.float16))
    assert e.value.status == Status.INVALID_ARGUMENT and "do not chain" in e.value.message
    assert sentence(e)
    with pytest.raises(CkError, match="expected \\(3, 2\\)"):
        ck.gemm(np.ones((3, 4), np.float16), np.ones((4, 2), np.float16),
                np.ones((2, 3), np.float16))
    with pytest.raises(CkError, match="does not broadcast"):
        ck.gemm(np.ones((3, 4), np.float16), np.ones((4, 2), np.float16),
                bias=np.ones(3, np.float32))
    with pytest.raises(CkError, match="more than one batch dimension") as e:
        ck.matmul(np.ones((2, 2, 3, 4), np.float16), np.ones((4, 2), np.float16))
    assert e.value.status == Status.NOT_IMPLEMENTED and sentence(e)
    with pytest.raises(CkError, match="do not broadcast") as e:
        ck.matmul(np.ones((2, 3, 4), np.float16), np.ones((3, 4, 2), np.float16))
    assert sentence(e)
    with pytest.raises(CkError, match="expected \\(2, 3, 2\\)"):
        ck.gemm(np.ones((2, 3, 4), np.float16), np.ones((4, 2), np.float16),
                np.ones((3, 3, 2), np.float16))


def test_unsupported_dtypes_are_refused_by_ck():
    with pytest.raises(CkError) as e:
        ck.matmul(np.ones((3, 4)), np.ones((4, 2)))  # float64
    assert e.value.status == Status.UNSUPPORTED and "f64" in e.value.message and sentence(e)
    with pytest.raises(CkError, match="f16 x B f32"):
        ck.matmul(np.ones((3, 4), np.float16), np.ones((4, 2), np.float32))
    with pytest.raises(CkError, match="complex64"):
        ck.matmul(np.ones((3, 4), np.complex64), np.ones((4, 2), np.complex64))
    with pytest.raises(CkError, match="output type D i32"):
        ck.gemm(np.ones((3, 4), np.float16), np.ones((4, 2), np.float16), out_dtype=np.int32)


def test_bad_options_and_layouts_are_refused():
    a, b = np.ones((4, 8), np.float16), np.ones((8, 3), np.float16)
    with pytest.raises(CkError, match="activation"):
        ck.gemm(a, b, activation="tanh")
    with pytest.raises(CkError, match="beta"):
        ck.gemm(a, b, beta=1.0)
    with pytest.raises(CkError, match="compute"):
        ck.gemm(a, b, compute="f32")  # f32-class compute is for f32 inputs only
    with pytest.raises(CkError, match="strides") as e:
        ck.matmul(np.ones((4, 16), np.float16)[:, ::2], b)  # neither row- nor column-major
    assert e.value.status == Status.UNSUPPORTED and sentence(e)
    out = np.empty((4, 3), np.float16)
    buf = np.ones(64, np.float16)
    with pytest.raises(CkError, match="overlaps") as e:  # D overlapping A
        ck.gemm(buf[:32].reshape(4, 8), b, out=buf[:12].reshape(4, 3))
    assert e.value.status == Status.INVALID_ARGUMENT
    with pytest.raises(CkError, match="out_dtype"):
        ck.gemm(a, b, out=out, out_dtype=np.float32)


def test_wrong_device_is_refused():
    """A GPU tensor (DLPack device kDLCUDA) mixed with, or instead of, NumPy arrays: a
    sentence, no crash. Without torch ck cannot view GPU DLPack tensors at all."""
    try:
        import torch  # noqa: F401

        pytest.skip("torch is installed: test_torch.py covers devices with real tensors")
    except ImportError:
        pass

    class OnGpu:
        def __dlpack__(self, **kw):
            raise AssertionError("not to be consumed")

        def __dlpack_device__(self):
            return (2, 0)  # kDLCUDA, device 0

    with pytest.raises(CkError) as e:
        ck.matmul(np.ones((2, 2), np.float16), OnGpu())
    assert e.value.status == Status.UNSUPPORTED and "device" in e.value.message
    assert sentence(e)


def test_tune_stores_the_winner_for_later_calls(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("CK_TUNING_FILE", str(tmp_path / "tuning.tsv"))
    a = operand(rng, 16, 8, np.float16, False)
    b = operand(rng, 8, 24, np.float16, True)
    out = np.empty((16, 24), np.float16)
    best = ck.tune_gemm(a, b, out=out, reps=1, progress=False)
    assert best["name"] and best["ms"] > 0 and best["family"] in (80, 90)
    assert (tmp_path / "tuning.tsv").exists()
    info = ck.gemm_instance(a, b, out=out)
    assert info["name"] == best["name"]  # the plan took the table's instance
    ref = a.astype(np.float64) @ b.astype(np.float64)
    check(ck.gemm(a, b), ref, np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)), 8,
          U[np.float16])
    with pytest.raises(CkError, match="reps = 0"):
        ck.tune_gemm(a, b, reps=0)
