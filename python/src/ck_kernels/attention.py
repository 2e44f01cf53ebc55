"""scaled_dot_product_attention: ck's fused attention forward (ck/attention.h) with
torch.nn.functional.scaled_dot_product_attention's arguments.

query [B, Hq, Lq, E], key [B, Hk, Lk, E], value [B, Hk, Lk, Ev] (torch's layout; any strides
with a contiguous last dimension, so BSHD tensors viewed as BHSD with .transpose(1, 2) are read
in place), bf16 or f16 (NumPy: float16); E and Ev each 32, 64, 96, 128, 192 or 256. The result
is [B, Hq, Lq, Ev] of the inputs' type. is_causal aligns the mask top-left, as torch does.
Hq must equal Hk unless enable_gqa (Hq a multiple of Hk), as torch. Not taken (refused with a
sentence): attn_mask tensors, dropout. No autograd yet (ck has no attention backward).
"""
import ctypes
import struct

from . import _lib, _runtime, _tensor, _torchops
from ._lib import Status, call, fail
from ._tensor import describe, empty, same_place

# ck_attention_problem: b, s_q, s_k, h_q, h_k, d, d_v; dtype; strides (batch, seq, head) of
# q, k, v, o; mask, align; window_left, window_right; lse; softcap; varlen; total_q, total_k
_PROBLEM = struct.Struct("=7qi4x12qii2qifi4x2q")
# ck_attention_args: q, k, v, o, lse; scale; cu_seqlens_q, cu_seqlens_k
_ARGS = struct.Struct("=5Qf4x2Q")
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


def _sdpa_core(query, key, value, is_causal, scale, enable_gqa):
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
    place = same_place([qa, ka, va], ["query", "key", "value"])
    out, oa = empty(qa, (b, hq, lq, ev), qa.dtype)
    so = (hq * lq * ev, ev, lq * ev)  # [B, Hq, Lq, Ev] packed: batch, seq, head strides
    ctx = _runtime.context(place)
    mask = _MASK_CAUSAL if is_causal else _MASK_NONE
    key_ = (ctx, b, lq, lk, hq, hk, e, ev, qa.dtype, sq, sk, sv, so, mask)
    plans = _plans()
    plan = plans.get(key_)
    if plan is None:
        prob = ctypes.create_string_buffer(_PROBLEM.pack(
            b, lq, lk, hq, hk, e, ev, qa.dtype, *sq, *sk, *sv, *so, mask, 0, -1, -1, 0, 0.0, 0,
            0, 0))
        ptr = ctypes.c_void_p()
        call(_lib.ck_attention_plan_create, ctx, prob, ctypes.byref(ptr))
        if len(plans) >= _MAX_PLANS:
            for v in plans.values():
                _lib.ck_attention_plan_destroy(v)
            plans.clear()
        plan = plans[key_] = ptr.value
    args = _ARGS.pack(qa.ptr, ka.ptr, va.ptr, oa.ptr, 0, 0.0 if scale is None else scale, 0, 0)
    if _lib.ck_attention_plan_execute(plan, args):
        raise _lib.error()
    return out


def _impl(query, key, value, is_causal, scale, enable_gqa):
    return _sdpa_core(query, key, value, is_causal, scale, enable_gqa)


def _fake(query, key, value, is_causal, scale, enable_gqa):
    return query.new_empty(tuple(query.shape[:-1]) + (value.shape[-1],))


_op = _torchops.op("sdpa(Tensor query, Tensor key, Tensor value, bool is_causal, float? scale, "
                   "bool enable_gqa) -> Tensor", _impl, _fake)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query key^T * scale (+ causal mask)) value, fused (torch.nn.functional.
    scaled_dot_product_attention's arguments; see the module's description)."""
    if attn_mask is not None:
        fail(Status.NOT_IMPLEMENTED, "scaled_dot_product_attention: attn_mask tensors are not "
             "supported yet; is_causal=True gives the causal mask.")
    if dropout_p:
        fail(Status.NOT_IMPLEMENTED, "scaled_dot_product_attention: dropout_p must be 0 (ck's "
             "attention has no dropout yet).")
    if scale is not None:
        scale = float(scale)
        if not scale == scale or scale == 0.0:
            fail(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: scale = {scale}; "
                 "accepted: a finite nonzero number or None (1 / sqrt(head_dim)).")
    if _op is not None and _torchops.is_torch(query) and \
            not _torchops.direct(query, key, value):
        return _op(query, key, value, bool(is_causal), scale, bool(enable_gqa))
    return _sdpa_core(query, key, value, bool(is_causal), scale, bool(enable_gqa))
