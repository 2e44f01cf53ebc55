"""matmul / gemm with torch CUDA tensors against torch's own functions, gradients, the small
model (RMSNorm -> matmul -> SiLU -> matmul -> softmax) compiled with torch.compile(fullgraph=True)
by inductor, streams and device errors. Skipped without torch or without a CUDA GPU."""
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import ck_kernels as ck  # noqa: E402
from ck_kernels import CkError  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)
if not hasattr(torch.ops, "ck") or not hasattr(torch.ops.ck, "matmul"):
    pytest.skip("ck_kernels was imported without torch", allow_module_level=True)

DEV = "cuda"
TF32 = 2.0 ** -10  # TF32: sm90 wgmma truncates the inputs to 10 mantissa bits (not rounding)
UNIT = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


@pytest.fixture
def gen(rng):
    return torch.Generator(device=DEV).manual_seed(int(rng.integers(1 << 31)))


def randn(gen, *shape, dtype=torch.float32, grad=False, scale=1.0):
    t = torch.randn(*shape, generator=gen, device=DEV) * scale
    return t.to(dtype).requires_grad_(grad)


def assert_gemm_close(got, a, b, ref, in_unit=0.0, extra=0.0, fp8=False):
    """Every element within the bound of the float64 reference (see test_gemm_numpy.py). fp8:
    Hopper's fp8 wgmma keeps about 14 bits of the running sum within an instruction, one such
    rounding per 32-deep k-step (the bound of src/ops/gemm/reference.c; docs/runtime.md)."""
    k = a.shape[1]
    s = a.double().abs() @ b.double().abs() + extra
    ref = ref.double()
    bound = (2 * in_unit * s + 2 * (k / 8 + 4) * 2.0 ** -24 * s + 2.0 ** -19 * (s + ref.abs())
             + 2 * UNIT[got.dtype] * ref.abs())
    if fp8:
        bound = bound + 2 * (k / 32 + 1) * 2.0 ** -13 * s
    err = (got.double() - ref).abs()
    assert got.shape == ref.shape
    assert bool((err <= bound).all()), f"max excess {(err - bound).max().item()}"


SHAPES = [(1, 1, 1), (17, 33, 9), (65, 7, 130), (1000, 520, 264)]
# (A column-major, B column-major) per type: every order for bf16; for f16 and f32 the orders
# that take family 90 (K-major: A row, B column) and the opposite (family 80)
ORDERS = {torch.bfloat16: [(False, False), (False, True), (True, False), (True, True)],
          torch.float16: [(False, True), (True, False)],
          torch.float32: [(False, True), (True, False)]}


def col_major(t):
    return t.t().contiguous().t()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matmul_orders_match_float64(gen, dtype, m, n, k):
    tin = TF32 if dtype == torch.float32 else 0.0
    a = randn(gen, m, k, dtype=dtype)
    b = randn(gen, k, n, dtype=dtype)
    ref = a.double() @ b.double()
    for a_col, b_col in ORDERS[dtype]:
        y = ck.matmul(col_major(a) if a_col else a, col_major(b) if b_col else b)
        assert y.dtype == dtype and y.device == a.device
        assert_gemm_close(y, a, b, ref, tin)


@pytest.mark.parametrize("act", [None, "relu", "gelu", "gelu_tanh", "silu", "sigmoid"])
def test_gemm_epilogues_match_torch(gen, act):
    m, n, k = 200, 136, 72
    a, w = randn(gen, m, k, dtype=torch.bfloat16), randn(gen, n, k, dtype=torch.bfloat16)
    bias = randn(gen, n, dtype=torch.bfloat16)
    acts = {None: lambda x: x, "relu": torch.relu, "gelu": F.gelu,
            "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
            "sigmoid": torch.sigmoid}
    y = ck.gemm(a, w.t(), bias=bias, activation=act, out_dtype=torch.float32)
    ref = acts[act](a.double() @ w.double().t() + bias.double())
    assert_gemm_close(y, a, w.t(), ref, 0.0, bias.double().abs())
    c = randn(gen, m, n)
    rbias = randn(gen, m, 1)
    y = ck.gemm(a, w.t(), c, alpha=0.5, beta=-1.0, bias=rbias, activation=act,
                out_dtype=torch.float32)
    ref = acts[act](0.5 * a.double() @ w.double().t() - c.double() + rbias.double())
    assert_gemm_close(y, 0.5 * a.float(), w.t(), ref, 0.0, c.double().abs() +
                      rbias.double().abs())


