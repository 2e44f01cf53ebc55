"""max_pool2d / max_pool3d / avg_pool2d / avg_pool3d and max_pool_backward on the emulator
with NumPy inputs against float64 references written here with Python loops over the windows
(every element): torch's semantics -- ceil_mode, dilation, padding counted or not, divisor
override, ties (first index), NaN; NCHW inputs (permuted by ck) and channels-last views (read in
place); unbatched inputs; the refusals."""
import itertools

import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError


def out_len(i, k, p, s, d, ceil_mode):
    num = i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= i + p:
        o -= 1
    return o


def windows(x, k, s, p, d, ceil_mode):
    """For every (n, c, *o): the list of (flat index, value) of the window's input elements,
    and the window's size clipped to in + p (avg's count_include_pad divisor)."""
    n, c, *sp = x.shape
    outs = [out_len(i, kk, pp, ss, dd, ceil_mode) for i, kk, pp, ss, dd in zip(sp, k, p, s, d)]
    for o in itertools.product(*[range(v) for v in outs]):
        starts = [oo * ss - pp for oo, ss, pp in zip(o, s, p)]
        size = 1
        for st, kk, i, pp in zip(starts, k, sp, p):
            size *= min(st + kk, i + pp) - st
        taps = []
        for f in itertools.product(*[range(kk) for kk in k]):
            pos = [st + ff * dd for st, ff, dd in zip(starts, f, d)]
            if all(0 <= q < i for q, i in zip(pos, sp)):
                flat = 0
                for q, i in zip(pos, sp):
                    flat = flat * i + q
                taps.append((tuple(pos), flat))
        yield o, taps, size, outs


def ref_max(x, k, s, p, d, ceil_mode):
    n, c = x.shape[:2]
    res = {}
    for o, taps, _, outs in windows(x, k, s, p, d, ceil_mode):
        v = x[(slice(None), slice(None)) + tuple(zip(*[t[0] for t in taps]))].astype(np.float64)
        flats = np.array([t[1] for t in taps])
        best = np.full((n, c), -np.inf)
        arg = np.full((n, c), flats[0])
        for j in range(len(taps)):  # torch: the largest, ties the first, NaN the last
            upd = (v[:, :, j] > best) | np.isnan(v[:, :, j])
            best = np.where(upd, v[:, :, j], best)
            arg = np.where(upd, flats[j], arg)
        res[o] = (best, arg)
    y = np.zeros((n, c) + tuple(outs))
    ind = np.zeros((n, c) + tuple(outs), dtype=np.int64)
    for o, (b, a) in res.items():
        y[(slice(None), slice(None)) + o] = b
        ind[(slice(None), slice(None)) + o] = a
    return y, ind


def ref_avg(x, k, s, p, ceil_mode, include_pad, divisor):
    n, c = x.shape[:2]
    vals = {}
    for o, taps, size, outs in windows(x, k, s, p, (1,) * len(k), ceil_mode):
        v = x[(slice(None), slice(None)) + tuple(zip(*[t[0] for t in taps]))].astype(np.float64)
        div = divisor or (size if include_pad else len(taps))
        vals[o] = v.sum(axis=2) / div
    y = np.zeros((n, c) + tuple(outs))
    for o, v in vals.items():
        y[(slice(None), slice(None)) + o] = v
    return y


def rand_ties(rng, shape, dtype):
    x = np.floor(rng.uniform(-1, 1, shape) * 4)
    u = rng.uniform(0, 1, shape)
    x[u < 0.01] = np.nan
    x[(u >= 0.01) & (u < 0.03)] = -np.inf
    return x.astype(dtype)


@pytest.mark.parametrize("case", [
    # shape, kernel, stride, padding, dilation, ceil_mode, dtype
    ((2, 16, 13, 11), (3, 3), (2, 2), (1, 1), (1, 1), True, np.float16),
    ((1, 3, 9, 8), (3, 3), (1, 1), (1, 1), (2, 2), False, np.float32),
    ((1, 8, 5, 7, 7), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False, np.float16),
], ids=["2d-ceil", "2d-dilation-c3", "3d"])
def test_max_pool(rng, case):
    shape, k, s, p, d, ceil_mode, dtype = case
    x = rand_ties(rng, shape, dtype)
    fn = ck.max_pool2d if len(k) == 2 else ck.max_pool3d
    y, ind = fn(x, k, s, p, d, ceil_mode=ceil_mode, return_indices=True)
    ry, rind = ref_max(x, k, s, p, d, ceil_mode)
    assert y.shape == ry.shape and y.dtype == dtype and ind.dtype == np.int64
    np.testing.assert_array_equal(y.astype(np.float64), ry)  # NaN == NaN here
    np.testing.assert_array_equal(ind, rind)


