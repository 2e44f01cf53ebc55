"""conv1d / conv2d / conv3d on the emulator with NumPy inputs against a float64 NumPy reference
(a sum over the filter taps of strided slices of the zero-padded input, every element): groups,
depthwise, strides, dilations, padding 'same', bias, a channels-last input and weight read in
place (output channels-last, as torch), and the refusals."""
import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError, Status

UNIT = {np.dtype(np.float16): 2.0 ** -11, np.dtype(np.float32): 2.0 ** -24}


def reference(x, w, b, stride, pad_l, pad_r, dil, groups):
    """float64 convolution and the sum of the magnitudes of each output's terms."""
    nd = x.ndim - 2
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pad_l, pad_r)))
    n, c = x.shape[:2]
    k, cg = w.shape[:2]
    kg = k // groups
    out = [(xp.shape[2 + i] - dil[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1
           for i in range(nd)]
    y = np.zeros((n, k, *out))
    mag = np.zeros_like(y)
    for g in range(groups):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * kg:(g + 1) * kg]
        for tap in np.ndindex(*w.shape[2:]):
            sl = tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                       for t, d, s, o in zip(tap, dil, stride, out))
            patch = xg[(slice(None), slice(None)) + sl]
            wt = wg[(slice(None), slice(None)) + tap]
            y[:, g * kg:(g + 1) * kg] += np.einsum("nc...,kc->nk...", patch, wt)
            mag[:, g * kg:(g + 1) * kg] += np.einsum("nc...,kc->nk...", np.abs(patch),
                                                     np.abs(wt))
    if b is not None:
        bb = b.astype(np.float64).reshape((1, k) + (1,) * nd)
        y += bb
        mag += np.abs(bb)
    return y, mag


def check(got, ref, mag, dtype):
    assert got.shape == ref.shape and got.dtype == dtype
    tf32 = 2.0 ** -10 if dtype == np.float32 else 0.0
    bound = 2 * UNIT[np.dtype(dtype)] * np.abs(ref) + mag * (2.0 ** -18 + tf32) + 1e-6
    err = np.abs(got.astype(np.float64) - ref)
    bad = err > bound
    if bad.any():
        i = np.unravel_index(np.argmax(err - bound), err.shape)
        pytest.fail(f"{bad.sum()} of {err.size} elements out of bound; worst at {i}: got "
                    f"{got[i]}, reference {ref[i]}")


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, shape).astype(dtype)


@pytest.mark.parametrize("case", [
    # nd, n, c, k, groups, spatial, filter, stride, padding, dilation, dtype, bias
    (2, 2, 6, 8, 2, (7, 5), (3, 3), (2, 1), 1, 1, np.float16, True),
    (2, 1, 3, 5, 1, (9, 7), (5, 3), 1, (2, 0), (1, 2), np.float32, False),
    (1, 2, 4, 8, 1, (13,), (3,), 1, "same", 2, np.float32, True),
    (3, 1, 4, 4, 4, (3, 5, 5), (3, 3, 3), 1, 1, 1, np.float16, False),  # depthwise
], ids=["2d-g2-stride2-bias", "2d-c3-dilation", "1d-same-dilation2", "3d-depthwise"])
def test_conv(rng, case):
    nd, n, c, k, groups, sp, fil, stride, padding, dil, dtype, has_bias = case
    x = rand(rng, (n, c) + sp, dtype)
    w = rand(rng, (k, c // groups) + fil, dtype)
    b = rand(rng, (k,), dtype) if has_bias else None
    fn = {1: ck.conv1d, 2: ck.conv2d, 3: ck.conv3d}[nd]
    got = fn(x, w, b, stride=stride, padding=padding, dilation=dil, groups=groups)
    st = (stride,) * nd if isinstance(stride, int) else stride
    dl = (dil,) * nd if isinstance(dil, int) else dil
    if padding == "same":
        tot = [d * (f - 1) for d, f in zip(dl, fil)]
        pl, pr = [t // 2 for t in tot], [t - t // 2 for t in tot]
    else:
        pl = pr = (padding,) * nd if isinstance(padding, int) else padding
    ref, mag = reference(x, w, b, st, pl, pr, dl, groups)
    check(got, ref, mag, dtype)


def test_conv2d_channels_last_in_place(rng):
    # [N, H, W, C] and [K, Y, X, C] memory viewed as NCHW / KCRS: read in place; the output is
    # channels-last memory viewed as NCHW (torch's channels_last result)
    xm = rand(rng, (2, 6, 7, 8), np.float16)
    wm = rand(rng, (16, 3, 3, 8), np.float16)
    x, w = xm.transpose(0, 3, 1, 2), wm.transpose(0, 3, 1, 2)
    got = ck.conv2d(x, w, padding=1)
    assert got.strides[1] == got.itemsize  # channels innermost
    ref, mag = reference(x, w, None, (1, 1), (1, 1), (1, 1), (1, 1), 1)
    check(got, ref, mag, np.float16)
    # channels-last input with a packed KCRS weight (permuted by ck) gives the same values
    got2 = ck.conv2d(x, np.ascontiguousarray(w), padding=1)
    np.testing.assert_array_equal(got, got2)


def test_conv_refusals(rng):
    x = rand(rng, (1, 4, 5, 5), np.float16)
    w = rand(rng, (4, 2, 3, 3), np.float16)
    with pytest.raises(CkError, match="groups"):
        ck.conv2d(x, w, groups=3)
    with pytest.raises(CkError, match="same"):
        ck.conv2d(x, w, padding="same", stride=2, groups=2)
    with pytest.raises(CkError) as e:
        ck.conv2d(x, w.astype(np.float32), groups=2)
    assert e.value.status == Status.UNSUPPORTED
    with pytest.raises(CkError, match="dims"):
        ck.conv1d(x, w, groups=2)
    with pytest.raises(CkError, match="stride"):  # ck's own sentence: a stride of 0
        ck.conv2d(x, w, stride=0, groups=2)


def reference_grads(x, w, dy, stride, pad_l, pad_r, dil, groups):
    """float64 dX and dW of the convolution (loops over the taps of strided slices of the
    zero-padded input, as `reference`), and the magnitudes' sums of their terms."""
    nd = x.ndim - 2
    x, w, dy = (t.astype(np.float64) for t in (x, w, dy))
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pad_l, pad_r)))
    dxp, mxp = np.zeros_like(xp), np.zeros_like(xp)
    dw, mw = np.zeros_like(w), np.zeros_like(w)
    k, cg = w.shape[:2]
    kg = k // groups
    out = dy.shape[2:]
    for g in range(groups):
        cs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for tap in np.ndindex(*w.shape[2:]):
            sl = (slice(None), cs) + tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                                           for t, d, s, o in zip(tap, dil, stride, out))
            wt = w[(ks, slice(None)) + tap]
            dxp[sl] += np.einsum("nk...,kc->nc...", dy[:, ks], wt)
            mxp[sl] += np.einsum("nk...,kc->nc...", np.abs(dy[:, ks]), np.abs(wt))
            dyf = dy[:, ks].reshape(dy.shape[0], kg, -1)
            xf = xp[sl].reshape(dy.shape[0], cg, -1)
            dw[(ks, slice(None)) + tap] += np.einsum("nko,nco->kc", dyf, xf)
            mw[(ks, slice(None)) + tap] += np.einsum("nko,nco->kc", np.abs(dyf), np.abs(xf))
    inner = (slice(None), slice(None)) + tuple(slice(a, a + n) for a, n in
                                               zip(pad_l, x.shape[2:]))
    return dxp[inner], mxp[inner], dw, mw


