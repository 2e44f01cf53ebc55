"""scaled_dot_product_attention on the emulator with NumPy float16 inputs against a float64
NumPy reference, every element: MHA and GQA, causal, a BSHD tensor viewed as BHSD (read in
place), d_v != d, the scale, and the refusals."""
import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError, Status

U16 = 2.0 ** -11


def reference(q, k, v, causal, scale):
    """float64 attention; P rounded to float16 before P V, as the kernel does."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    hq, hk = q.shape[1], k.shape[1]
    k = np.repeat(k, hq // hk, axis=1)
    v = np.repeat(v, hq // hk, axis=1)
    s = np.einsum("bhie,bhje->bhij", q, k) * scale
    if causal:
        i = np.arange(s.shape[2])[:, None]
        j = np.arange(s.shape[3])[None, :]
        s = np.where(j > i, -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    l = e.sum(axis=-1, keepdims=True)
    p16 = e.astype(np.float16).astype(np.float64)  # the rounded numerators
    return np.einsum("bhij,bhje->bhie", p16, v) / l, np.einsum("bhij,bhje->bhie", e / l,
                                                                np.abs(v))


def check(got, q, k, v, causal=False, scale=None):
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    ref, mag = reference(q, k, v, causal, scale)
    assert got.shape == ref.shape and got.dtype == np.float16
    # P's rounding (2 units of f16 per term), the f32 scores and sums, O's rounding
    bound = 4 * U16 * mag + 2 * U16 * np.abs(ref) + 1e-6
    err = np.abs(got.astype(np.float64) - ref)
    bad = err > bound
    if bad.any():
        i = np.unravel_index(np.argmax(err - bound), err.shape)
        pytest.fail(f"{bad.sum()} of {err.size} elements out of bound; worst at {i}: got "
                    f"{got[i]}, reference {ref[i]}, bound {bound[i]}")


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float16)


@pytest.mark.parametrize("b,hq,hk,lq,lk,e,ev,causal", [
    (1, 2, 2, 17, 17, 32, 32, False),
    (2, 2, 2, 33, 33, 64, 64, True),
    (1, 4, 2, 9, 40, 32, 32, False),   # GQA, s_q < s_k
    (1, 2, 1, 20, 20, 64, 32, True),   # MQA, d_v != d
])
def test_sdpa(rng, b, hq, hk, lq, lk, e, ev, causal):
    q, k, v = rand(rng, b, hq, lq, e), rand(rng, b, hk, lk, e), rand(rng, b, hk, lk, ev)
    got = ck.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hk)
    check(got, q, k, v, causal)


def test_sdpa_bshd_view_and_scale(rng):
    # [B, L, H, E] memory read as [B, H, L, E] in place, and an explicit scale
    qs, ks, vs = rand(rng, 2, 19, 3, 32), rand(rng, 2, 23, 3, 32), rand(rng, 2, 23, 3, 32)
    q, k, v = (x.transpose(0, 2, 1, 3) for x in (qs, ks, vs))
    got = ck.scaled_dot_product_attention(q, k, v, scale=0.3)
    check(got, q, k, v, scale=0.3)


def test_sdpa_refusals(rng):
    q, k, v = rand(rng, 1, 4, 8, 32), rand(rng, 1, 2, 8, 32), rand(rng, 1, 2, 8, 32)
    with pytest.raises(CkError, match="enable_gqa"):
        ck.scaled_dot_product_attention(q, k, v)
    with pytest.raises(CkError) as e:
        ck.scaled_dot_product_attention(q, k, v, attn_mask=q, enable_gqa=True)
    assert e.value.status == Status.NOT_IMPLEMENTED
    with pytest.raises(CkError, match="dropout"):
        ck.scaled_dot_product_attention(q, k, v, dropout_p=0.1, enable_gqa=True)
    with pytest.raises(CkError, match="head"):  # head dim 40 is not one of the kernels'
        ck.scaled_dot_product_attention(rand(rng, 1, 2, 8, 40), rand(rng, 1, 2, 8, 40),
                                        rand(rng, 1, 2, 8, 40))
