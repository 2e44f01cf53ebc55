"""Every function on the emulator with NumPy inputs, against NumPy references, every element."""
import numpy as np
import pytest

import ck_kernels as ck


def np_softmax(t, log=False):
    m = t.max(-1, keepdims=True)
    e = np.exp(t - m)
    s = e.sum(-1, keepdims=True)
    return (t - m - np.log(s)) if log else e / s


@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_numpy_with_scale_mask_causal(rng, log):
    x = rng.standard_normal((2, 5, 37)).astype(np.float32)
    mask = rng.standard_normal((5, 37)).astype(np.float32)
    fn = ck.log_softmax if log else ck.softmax
    np.testing.assert_allclose(fn(x), np_softmax(x.astype(np.float64), log), rtol=1e-5,
                               atol=1e-6)
    t = 0.5 * x.astype(np.float64) + mask
    i, j = np.arange(5)[:, None], np.arange(37)[None, :]
    t = np.where(j > i + (37 - 5), -np.inf, t)
    got = fn(x, scale=0.5, mask=mask, causal=True)
    np.testing.assert_allclose(got, np_softmax(t, log), rtol=1e-5, atol=1e-6)


def test_softmax_f16_in_f32_out(rng):
    x = rng.standard_normal((3, 64)).astype(np.float16)
    y = ck.softmax(x, dtype=np.float32)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, np_softmax(x.astype(np.float64)), rtol=1e-5, atol=1e-7)
    y16 = ck.softmax(x)
    assert y16.dtype == np.float16
    np.testing.assert_allclose(y16, np_softmax(x.astype(np.float64)), rtol=1e-3, atol=1e-4)


def test_topk_softmax_matches_numpy(rng):
    logits = rng.standard_normal((9, 16)).astype(np.float32)
    for renorm in (False, True):
        w, idx = ck.topk_softmax(logits, 3, renormalize=renorm)
        p = np_softmax(logits.astype(np.float64))
        ref_idx = np.argsort(-logits, axis=-1, kind="stable")[:, :3]
        ref_w = np.take_along_axis(p, ref_idx, -1)
        if renorm:
            ref_w = ref_w / ref_w.sum(-1, keepdims=True)
        assert idx.dtype == np.int32 and w.dtype == np.float32
        np.testing.assert_array_equal(idx, ref_idx)
        np.testing.assert_allclose(w, ref_w, rtol=1e-5, atol=1e-7)


def np_layer_norm(x, w, b, eps):
    x = x.astype(np.float64)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + (0 if b is None else b)


def np_rms_norm(x, w, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def test_layer_norm_matches_numpy(rng):
    x = rng.standard_normal((6, 96)).astype(np.float32)
    w, b = rng.standard_normal(96).astype(np.float32), rng.standard_normal(96).astype(np.float32)
    np.testing.assert_allclose(ck.layer_norm(x, (96,), w, b), np_layer_norm(x, w, b, 1e-5),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ck.layer_norm(x, (96,)), np_layer_norm(x, 1.0, None, 1e-5),
                               rtol=1e-4, atol=1e-5)
    # two normalized dimensions, flattened without a copy
    x3 = x.reshape(6, 8, 12)
    np.testing.assert_allclose(ck.layer_norm(x3, (8, 12), w.reshape(8, 12), b.reshape(8, 12)),
                               np_layer_norm(x, w, b, 1e-5).reshape(6, 8, 12), rtol=1e-4,
                               atol=1e-5)


def test_rms_norm_with_residual_matches_numpy(rng):
    x = rng.standard_normal((5, 80)).astype(np.float32)
    r = rng.standard_normal((5, 80)).astype(np.float32)
    w = rng.standard_normal(80).astype(np.float32)
    np.testing.assert_allclose(ck.rms_norm(x, (80,), w, 1e-6), np_rms_norm(x, w, 1e-6),
                               rtol=1e-4, atol=1e-5)
    y, a = ck.rms_norm(x, (80,), w, 1e-6, residual=r)
    np.testing.assert_array_equal(a, x + r)
    np.testing.assert_allclose(y, np_rms_norm(x + r, w, 1e-6), rtol=1e-4, atol=1e-5)
    # eps None: the dtype's machine epsilon, as torch
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(ck.rms_norm(x, 80, w), np_rms_norm(x, w, eps), rtol=1e-4,
                               atol=1e-5)


def test_rms_norm_quant_int8_matches_numpy(rng):
    x = rng.standard_normal((7, 64)).astype(np.float32)
    r = rng.standard_normal((7, 64)).astype(np.float32)
    w = rng.standard_normal(64).astype(np.float32)
    sm = rng.uniform(0.5, 2, 64).astype(np.float32)
    q, s, a = ck.rms_norm_quant(x, (64,), w, 1e-5, residual=r, smooth=sm, dtype=np.int8)
    yp = np_rms_norm(x + r, w, 1e-5) * sm
    ref_s = np.abs(yp).max(-1) / 127
    np.testing.assert_allclose(s, ref_s, rtol=1e-5)
    assert q.dtype == np.int8 and s.dtype == np.float32
    # q = round(y' / scale): within one code of the float64 reference (rounding of fp32)
    assert np.abs(q.astype(np.int32) - np.rint(yp / ref_s[:, None])).max() <= 1
    np.testing.assert_array_equal(a, x + r)
    q2, s2 = ck.smooth_quant(x, sm)
    ref2 = np.abs(x * sm).max(-1) / 127
    np.testing.assert_allclose(s2, ref2, rtol=1e-6)
    assert np.abs(q2.astype(np.int32) - np.rint(x * sm / ref2[:, None])).max() <= 1


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_reductions_match_numpy(rng, dim, keepdim):
    x = rng.standard_normal((4, 6, 33)).astype(np.float32)
    x64 = x.astype(np.float64)
    ax = dim
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ck.sum(x, dim, keepdim), x64.sum(ax, keepdims=keepdim), **tol)
    np.testing.assert_allclose(ck.mean(x, dim, keepdim), x64.mean(ax, keepdims=keepdim), **tol)
    np.testing.assert_array_equal(ck.amax(x, dim, keepdim), x.max(ax, keepdims=keepdim))
    np.testing.assert_array_equal(ck.amin(x, dim, keepdim), x.min(ax, keepdims=keepdim))
    np.testing.assert_allclose(ck.vector_norm(x, 2, dim, keepdim),
                               np.sqrt((x64 * x64).sum(ax, keepdims=keepdim)), **tol)
    np.testing.assert_allclose(ck.reduce(x, "sum", dim, keepdim, pre="abs", scale=0.5),
                               0.5 * np.abs(x64).sum(ax, keepdims=keepdim), **tol)


