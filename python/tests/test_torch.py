"""torch integration on the emulator (CPU tensors): custom ops against torch's own functions,
opcheck of the registrations (schema, fake implementation, autograd), gradients, torch.compile
with fullgraph=True, and the error paths of torch inputs. Skipped without torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import ck_kernels as ck  # noqa: E402
from ck_kernels import CkError  # noqa: E402

if not hasattr(torch.ops, "ck") or not hasattr(torch.ops.ck, "softmax"):
    pytest.skip("ck_kernels was imported without torch", allow_module_level=True)


@pytest.fixture
def gen(rng):
    return torch.Generator().manual_seed(int(rng.integers(1 << 31)))


def randn(gen, *shape, dtype=torch.float32, grad=False):
    wide = torch.float64 if dtype == torch.float64 else torch.float32
    return torch.randn(*shape, generator=gen, dtype=wide).to(dtype).requires_grad_(grad)


def test_functions_match_torch(gen):
    x = randn(gen, 3, 5, 40)
    w, b = randn(gen, 40), randn(gen, 40)
    tol = dict(rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ck.softmax(x), F.softmax(x, -1), **tol)
    torch.testing.assert_close(ck.log_softmax(x, scale=0.7), F.log_softmax(0.7 * x, -1), **tol)
    torch.testing.assert_close(ck.layer_norm(x, (40,), w, b), F.layer_norm(x, (40,), w, b),
                               **tol)
    torch.testing.assert_close(ck.rms_norm(x, (40,), w, 1e-6), F.rms_norm(x, (40,), w, 1e-6),
                               **tol)
    torch.testing.assert_close(ck.sum(x, (0, 2)), x.sum((0, 2)), **tol)
    torch.testing.assert_close(ck.amax(x, -1, True), x.amax(-1, True), rtol=0, atol=0)
    assert torch.equal(ck.argmax(x, 1), x.argmax(1).int())
    assert torch.equal(ck.permute(x, (2, 0, 1)), x.permute(2, 0, 1))
    torch.testing.assert_close(ck.cast(x, torch.bfloat16), x.to(torch.bfloat16), rtol=0, atol=0)
    torch.testing.assert_close(ck.elementwise("silu(x0) * x1", x, w), F.silu(x) * w, **tol)
    wts, idx = ck.topk_softmax(x[0], 4)
    ref = torch.topk(torch.softmax(x[0], -1), 4)
    assert torch.equal(idx, ref.indices.int())
    torch.testing.assert_close(wts, ref.values, **tol)
    q, s = ck.rms_norm_quant(x, (40,), w, dtype=torch.int8)
    assert q.dtype == torch.int8 and s.shape == (3, 5)


def test_bf16_and_fp8(gen):
    x = randn(gen, 4, 64).to(torch.bfloat16)
    torch.testing.assert_close(ck.softmax(x), F.softmax(x.float(), -1).bfloat16(),
                               rtol=1e-2, atol=1e-3)
    if hasattr(torch, "float8_e4m3fn"):
        y = ck.cast(x, torch.float8_e4m3fn)
        assert torch.equal(y.view(torch.uint8), x.float().to(torch.float8_e4m3fn)
                           .view(torch.uint8))


@pytest.mark.parametrize("name", ["softmax", "norm_fwd", "reduce", "permute", "elementwise",
                                  "cast", "topk_softmax", "norm_quant", "matmul", "gemm"])
def test_opcheck(gen, name):
    """torch.library.opcheck: schema, fake (meta) implementation against the real one,
    autograd registration."""
    x = randn(gen, 4, 32, grad=name in ("softmax", "norm_fwd", "matmul"))
    w = randn(gen, 32, grad=name == "norm_fwd")
    m = randn(gen, 32, 8, grad=name == "matmul")
    args = {
        "softmax": (x, -1, False, 1.0, None, False, None),
        "norm_fwd": (x, 1, w, None, None, 1e-5, True),
        "reduce": (x, "sum", [1], False, None, 1.0, False, None),
        "permute": (x, [1, 0]),
        "elementwise": ("x0 * x1 + 1", [x, w], None),
        "cast": (x, torch.float16, 1.0, "rne", "default", 0),
        "topk_softmax": (x, 3, True, None),
        "norm_quant": (x, 1, w, None, None, 1e-5, torch.int8, True),
        "matmul": (x, m),
        "gemm": (x, m, None, 1.0, 0.0, w[:8], "", "silu", None, None, "f32", 1.0, 1.0, 1.0),
    }[name]
    torch.library.opcheck(getattr(torch.ops.ck, name).default, args)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_gradient_matches_torch(gen, log):
    x = randn(gen, 6, 33, dtype=torch.float64).float().requires_grad_()
    g = randn(gen, 6, 33)
    fn, ref = (ck.log_softmax, F.log_softmax) if log else (ck.softmax, F.softmax)
    (dx,) = torch.autograd.grad(fn(x, scale=0.5), x, g)
    (rx,) = torch.autograd.grad(ref(0.5 * x, -1), x, g)
    torch.testing.assert_close(dx, rx, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rms", [False, True])
def test_norm_gradients_match_torch(gen, rms):
    x, r = randn(gen, 5, 48, grad=True), randn(gen, 5, 48, grad=True)
    w, b = randn(gen, 48, grad=True), randn(gen, 48, grad=True)
    g = randn(gen, 5, 48)
    if rms:
        y, a = ck.rms_norm(x, (48,), w, 1e-5, residual=r)
        ref = F.rms_norm(x + r, (48,), w, 1e-5)
        params = (x, r, w)
    else:
        y, a = ck.layer_norm(x, (48,), w, b, residual=r)
        ref = F.layer_norm(x + r, (48,), w, b)
        params = (x, r, w, b)
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)
    got = torch.autograd.grad((y * g).sum() + a.sum(), params)
    want = torch.autograd.grad((ref * g).sum() + (x + r).sum(), params)
    for p, q in zip(got, want):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-4)


def test_torch_compile_fullgraph_small_model(gen):
    """RMSNorm -> matmul -> SiLU -> matmul -> softmax, every step by ck (matmul in TF32); no
    graph break, the values of pure torch, and gradients through the compiled graph."""
    w0 = randn(gen, 64, grad=True)
    w1 = (randn(gen, 64, 96) / 8).requires_grad_()
    w2 = (randn(gen, 32, 96) / 10).requires_grad_()  # used transposed, as nn.Linear's weight

    def model(x):
        h = ck.rms_norm(x, (64,), w0)
        h = ck.elementwise("silu(x0)", ck.matmul(h, w1))
        return ck.softmax(ck.matmul(h, w2.t()))

    def ref(x):
        return F.softmax(F.silu(F.rms_norm(x, (64,), w0) @ w1) @ w2.t(), -1)

    x = randn(gen, 8, 64)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x), ref(x), rtol=5e-3, atol=1e-4)
    got = torch.autograd.grad(compiled(x).square().sum(), (w0, w1, w2))
    want = torch.autograd.grad(ref(x).square().sum(), (w0, w1, w2))
    for g, r in zip(got, want):
        torch.testing.assert_close(g, r, rtol=2e-2, atol=1e-4)


TF32 = 2.0 ** -10  # TF32 (f32 inputs, compute default): sm90 wgmma truncates to 10 bits
UNIT = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def assert_gemm_close(got, a, b, ref, in_unit=0.0, extra=0.0):
    """Every element of got within the bound of the float64 reference ref of a @ b (+ terms
    whose magnitudes sum to `extra`)."""
    s = a.double().abs() @ b.double().abs() + extra
    ref = ref.double()
    bound = 2 * in_unit * s + 2.0 ** -18 * (s + ref.abs()) + 2 * UNIT[got.dtype] * ref.abs()
    err = (got.double() - ref).abs()
    assert got.shape == ref.shape
    assert bool((err <= bound).all()), f"max excess {(err - bound).max().item()}"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_matmul_and_gemm_match_torch(gen, dtype):
    a = randn(gen, 17, 9, dtype=dtype)
    w = randn(gen, 33, 9, dtype=dtype)  # nn.Linear's weight: b = w.t(), read in place
    tin = TF32 if dtype == torch.float32 else 0.0
    a64, b64 = a.double(), w.t().double()
    y = ck.matmul(a, w.t())
    assert y.dtype == dtype
    assert_gemm_close(y, a, w.t(), a64 @ b64, tin)
    bias = randn(gen, 33, dtype=dtype)
    y = ck.gemm(a, w.t(), bias=bias, activation="silu", out_dtype=torch.float32)
    assert y.dtype == torch.float32
    assert_gemm_close(y, a, w.t(), F.silu(a64 @ b64 + bias.double()), 1.2 * tin,
                      bias.double().abs())
    c = randn(gen, 17, 33, dtype=torch.float32)
    y = ck.gemm(a.t().contiguous().t(), w.t(), c, alpha=0.5, beta=2.0, activation="relu",
                out_dtype=torch.float32)
    assert_gemm_close(y, 0.5 * a, w.t(), torch.relu(0.5 * a64 @ b64 + 2 * c.double()), tin,
                      2 * c.double().abs())
    v = randn(gen, 9, dtype=dtype)
    assert ck.matmul(a, v).shape == (17,) and ck.matmul(v, w.t()).shape == (33,)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_matmul_gradients_match_torch(gen, dtype):
    """dA = dC B^T and dB = A^T dC by ck GEMMs on transposed views, against float64 torch."""
    a = randn(gen, 17, 9, dtype=dtype, grad=True)
    w = randn(gen, 33, 9, dtype=dtype, grad=True)
    g = randn(gen, 17, 33, dtype=dtype)
    y = ck.matmul(a, w.t())
    da, dw = torch.autograd.grad(y, (a, w), g)
    tin = TF32 if dtype == torch.float32 else 0.0
    g64, a64, w64 = g.double(), a.double(), w.double()
    assert da.dtype == dtype and dw.dtype == dtype
    assert_gemm_close(da, g, w, g64 @ w64, tin)  # dA = dC (w^t)^T
    assert_gemm_close(dw, g.t(), a, g64.t() @ a64, tin)  # dW = (A^T dC)^T = dC^T A
    # a gradient handed over expanded (stride 0) is made a matrix first
    (da,) = torch.autograd.grad(ck.matmul(a, w.t()).sum(), a)
    assert_gemm_close(da, torch.ones(17, 33, dtype=dtype), w,
                      torch.ones(17, 33, dtype=torch.float64) @ w64, tin)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_batched_matmul_and_gradients_match_torch(gen, dtype):
    """[B, M, K] @ [K, N] (nn.Linear's weight broadcast over the batch) as one strided batched
    GEMM; dA per batch, dW the sum over the batches of A_b^T dC_b."""
    a = randn(gen, 3, 17, 9, dtype=dtype, grad=True)
    w = randn(gen, 33, 9, dtype=dtype, grad=True)
    g = randn(gen, 3, 17, 33, dtype=dtype)
    tin = TF32 if dtype == torch.float32 else 0.0
    y = ck.matmul(a, w.t())
    assert y.shape == (3, 17, 33) and y.dtype == dtype
    assert_gemm_close(y, a, w.t(), a.double() @ w.t().double(), tin)
    da, dw = torch.autograd.grad(y, (a, w), g)
    assert da.shape == a.shape and dw.shape == w.shape
    assert_gemm_close(da, g, w, g.double() @ w.double(), tin)
    # dW^T = sum_b A_b^T dC_b: each batch's product rounded to dtype, then summed by torch
    gf, af = g.reshape(-1, 33), a.reshape(-1, 9)
    assert_gemm_close(dw, gf.t(), af, gf.t().double() @ af.double(), max(tin, UNIT[dtype]))
    c = randn(gen, 3, 17, 33, dtype=torch.float32)
    bias = randn(gen, 3, 1, 33, dtype=torch.float32)  # one bias per batch
    y = ck.gemm(a.detach(), w.t(), c, bias=bias, out_dtype=torch.float32)
    assert_gemm_close(y, a, w.t(), a.double() @ w.t().double() + c.double() + bias.double(),
                      tin, c.double().abs() + bias.double().abs())


def test_gemm_without_backward_says_so(gen):
    a, b = randn(gen, 4, 8, grad=True), randn(gen, 8, 3)
    with pytest.raises(CkError, match="no backward"):
        ck.gemm(a, b, activation="relu").sum().backward()


def test_matmul_errors_are_ck_errors(gen):
    a, b = randn(gen, 4, 8), randn(gen, 8, 3)
    with pytest.raises(CkError, match="do not chain"):
        ck.matmul(a, b.t())
    with pytest.raises(CkError, match="more than one batch dimension"):
        ck.matmul(a.expand(2, 2, 4, 8), b)
    with pytest.raises(CkError, match="no ck equivalent|does not take"):
        ck.matmul(a.to(torch.int64), b.to(torch.int64))
    with pytest.raises(CkError, match="not supported"):
        ck.matmul(a.double(), b.double())
    with pytest.raises(CkError, match="device meta"):
        ck.matmul(a.to("meta"), b.to("meta"))
    with pytest.raises(CkError, match="strides"):
        ck.matmul(randn(gen, 4, 16)[:, ::2], b)


def test_torch_errors_are_ck_errors(gen):
    x = randn(gen, 2, 8)
    with pytest.raises(CkError):
        ck.softmax(x.to(torch.float64))
    with pytest.raises(CkError):
        ck.softmax(x.t())  # last dimension not contiguous
    with pytest.raises(CkError):
        ck.softmax(x.to(torch.complex64))
    with pytest.raises(CkError, match="device meta"):
        ck.permute(x, (1, 0), out=torch.empty(8, 2, device="meta"))


def test_dlpack_and_mixed_frameworks(gen):
    x = randn(gen, 3, 16)
    a = np.asarray(x)  # shares memory
    np.testing.assert_allclose(ck.softmax(a), ck.softmax(x).numpy(), rtol=0, atol=0)

    class Wrapped:  # any __dlpack__ object
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    np.testing.assert_allclose(ck.softmax(Wrapped(x)), ck.softmax(a), rtol=0, atol=0)


def test_elementwise_permute_cast_reduce_gradients(gen):
    a, b = randn(gen, 4, 1, 12, grad=True), randn(gen, 3, 12, grad=True)
    g = randn(gen, 4, 3, 12)
    expr = "gelu(x0 * x1) + max(sigmoid(x0), x1) / (2 + exp(neg(x1))) - scale(silu(x0), 3)"
    y = ck.elementwise(expr, a, b)
    ref = (F.gelu(a * b, approximate="tanh") + torch.fmax(torch.sigmoid(a), b) /
           (2 + torch.exp(-b)) - 3 * F.silu(a))
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)
    for p, q in zip(torch.autograd.grad(y, (a, b), g), torch.autograd.grad(ref, (a, b), g)):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-5)
    x = randn(gen, 2, 3, 5, grad=True)
    h = randn(gen, 5, 2, 3)
    torch.testing.assert_close(torch.autograd.grad(ck.permute(x, (2, 0, 1)), x, h)[0],
                               h.permute(1, 2, 0))
    torch.testing.assert_close(torch.autograd.grad(ck.cast(x, torch.float16, scale=2.0), x,
                                                   h.permute(1, 2, 0).half())[0],
                               2 * h.permute(1, 2, 0).half().float())
    s = randn(gen, 2, 5)
    torch.testing.assert_close(torch.autograd.grad(ck.mean(x, 1), x, s)[0],
                               (s / 3).unsqueeze(1).expand(2, 3, 5))
    with pytest.raises(CkError, match="backward"):
        torch.autograd.grad(ck.amax(x, 1).sum(), x)