def test_max_pool2d_channels_last_and_unbatched(rng):
    xm = rand_ties(rng, (2, 7, 9, 24), np.float32)  # [N, H, W, C] memory
    x = xm.transpose(0, 3, 1, 2)
    y, ind = ck.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert y.strides[1] == y.itemsize  # channels-last result, as torch
    ry, rind = ref_max(x, (3, 3), (2, 2), (1, 1), (1, 1), False)
    np.testing.assert_array_equal(y, ry)
    np.testing.assert_array_equal(ind, rind)
    y1 = ck.max_pool2d(np.ascontiguousarray(x[0]), 3, 2, 1)  # [C, H, W]
    np.testing.assert_array_equal(y1, ry[0])


@pytest.mark.parametrize("case", [
    # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor, dtype
    ((2, 24, 7, 9), (3, 3), (2, 2), (1, 1), True, True, None, np.float16),
    ((1, 5, 7, 6), (3, 3), (2, 2), (1, 1), False, False, None, np.float32),
    ((1, 8, 3, 4, 5), (2, 2, 2), (1, 1, 1), (1, 1, 1), False, True, 5, np.float16),
], ids=["2d-ceil-include-pad", "2d-exclude-pad", "3d-divisor"])
def test_avg_pool(rng, case):
    shape, k, s, p, ceil_mode, inc, div, dtype = case
    x = rng.uniform(-1, 1, shape).astype(dtype)
    fn = ck.avg_pool2d if len(k) == 2 else ck.avg_pool3d
    y = fn(x, k, s, p, ceil_mode=ceil_mode, count_include_pad=inc, divisor_override=div)
    ref = ref_avg(x, k, s, p, ceil_mode, inc, div)
    unit = 2.0 ** -11 if dtype == np.float16 else 2.0 ** -24
    assert y.shape == ref.shape and y.dtype == dtype
    err = np.abs(y.astype(np.float64) - ref)
    assert (err <= unit * np.abs(ref) + 2.0 ** -20).all(), f"max error {err.max()}"


@pytest.mark.parametrize("case", [
    ((2, 16, 9, 11), (3, 3), (2, 2), (1, 1), np.float16),   # overlapping windows
    ((1, 8, 7, 6), (2, 2), (3, 3), (0, 0), np.float32),     # rows no window reaches
], ids=["overlapping", "gaps"])
def test_max_pool_backward(rng, case):
    shape, k, s, p, dtype = case
    x = rand_ties(rng, shape, dtype)
    _, ind = ck.max_pool2d(x, k, s, p, return_indices=True)
    dy = rng.uniform(-1, 1, ind.shape).astype(dtype)
    dx = ck.max_pool_backward(dy, ind, x.shape, k, s, p)
    ref = np.zeros((shape[0], shape[1], shape[2] * shape[3]))
    n_i, c_i = np.indices(ind.shape[:2])
    for o in itertools.product(*[range(v) for v in ind.shape[2:]]):
        sel = (slice(None), slice(None)) + o
        np.add.at(ref, (n_i, c_i, ind[sel]), dy[sel].astype(np.float64))
    ref = ref.reshape(shape)
    unit = 2.0 ** -11 if dtype == np.float16 else 2.0 ** -24
    assert dx.shape == shape and dx.dtype == dtype
    err = np.abs(dx.astype(np.float64) - ref)
    assert (err <= unit * np.abs(ref) + 2.0 ** -18).all(), f"max error {err.max()}"
    assert (ref != 0).any()


def test_pool_refusals(rng):
    x = rng.uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)
    with pytest.raises(CkError, match="half"):
        ck.max_pool2d(x, 3, padding=2)
    with pytest.raises(CkError, match="divisor_override"):
        ck.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(CkError, match="spatial"):
        ck.max_pool2d(x[0, 0], 2)
    with pytest.raises(CkError, match="stride"):
        ck.max_pool2d(x, 2, stride=0)
