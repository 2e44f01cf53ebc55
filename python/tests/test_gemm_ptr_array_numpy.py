"""gemm_ptr_array (pointer-array batched GEMM) on the emulator with NumPy inputs against a
float64 NumPy reference, every element of every product: f16 with a weight shared by every
product and an activation used twice, C and a bias per product, relu; f32 (TF32) with
transposed views; a single product; the refusals (lists of different lengths, mismatched
shapes or layouts, empty products)."""
import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError


def check(got, ref, s, k, d_unit, in_unit):
    """got within the bound of ref; s = sum of |terms| per element."""
    bound = 2 * ((k / 8 + 4) * 2.0 ** -24 * s + 2.0 ** -20 * (np.abs(ref) + s)) + \
        2 * in_unit * s + 2 * d_unit * np.abs(ref) + 1e-30
    err = np.abs(np.asarray(got, np.float64) - ref)
    assert got.shape == ref.shape
    bad = err > bound
    assert not bad.any(), f"{bad.sum()} of {err.size} out of bound; worst at " \
        f"{np.unravel_index(np.argmax(err - bound), err.shape)}"


def test_shared_weight_f16_with_c_bias_relu(rng):
    m, n, k, count = 19, 37, 45, 5
    acts = [rng.uniform(-1, 1, (m, k)).astype(np.float16) for _ in range(3)]
    a = [acts[0], acts[1], acts[2], acts[0], acts[1]]  # activations used twice
    w = np.ascontiguousarray(rng.uniform(-1, 1, (n, k)).astype(np.float16)).T  # [K, N] view
    b = [w] * count  # one weight for every product
    c = [rng.uniform(-1, 1, (m, n)).astype(np.float16) for _ in range(count)]
    bias = [rng.uniform(-1, 1, n).astype(np.float32) for _ in range(count)]
    y = ck.gemm_ptr_array(a, b, c, alpha=1.25, beta=-0.5, bias=bias, activation="relu")
    assert len(y) == count
    for i in range(count):
        assert y[i].dtype == np.float16 and y[i].shape == (m, n)
        a64, b64 = a[i].astype(np.float64), b[i].astype(np.float64)
        pre = 1.25 * (a64 @ b64) - 0.5 * c[i] + bias[i]
        s = 1.25 * (np.abs(a64) @ np.abs(b64)) + 0.5 * np.abs(c[i]) + np.abs(bias[i])
        check(y[i], np.maximum(pre, 0), s, k, 2.0 ** -11, 0)


def test_f32_transposed_views(rng):
    m, n, k = 33, 17, 20
    a = [np.ascontiguousarray(rng.standard_normal((k, m)).astype(np.float32)).T for _ in
         range(3)]
    b = [rng.standard_normal((k, n)).astype(np.float32) for _ in range(3)]
    y = ck.gemm_ptr_array(a, b)
    for i in range(3):
        a64, b64 = a[i].astype(np.float64), b[i].astype(np.float64)
        check(y[i], a64 @ b64, np.abs(a64) @ np.abs(b64), k, 2.0 ** -24, 2.0 ** -10)


def test_one_product_and_empty_list(rng):
    a = rng.uniform(-1, 1, (1, 7)).astype(np.float16)
    b = rng.uniform(-1, 1, (7, 1)).astype(np.float16)
    (y,) = ck.gemm_ptr_array([a], [b], out_dtype="float32")
    assert y.dtype == np.float32
    check(y, a.astype(np.float64) @ b, np.abs(a.astype(np.float64)) @ np.abs(b), 7, 2.0 ** -24,
          0)
    assert ck.gemm_ptr_array([], []) == []


def test_refusals(rng):
    a = [np.ones((4, 8), np.float16)] * 3
    b = [np.ones((8, 5), np.float16)] * 2
    with pytest.raises(CkError, match="'b' has 2 entries but 'a' has 3"):
        ck.gemm_ptr_array(a, b)
    b = [np.ones((8, 5), np.float16)] * 3
    with pytest.raises(CkError, match="'c' has 1 entries"):
        ck.gemm_ptr_array(a, b, [np.ones((4, 5), np.float16)])
    with pytest.raises(CkError, match=r"b\[1\] has shape \(8, 6\)"):
        ck.gemm_ptr_array(a, [b[0], np.ones((8, 6), np.float16), b[2]])
    with pytest.raises(CkError, match=r"a\[2\] has strides"):
        ck.gemm_ptr_array([a[0], a[1], np.asfortranarray(a[2])], b)
    with pytest.raises(CkError, match="must be a list"):
        ck.gemm_ptr_array(a[0], b)
    with pytest.raises(CkError, match="M, N, K >= 1"):
        ck.gemm_ptr_array([np.ones((4, 0), np.float16)], [np.ones((0, 5), np.float16)])
