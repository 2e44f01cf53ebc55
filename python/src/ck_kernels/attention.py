"""scaled_dot_product_attention: ck's fused attention forward (ck/attention.h) with
torch.nn.functional.scaled_dot_product_attention's arguments.

query [B, Hq, Lq, E], key [B, Hk, Lk, E], value [B, Hk, Lk, Ev] (torch's layout; any strides
with a contiguous last dimension, so BSHD tensors viewed as BHSD with .transpose(1, 2) are read
in place), bf16 or f16 (NumPy: float16); E and Ev each 32, 64, 96, 128, 192 or 256. The result
is [B, Hq, Lq, Ev] of the inputs' type. is_causal aligns the mask top-left, as torch does.
Hq must equal Hk unless enable_gqa (Hq a multiple of Hk), as torch.

attn_mask, as torch: a boolean tensor (True: the query may attend to the key) or a float
tensor added to the scores (f32, bf16 or f16), broadcastable to [B, Hq, Lq, Lk] (each dim 1 or
the full size, leading dims may be missing); read in place (a boolean mask is turned into an
f32 additive one first). A query row that may attend to no key gets 0 (torch gives NaN).
dropout_p > 0 drops P's entries with ck's counter-based RNG (Philox4x32-10) from a seed drawn
from torch's (or Python's) generator; dropout_seed fixes it (then the result is deterministic).
No autograd yet (ck has no attention backward).
"""
import ctypes
import random
import struct

from . import _fast, _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import describe, empty, same_place

# ck_attention_problem: b, s_q, s_k, h_q, h_k, d, d_v; dtype; strides (batch, seq, head) of
# q, k, v, o; mask, align; window_left, window_right; lse; softcap; varlen; total_q, total_k;
# var: bias (dtype, dims[4], strides[4]), alibi, page_size, num_pages, max_pages, dropout_p
_PROBLEM = struct.Struct("=7qi4x12qii2qifi4x2q" "i4x4q4qi4x3qf4x")
# ck_attention_args: q, k, v, o, lse; scale; cu_seqlens_q, cu_seqlens_k; bias, alibi_slopes,
# block_table, seqlens_k; dropout_seed, dropout_offset; dropout_mask
_ARGS = struct.Struct("=5Qf4x2Q4Q2QQ")
_MASK_NONE, _MASK_CAUSAL = 0, 1
_MAX_PLANS = 256


def _plans():
    st = _runtime._state()
    p = st.get("attention_plans")
    if p is None:
        p = st["attention_plans"] = {}
    return p


def _bhsd(arg, name):
    """(B, H, L, E) and the (batch, seq, head) element strides of a [B, H, L, E] tensor."""
    if arg.rank != 4:
        fail(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: '{name}' has shape "
             f"{tuple(arg.shape)}; expected 4 dimensions [batch, heads, length, head_dim].")
    if arg.strides[3] != 1 and arg.shape[3] > 1:
        fail(Status.UNSUPPORTED, f"scaled_dot_product_attention: '{name}' has strides "
             f"{tuple(arg.strides)}; its last dimension must be contiguous (stride 1).")
    st = arg.strides
    return tuple(arg.shape), (st[0], st[2], st[1])


def _bias(attn_mask, full, like):
    """(Arg, dims, strides) of attn_mask as ck's additive bias over full = (B, Hq, Lq, Lk); a
    boolean mask becomes an f32 one (0 / -inf)."""
    if _torchops.is_torch(attn_mask):
        if attn_mask.dtype == _torchops.torch.bool:
            t = _torchops.torch
            attn_mask = t.zeros(attn_mask.shape, dtype=t.float32, device=attn_mask.device) \
                .masked_fill_(~attn_mask, float("-inf"))
    else:
        import numpy as np
        if getattr(attn_mask, "dtype", None) == np.bool_:
            attn_mask = np.where(attn_mask, np.float32(0), np.float32(-np.inf))
    ma = describe(attn_mask, "attn_mask")
    if ma.rank > 4:
        fail(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: attn_mask has shape "
             f"{tuple(ma.shape)}; expected at most 4 dimensions broadcastable to "
             f"[batch, heads, query length, key length] = {list(full)}.")
    pad = 4 - ma.rank
    dims = (1,) * pad + tuple(ma.shape)
    strides = (0,) * pad + tuple(ma.strides)
    for x in range(4):
        if dims[x] not in (1, full[x]):
            fail(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: attn_mask of shape "
                 f"{tuple(ma.shape)} does not broadcast to {list(full)} (each dim 1 or the "
                 "full size).")
    strides = tuple(0 if d == 1 else st for d, st in zip(dims, strides))
    if strides == (0, 0, 0, 0) and dims != (1, 1, 1, 1):
        fail(Status.INVALID_ARGUMENT, "scaled_dot_product_attention: attn_mask has all-zero "
             "strides over dims of more than one element (an expanded tensor); pass "
             ".contiguous().")
    return ma, dims, strides


