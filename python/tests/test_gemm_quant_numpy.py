"""gemm_scaled on the emulator with NumPy inputs against a float64 NumPy reference that decodes
the 4-bit values and applies the scales itself, every element: SmoothQuant i8 x i8 with per-row
x per-column scales, i8 with block scales, f16 x int4 / uint4 with zero points / fp4 with group
scales (packing order: low nibble = even k), block-scaled fp8 (with ml_dtypes), the refusals."""
import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def expand(s, block, rows, cols):
    """A block-scale matrix expanded to rows x cols elements."""
    return np.repeat(np.repeat(s, block[0], 0), block[1], 1)[:rows, :cols]


def check(got, ref, mag, k, unit):
    bound = 2 * (k / 8 + 8) * 2.0 ** -24 * mag + 2 * unit * np.abs(ref) + 1e-30
    err = np.abs(got.astype(np.float64) - ref)
    assert got.shape == ref.shape
    bad = err > bound
    assert not bad.any(), f"{bad.sum()} of {err.size} out of bound; worst " \
        f"{np.unravel_index(np.argmax(err - bound), err.shape)}"


def scales(rng, shape):
    return (rng.uniform(0.25, 2.0, shape) * rng.choice([-1, 1], shape)).astype(np.float32)


def test_smoothquant_i8(rng=np.random.default_rng(1)):
    m, n, k = 19, 23, 70
    a = rng.integers(-100, 100, (m, k)).astype(np.int8)
    b = np.ascontiguousarray(rng.integers(-100, 100, (n, k)).astype(np.int8)).T  # [K, N] view
    sa, sb = scales(rng, m), scales(rng, n)
    y = ck.gemm_scaled(a, b, a_scales=sa, b_scales=sb)
    assert y.dtype == np.float32
    p = a.astype(np.float64) @ b.astype(np.float64)
    ref = p * sa[:, None] * sb[None, :]
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) * np.abs(
        sa[:, None] * sb[None, :])
    check(y, ref, mag, k, 2.0 ** -24)


def test_i8_block_scaled(rng=np.random.default_rng(2)):
    m, n, k = 9, 40, 100
    a = rng.integers(-50, 50, (m, k)).astype(np.int8)
    b = rng.integers(-50, 50, (k, n)).astype(np.int8)
    sa = scales(rng, (m, 2))            # A blocks 1 x 64
    sb = np.asfortranarray(scales(rng, (2, 3)))  # B blocks 64 x 16, column-major
    y = ck.gemm_scaled(a, b, a_scales=sa, b_scales=sb, a_block=(1, 64), b_block=(16, 64))
    ea = a * expand(sa, (1, 64), m, k)
    eb = b * expand(sb, (64, 16), k, n)
    check(y, ea @ eb, np.abs(ea) @ np.abs(eb), k, 2.0 ** -24)


@pytest.mark.parametrize("fmt", ["int4", "uint4", "fp4"])
def test_packed_b(fmt, rng=np.random.default_rng(3)):
    m, n, k, g = 5, 21, 64, 32
    a = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.integers(0, 256, (n, k // 2)).astype(np.uint8)  # [N, K/2]
    q = np.empty((n, k), np.int64)
    q[:, 0::2], q[:, 1::2] = w & 15, w >> 4  # low nibble = even k
    vals = {"int4": np.where(q < 8, q, q - 16).astype(np.float64), "uint4": q.astype(np.float64),
            "fp4": E2M1[q]}[fmt]
    sb = scales(rng, (k // g, n))  # group scales [K/g, N]
    zeros = None
    if fmt == "uint4":
        zeros = rng.integers(0, 16, (k // g, n)).astype(np.uint8)
        vals = vals - np.repeat(zeros, g, 0).T
    y = ck.gemm_scaled(a, w, b_scales=sb, b_format=fmt, b_zeros=zeros, out_dtype="f32")
    eb = vals.T * np.repeat(sb, g, 0)  # [K, N]
    af = a.astype(np.float64)
    check(y, af @ eb, np.abs(af) @ np.abs(eb), k, 2.0 ** -24)


def test_fp8_block_scaled(rng=np.random.default_rng(4)):
    ml = pytest.importorskip("ml_dtypes")
    m, n, k = 17, 150, 300
    a = rng.standard_normal((m, k)).astype(ml.float8_e4m3fn)
    b = np.ascontiguousarray(rng.standard_normal((n, k)).astype(ml.float8_e4m3fn)).T
    sa = np.asfortranarray(scales(rng, (m, 3)))   # MN-major per K block
    sb = np.ascontiguousarray(scales(rng, (2, 3)).T).T  # DeepSeek's [N/128, K/128], transposed
    y = ck.gemm_scaled(a, b, a_scales=sa, b_scales=sb, out_dtype="f32")
    ea = a.astype(np.float64) * expand(sa, (1, 128), m, k)
    eb = b.astype(np.float64) * expand(sb, (128, 128), k, n)
    check(y, ea @ eb, np.abs(ea) @ np.abs(eb), k, 2.0 ** -24)


def test_refusals(rng=np.random.default_rng(5)):
    a = rng.standard_normal((4, 64)).astype(np.float16)
    w = np.zeros((8, 32), np.uint8)
    with pytest.raises(CkError):
        ck.gemm_scaled(a, w, b_scales=np.ones((3, 8), np.float32), b_format="int4")  # 64 % 3
    with pytest.raises(CkError):
        ck.gemm_scaled(a, w[:, :31], b_format="int4")  # K mismatch
    with pytest.raises(CkError):
        ck.gemm_scaled(a, w, b_format="int3")
    with pytest.raises(CkError):  # zero points with int4
        ck.gemm_scaled(a, w, b_scales=np.ones((2, 8), np.float32), b_format="int4",
                       b_zeros=np.zeros((2, 8), np.uint8))