@pytest.mark.parametrize("case", [
    # nd, n, c, k, groups, spatial, filter, stride, padding, dilation, dtype
    (2, 2, 4, 6, 2, (7, 6), (3, 3), (2, 1), 1, 1, np.float16),
    (1, 2, 3, 4, 1, (13,), (3,), 2, 2, 2, np.float32),
], ids=["2d-g2-stride2", "1d-dilation-stride"])
def test_conv_gradients(rng, case):
    nd, n, c, k, groups, sp, fil, stride, padding, dil, dtype = case
    x = rand(rng, (n, c) + sp, dtype)
    w = rand(rng, (k, c // groups) + fil, dtype)
    st = (stride,) * nd if isinstance(stride, int) else stride
    dl = (dil,) * nd if isinstance(dil, int) else dil
    pd = (padding,) * nd
    out = [(i + 2 * p - d * (f - 1) - 1) // s + 1 for i, p, d, f, s in zip(sp, pd, dl, fil, st)]
    dy = rand(rng, (n, k) + tuple(out), dtype)
    dx = ck.conv_backward_data(dy, w, x.shape, stride, padding, dil, groups)
    dw = ck.conv_backward_weight(x, dy, w.shape, stride, padding, dil, groups)
    rdx, mdx, rdw, mdw = reference_grads(x, w, dy, st, pd, pd, dl, groups)
    check(dx, rdx, mdx, dtype)
    check(dw, rdw, mdw, dtype)


@pytest.mark.parametrize("case", [
    # nd, n, c, k, groups, spatial, filter, stride, padding, dilation
    (2, 2, 32, 16, 2, (7, 6), (3, 3), (2, 1), 1, 1),
    (1, 1, 16, 8, 1, (11,), (5,), 1, 2, 2),
], ids=["2d-g2-stride2", "1d-dilation2"])
def test_conv_int8(rng, case):
    """int8 x int8 -> int32 on ck's int8 tensor cores: the exact sums (every element equal)."""
    nd, n, c, k, groups, sp, fil, stride, padding, dil = case
    x = rng.integers(-128, 128, (n, c) + sp).astype(np.int8)
    w = rng.integers(-128, 128, (k, c // groups) + fil).astype(np.int8)
    fn = {1: ck.conv1d, 2: ck.conv2d}[nd]
    got = fn(x, w, stride=stride, padding=padding, dilation=dil, groups=groups)
    st = (stride,) * nd if isinstance(stride, int) else stride
    pd, dl = (padding,) * nd, (dil,) * nd
    ref, _ = reference(x, w, None, st, pd, pd, dl, groups)
    assert got.dtype == np.int32 and got.shape == ref.shape
    np.testing.assert_array_equal(got.astype(np.float64), ref)


def test_conv_8bit_refusals(rng):
    x = rng.integers(-128, 128, (1, 16, 5, 5)).astype(np.int8)
    w = rand(rng, (16, 16, 3, 3), np.float16)
    with pytest.raises(CkError, match="both int8") as e:
        ck.conv2d(x, w)
    assert e.value.status == Status.UNSUPPORTED
    with pytest.raises(CkError, match="8-bit backward"):
        ck.conv_backward_data(x, w.astype(np.int8), (1, 16, 7, 7))