def _sdpa_core(query, key, value, is_causal, scale, enable_gqa, attn_mask=None, dropout_p=0.0,
               seed=0, record=None):
    qa, ka, va = describe(query, "query"), describe(key, "key"), describe(value, "value")
    (b, hq, lq, e), sq = _bhsd(qa, "query")
    (bk, hk, lk, ek), sk = _bhsd(ka, "key")
    (bv, hv, lv, ev), sv = _bhsd(va, "value")
    if (bk, hk, lk) != (bv, hv, lv) or bk != b or ek != e:
        fail(Status.INVALID_ARGUMENT, "scaled_dot_product_attention: shapes query "
             f"{tuple(qa.shape)}, key {tuple(ka.shape)} and value {tuple(va.shape)} do not "
             "match (batch, key heads and length alike; query and key head_dim alike).")
    if hq != hk and not enable_gqa:
        fail(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: query has {hq} heads and "
             f"key {hk}; pass enable_gqa=True for grouped-query attention (as torch).")
    if qa.dtype != ka.dtype or qa.dtype != va.dtype:
        fail(Status.INVALID_ARGUMENT, "scaled_dot_product_attention: query, key and value must "
             "have one type (bf16 or f16).")
    bias = None
    bdt, bdims, bstrides = 0, (0, 0, 0, 0), (0, 0, 0, 0)
    if attn_mask is not None:
        bias, bdims, bstrides = _bias(attn_mask, (b, hq, lq, lk), qa)
        bdt = bias.dtype
    place = same_place([qa, ka, va] + ([bias] if bias else []),
                       ["query", "key", "value", "attn_mask"])
    out, oa = empty(qa, (b, hq, lq, ev), qa.dtype)
    so = (hq * lq * ev, ev, lq * ev)  # [B, Hq, Lq, Ev] packed: batch, seq, head strides
    ctx = _runtime.context(place)
    mask = _MASK_CAUSAL if is_causal else _MASK_NONE
    key_ = (ctx, b, lq, lk, hq, hk, e, ev, qa.dtype, sq, sk, sv, so, mask, bdt, bdims, bstrides,
            float(dropout_p))
    plans = _plans()
    plan = plans.get(key_)
    if plan is None:
        prob = ctypes.create_string_buffer(_PROBLEM.pack(
            b, lq, lk, hq, hk, e, ev, qa.dtype, *sq, *sk, *sv, *so, mask, 0, -1, -1, 0, 0.0, 0,
            0, 0, bdt, *bdims, *bstrides, 0, 0, 0, 0, float(dropout_p)))
        ptr = ctypes.c_void_p()
        call(_lib.ck_attention_plan_create, ctx, prob, ctypes.byref(ptr))
        if len(plans) >= _MAX_PLANS:
            _fast.clear()  # templates hold plans
            for v in plans.values():
                _lib.ck_attention_plan_destroy(v)
            plans.clear()
        plan = plans[key_] = ptr.value
    args = _ARGS.pack(qa.ptr, ka.ptr, va.ptr, oa.ptr, 0, 0.0 if scale is None else scale, 0, 0,
                      bias.ptr if bias else 0, 0, 0, 0, seed & (2 ** 64 - 1), 0, 0)
    if record:  # the call from a buffer a template keeps: q, k, v, o pointers first
        buf = ctypes.create_string_buffer(args, len(args))
        if _lib.ck_attention_plan_execute(plan, buf):
            raise _lib.error()
        _fast.record(record, (query, key, value), (out,), _lib.ck_attention_plan_execute,
                     (plan, ctypes.addressof(buf)), buf, (0, 8, 16, 24))
        return out
    if _lib.ck_attention_plan_execute(plan, args):
        raise _lib.error()
    return out


def _impl(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, seed):
    return _sdpa_core(query, key, value, is_causal, scale, enable_gqa, attn_mask, dropout_p, seed)


def _fake(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, seed):
    return query.new_empty(tuple(query.shape[:-1]) + (value.shape[-1],))


_op = _torchops.op("sdpa(Tensor query, Tensor key, Tensor value, Tensor? attn_mask, "
                   "float dropout_p, bool is_causal, float? scale, bool enable_gqa, int seed) "
                   "-> Tensor", _impl, _fake)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False,
                                 dropout_seed=None):
    """dropout(softmax(query key^T * scale + attn_mask (+ causal mask))) value, fused
    (torch.nn.functional.scaled_dot_product_attention's arguments, and dropout_seed; see the
    module's description)."""
    if attn_mask is None and not dropout_p and not _fast.is_compiling() and \
            (scale is None or isinstance(scale, float)) and scale != 0.0:
        opts = ("sdpa", bool(is_causal), scale, bool(enable_gqa))
        y = _fast.call(opts, query, key, value)  # a repeated eager call (_fast)
        if y is not None:
            return y
        if _torchops.is_torch(query) and _torchops.direct(query, key, value):
            return _sdpa_core(query, key, value, bool(is_causal), scale, bool(enable_gqa),
                              record=opts)
    if attn_mask is not None and is_causal:
        fail(Status.INVALID_ARGUMENT, "scaled_dot_product_attention: attn_mask and is_causal "
             "both given; torch refuses the pair too (fold the causal mask into attn_mask).")
    dropout_p = float(dropout_p)
    if not 0.0 <= dropout_p < 1.0:
        fail(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: dropout_p = {dropout_p}; "
             "accepted: 0 <= p < 1.")
    if dropout_seed is None:
        dropout_seed = 0
        if dropout_p > 0.0:
            if _torchops.available():
                dropout_seed = int(_torchops.torch.randint(0, 2 ** 62, ()).item())
            else:
                dropout_seed = random.getrandbits(62)
    dropout_seed = int(dropout_seed) & (2 ** 63 - 1)
    if scale is not None:
        scale = float(scale)
        if not scale == scale or scale == 0.0:
            fail(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: scale = {scale}; "
                 "accepted: a finite nonzero number or None (1 / sqrt(head_dim)).")
    if _op is not None and _torchops.is_torch(query) and \
            not _torchops.direct(query, key, value,
                                 *(() if attn_mask is None else (attn_mask,))):
        return _op(query, key, value, attn_mask, dropout_p, bool(is_causal), scale,
                   bool(enable_gqa), dropout_seed)
    return _sdpa_core(query, key, value, bool(is_causal), scale, bool(enable_gqa), attn_mask,
                      dropout_p, dropout_seed)