def test_gemm_fp8_if_supported(gen):
    if torch.cuda.get_device_capability() < (8, 9) or not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("fp8 needs sm_89 or later")
    a = randn(gen, 128, 96).to(torch.float8_e4m3fn)
    b = randn(gen, 64, 96).to(torch.float8_e4m3fn).t()
    y = ck.gemm(a, b, scale_a=0.5, scale_b=2.0)
    assert y.dtype == torch.float32
    a32, b32 = a.float(), b.float()
    assert_gemm_close(y, a32, b32, a32.double() @ b32.double(), fp8=True)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_matmul_gradients_match_torch(gen, dtype):
    tin = TF32 if dtype == torch.float32 else 0.0
    a = randn(gen, 130, 72, dtype=dtype, grad=True)
    w = randn(gen, 96, 72, dtype=dtype, grad=True)
    g = randn(gen, 130, 96, dtype=dtype)
    da, dw = torch.autograd.grad(ck.matmul(a, w.t()), (a, w), g)
    assert_gemm_close(da, g, w, g.double() @ w.double(), tin)
    assert_gemm_close(dw, g.t(), a, g.double().t() @ a.double(), tin)


def test_torch_compile_fullgraph_small_model():
    """The issue's small model with ck ops compiled by inductor with fullgraph=True (a graph
    break is an error), against pure torch: outputs and the weights' gradients."""
    torch.manual_seed(0)
    d, hid, out = 256, 512, 128
    w0 = torch.randn(d, device=DEV, requires_grad=True)
    w1 = (torch.randn(hid, d, device=DEV) / d ** 0.5).requires_grad_()  # nn.Linear layout
    w2 = (torch.randn(out, hid, device=DEV) / hid ** 0.5).requires_grad_()

    def model(x):
        h = ck.rms_norm(x, (d,), w0)
        h = ck.elementwise("silu(x0)", ck.matmul(h, w1.t()))
        return ck.softmax(ck.matmul(h, w2.t()))

    def fused(x):  # inference form: SiLU in the GEMM's epilogue
        h = ck.gemm(ck.rms_norm(x, (d,), w0), w1.t(), activation="silu")
        return ck.softmax(ck.matmul(h, w2.t()))

    def ref(x):
        return F.softmax(F.silu(F.rms_norm(x, (d,), w0) @ w1.t()) @ w2.t(), -1)

    torch._dynamo.reset()
    x = torch.randn(64, d, device=DEV)
    compiled = torch.compile(model, fullgraph=True)
    tol = dict(rtol=1e-2, atol=1e-5)  # TF32 GEMMs against full f32
    torch.testing.assert_close(compiled(x), ref(x), **tol)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(fused, fullgraph=True)(x), ref(x), **tol)
    got = torch.autograd.grad(compiled(x).square().sum(), (w0, w1, w2))
    want = torch.autograd.grad(ref(x).square().sum(), (w0, w1, w2))
    for g, r in zip(got, want):
        torch.testing.assert_close(g, r, rtol=3e-2, atol=1e-3 * r.abs().max().item())


