"""scaled_dot_product_attention on the emulator with NumPy float16 inputs against a float64
NumPy reference, every element: MHA and GQA, causal, a BSHD tensor viewed as BHSD (read in
place), d_v != d, the scale, attn_mask (float and boolean, broadcast), dropout (the reference
draws the same Philox4x32-10 words), and the refusals."""
import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError, Status

U16 = 2.0 ** -11


def philox_keep(p, seed, offset, b, h, i, j, hq):
    """ck's dropout decision (docs/ops-attention.md): word j % 4 of Philox4x32-10 of counter
    (j / 4, i, b hq + h, offset) under key (seed, seed >> 32) at least p 2^32."""
    m32 = np.uint64(0xFFFFFFFF)
    c = [np.asarray(x, dtype=np.uint64) & m32 for x in
         np.broadcast_arrays(j >> 2, i, b * hq + h, np.uint64(offset & 0xFFFFFFFF))]
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) ^ (offset >> 32))
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & m32, p1 & m32,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & m32, p0 & m32]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m32, (k1 + np.uint64(0xBB67AE85)) & m32
    word = np.choose((np.asarray(j) & 3).astype(np.int64), c)
    return word >= np.uint64(min(int(np.floor(p * 2.0 ** 32)), 2 ** 32 - 1))


def reference(q, k, v, causal, scale, bias=None, dropout=0.0, seed=0):
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
    if bias is not None:
        s = s + bias.astype(np.float64)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)  # rows that see no key: O = 0
    e = np.exp(s - m)
    l = e.sum(axis=-1, keepdims=True)
    l = np.where(l == 0, np.inf, l)
    if dropout:
        B, H, I, J = np.indices(s.shape, sparse=True)
        e = np.where(philox_keep(dropout, seed, 0, B, H, I, J, s.shape[1]), e / (1 - dropout), 0)
    p16 = e.astype(np.float16).astype(np.float64)  # the rounded numerators
    return np.einsum("bhij,bhje->bhie", p16, v) / l, np.einsum("bhij,bhje->bhie", e / l,
                                                                np.abs(v))


def check(got, q, k, v, causal=False, scale=None, **kw):
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    ref, mag = reference(q, k, v, causal, scale, **kw)
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


@pytest.mark.parametrize("shape,dtype", [
    ((2, 4, 9, 40), np.float32),   # full
    ((9, 40), np.float16),         # broadcast over batch and heads (leading dims missing)
    ((4, 1, 40), np.float32),      # per head and key
])
def test_sdpa_float_mask(rng, shape, dtype):
    q, k, v = rand(rng, 2, 4, 9, 32), rand(rng, 2, 2, 40, 32), rand(rng, 2, 2, 40, 32)
    mask = rng.standard_normal(shape).astype(dtype)
    got = ck.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    check(got, q, k, v, bias=np.broadcast_to(mask, (2, 4, 9, 40)))


@pytest.mark.parametrize("lq", [3, 20])  # the decode kernel and the sm80 kernel
def test_sdpa_bool_mask(rng, lq):
    q, k, v = rand(rng, 1, 2, lq, 64), rand(rng, 1, 2, 50, 64), rand(rng, 1, 2, 50, 64)
    mask = rng.random((1, 2, lq, 50)) < 0.7
    mask[0, 1, 2, :] = False  # a row that sees nothing: O = 0
    got = ck.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    check(got, q, k, v, bias=np.where(mask, 0.0, -np.inf))
    assert not got[0, 1, 2].any()


@pytest.mark.parametrize("lq", [20, 2])  # the sm80 kernel and the decode kernel
def test_sdpa_dropout(rng, lq):
    q, k, v = rand(rng, 2, 2, lq, 32), rand(rng, 2, 2, 45, 32), rand(rng, 2, 2, 45, 32)
    got = ck.scaled_dot_product_attention(q, k, v, dropout_p=0.3, dropout_seed=1234)
    check(got, q, k, v, dropout=0.3, seed=1234)
    again = ck.scaled_dot_product_attention(q, k, v, dropout_p=0.3, dropout_seed=1234)
    assert np.array_equal(got, again)


def test_sdpa_refusals(rng):
    q, k, v = rand(rng, 1, 4, 8, 32), rand(rng, 1, 2, 8, 32), rand(rng, 1, 2, 8, 32)
    with pytest.raises(CkError, match="enable_gqa"):
        ck.scaled_dot_product_attention(q, k, v)
    with pytest.raises(CkError, match="broadcast"):
        ck.scaled_dot_product_attention(q, k, v, attn_mask=q, enable_gqa=True)
    with pytest.raises(CkError, match="dropout"):
        ck.scaled_dot_product_attention(q, k, v, dropout_p=1.0, enable_gqa=True)
    with pytest.raises(CkError, match="is_causal"):
        ck.scaled_dot_product_attention(q, k, v, attn_mask=q[0, 0, :, :8], is_causal=True,
                                        enable_gqa=True)
    with pytest.raises(CkError, match="head"):  # head dim 40 is not one of the kernels'
        ck.scaled_dot_product_attention(rand(rng, 1, 2, 8, 40), rand(rng, 1, 2, 8, 40),
                                        rand(rng, 1, 2, 8, 40))