def test_argmax_argmin_match_numpy(rng):
    x = rng.standard_normal((5, 41)).astype(np.float16)
    for d in (0, 1):
        a = ck.argmax(x, d)
        assert a.dtype == np.int32
        np.testing.assert_array_equal(a, x.argmax(d))
        np.testing.assert_array_equal(ck.argmin(x, d, keepdim=True), x.argmin(d)[..., None]
                                      if d == 1 else x.argmin(d)[None])


def test_permute_matches_numpy(rng):
    x = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    for perm in [(0, 2, 3, 1), (3, 2, 1, 0), (1, 0, 2, 3)]:
        y = ck.permute(x, perm)
        assert y.flags.c_contiguous
        np.testing.assert_array_equal(y, x.transpose(perm))
    # a strided (non-contiguous) source
    np.testing.assert_array_equal(ck.permute(x[:, ::2], (1, 0, 2, 3)),
                                  x[:, ::2].transpose(1, 0, 2, 3))


def test_cast_matches_numpy(rng):
    x = (rng.standard_normal((8, 50)) * 100).astype(np.float32)
    np.testing.assert_array_equal(ck.cast(x, np.float16), x.astype(np.float16))
    np.testing.assert_array_equal(ck.cast(x, "f16", scale=0.25), (x * 0.25).astype(np.float16))
    big = np.array([1e6, -1e6, 3.0], dtype=np.float32)
    np.testing.assert_array_equal(ck.cast(big, np.float16, overflow="sat"),
                                  np.array([65504, -65504, 3], dtype=np.float16))
    i = ck.cast(x, np.int8)  # integers saturate
    np.testing.assert_array_equal(i, np.clip(np.rint(x), -128, 127).astype(np.int8))


def test_elementwise_matches_numpy_with_broadcast(rng):
    a = rng.standard_normal((4, 1, 30)).astype(np.float32)
    b = rng.standard_normal((7, 30)).astype(np.float32)
    c = rng.standard_normal((30,)).astype(np.float16)
    y = ck.elementwise("relu(x0 * x1 + x2)", a, b, c)
    assert y.shape == (4, 7, 30) and y.dtype == np.float32
    ref = np.maximum(a * b + c.astype(np.float32), 0)
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)
    s = ck.elementwise("silu(a) * b", b, b, dtype=np.float16)
    ref = (b / (1 + np.exp(-b.astype(np.float64))) * b).astype(np.float16)
    np.testing.assert_allclose(s.astype(np.float32), ref.astype(np.float32), rtol=2e-3,
                               atol=1e-3)
    out = np.empty((7, 30), np.float32)
    assert ck.elementwise("x0 - 1", b, out=out) is out
    np.testing.assert_array_equal(out, b - 1)


def test_kernel_cache_is_listed_and_reused(rng):
    x = rng.standard_normal((2, 24)).astype(np.float32)
    ck.softmax(x)
    n = ck.kernel_count()
    ck.softmax(x)
    assert ck.kernel_count() == n  # a repeated call builds nothing
    assert isinstance(ck.cache.directory(), str) and ck.cache.directory()
    entries = ck.cache.entries()
    assert entries and all(e.kind in ("host-so", "cubin", "unknown") for e in entries)
    assert any(e.kind == "host-so" and e.valid for e in entries)