def test_matmul_runs_on_the_current_stream(gen):
    a, b = randn(gen, 300, 200, dtype=torch.float16), randn(gen, 200, 100, dtype=torch.float16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = ck.matmul(a, b)
        z = y.float() * 2  # ordered after ck's kernel on s, no synchronization
    torch.cuda.current_stream().wait_stream(s)
    assert torch.equal(z, y.float() * 2)  # z saw ck's finished result
    assert_gemm_close(y, a, b, a.double() @ b.double())


def test_device_errors(gen):
    a, b = randn(gen, 4, 8), randn(gen, 8, 3)
    with pytest.raises(CkError, match="one device"):
        ck.matmul(a, b.cpu())
    with pytest.raises(CkError, match="one device"):
        ck.gemm(a, b, bias=torch.zeros(3))
    if torch.cuda.device_count() > 1:
        with pytest.raises(CkError, match="one device"):
            ck.matmul(a, b.to("cuda:1"))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("causal,hq,hk", [(False, 4, 4), (True, 4, 4), (True, 8, 2)])
def test_sdpa_against_torch(gen, dtype, causal, hq, hk):
    q = randn(gen, 2, hq, 200, 64, dtype=dtype)
    k = randn(gen, 2, hk, 200, 64, dtype=dtype)
    v = randn(gen, 2, hk, 200, 64, dtype=dtype)
    got = ck.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hk)
    kk, vv = (x.double().repeat_interleave(hq // hk, dim=1) for x in (k, v))
    ref = F.scaled_dot_product_attention(q.double(), kk, vv, is_causal=causal)
    # P is rounded to the input type before P V: a few units of it per output
    tol = 4 * UNIT[dtype] * vv.abs().amax() + 2 * UNIT[dtype] * ref.abs()
    assert ((got.double() - ref).abs() <= tol).all()
    compiled = torch.compile(lambda a, b, c: ck.scaled_dot_product_attention(
        a, b, c, is_causal=causal, enable_gqa=hq != hk), fullgraph=True)
    assert torch.equal(compiled(q, k, v), got)


@pytest.mark.parametrize("boolean,lq", [(False, 200), (True, 200), (False, 1), (True, 7)])
def test_sdpa_attn_mask_against_torch(gen, boolean, lq):
    """attn_mask as torch takes it (float, added; boolean, True attends), broadcast over the
    batch, through the sm80 kernel (lq 200) and the decode kernel; and compiled."""
    q = randn(gen, 2, 4, lq, 64, dtype=torch.bfloat16)
    k, v = (randn(gen, 2, 4, 300, 64, dtype=torch.bfloat16) for _ in range(2))
    if boolean:
        mask = torch.rand(4, lq, 300, generator=gen, device=DEV) < 0.8
        mask[:, :, 0] = True  # every row sees a key (torch gives NaN otherwise)
    else:
        mask = randn(gen, 1, 4, lq, 300, dtype=torch.bfloat16)
    got = ck.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                         attn_mask=mask if boolean else mask.double())
    tol = 4 * UNIT[torch.bfloat16] * v.double().abs().amax() + 2 * UNIT[torch.bfloat16] * ref.abs()
    assert ((got.double() - ref).abs() <= tol).all()
    compiled = torch.compile(lambda a, b, c, m: ck.scaled_dot_product_attention(
        a, b, c, attn_mask=m), fullgraph=True)
    assert torch.equal(compiled(q, k, v, mask), got)


def test_sdpa_dropout_deterministic(gen):
    """dropout_p with a fixed seed: the same bits twice, other bits with another seed; the
    mean over the keys stays near the undropped result (dropout is unbiased)."""
    q, k, v = (randn(gen, 1, 8, 128, 64, dtype=torch.float16) for _ in range(3))
    a = ck.scaled_dot_product_attention(q, k, v, dropout_p=0.2, dropout_seed=5)
    b = ck.scaled_dot_product_attention(q, k, v, dropout_p=0.2, dropout_seed=5)
    c = ck.scaled_dot_product_attention(q, k, v, dropout_p=0.2, dropout_seed=6)
    assert torch.equal(a, b) and not torch.equal(a, c)
