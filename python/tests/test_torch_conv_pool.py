"""conv1d/2d/3d and the pools with torch tensors against torch.nn.functional, on the emulator
(CPU tensors) and, when a CUDA GPU is there, on it: every element within a bound; NCHW and
channels_last inputs (the result keeps the input's memory format, as torch); the custom ops'
registrations (torch.library.opcheck: schema, fake implementation, autograd); max_pool2d's
gradient through ck's backward; torch.compile(fullgraph=True). Skipped without torch."""
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import ck_kernels as ck  # noqa: E402

if not hasattr(torch.ops, "ck") or not hasattr(torch.ops.ck, "conv"):
    pytest.skip("ck_kernels was imported without torch", allow_module_level=True)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
UNIT = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


@pytest.fixture
def gen(rng):
    return torch.Generator().manual_seed(int(rng.integers(1 << 31)))


def rand(gen, *shape, dtype=torch.float32, device="cpu"):
    return (torch.rand(*shape, generator=gen) * 2 - 1).to(dtype).to(device)


def conv_ref(fn, x, w, b, **kw):
    """float64 result and the sum of the terms' magnitudes (the bound's scale)."""
    xd, wd = x.double().cpu(), w.double().cpu()
    ref = fn(xd, wd, None if b is None else b.double().cpu(), **kw)
    mag = fn(xd.abs(), wd.abs(), None if b is None else b.double().abs().cpu(), **kw)
    return ref, mag


def assert_conv_close(got, ref, mag, dtype):
    tf32 = 2.0 ** -10 if dtype == torch.float32 else 0.0
    bound = 2 * UNIT[dtype] * ref.abs() + mag * (2.0 ** -18 + tf32) + 1e-6
    err = (got.double().cpu() - ref).abs()
    assert got.shape == ref.shape and got.dtype == dtype
    assert bool((err <= bound).all()), f"max excess {(err - bound).max().item()}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("channels_last", [False, True])
def test_conv2d_matches_torch(gen, device, dtype, channels_last):
    x = rand(gen, 2, 8, 9, 7, dtype=dtype, device=device)
    w = rand(gen, 16, 4, 3, 3, dtype=dtype, device=device)
    b = rand(gen, 16, dtype=dtype, device=device)
    if channels_last:
        x, w = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
    kw = dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    got = ck.conv2d(x, w, b, **kw)
    assert got.is_contiguous(memory_format=torch.channels_last) == channels_last
    ref, mag = conv_ref(F.conv2d, x, w, b, **kw)
    assert_conv_close(got, ref, mag, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_conv1d_conv3d_match_torch(gen, device):
    x1, w1 = rand(gen, 2, 6, 13, device=device), rand(gen, 4, 6, 5, device=device)
    assert_conv_close(ck.conv1d(x1, w1, padding="same", dilation=2),
                      *conv_ref(F.conv1d, x1, w1, None, padding="same", dilation=2),
                      torch.float32)
    x3 = rand(gen, 1, 4, 3, 5, 5, dtype=torch.float16, device=device)
    w3 = rand(gen, 4, 1, 3, 3, 3, dtype=torch.float16, device=device)
    assert_conv_close(ck.conv3d(x3, w3, padding=1, groups=4),
                      *conv_ref(F.conv3d, x3, w3, None, padding=1, groups=4), torch.float16)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_pools_match_torch(gen, device, channels_last):
    x = rand(gen, 2, 16, 13, 11, dtype=torch.bfloat16, device=device)
    x[0, 0, 0, 0] = float("nan")
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    for kw in [dict(kernel_size=3, stride=2, padding=1),
               dict(kernel_size=(2, 3), stride=(3, 1), padding=(1, 1), ceil_mode=True),
               dict(kernel_size=3, stride=1, padding=1, dilation=2)]:
        y, i = ck.max_pool2d(x, return_indices=True, **kw)
        ry, ri = F.max_pool2d(x.float(), return_indices=True, **kw)
        torch.testing.assert_close(y.float(), ry, rtol=0, atol=0, equal_nan=True)
        assert torch.equal(i, ri)
    for kw in [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
               dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
               dict(kernel_size=2, divisor_override=3)]:
        xf = x.nan_to_num()
        torch.testing.assert_close(ck.avg_pool2d(xf, **kw).float(),
                                   F.avg_pool2d(xf.double(), **kw).float(), rtol=2 ** -8,
                                   atol=1e-6)
    x3 = rand(gen, 1, 8, 5, 6, 7, device=device)
    torch.testing.assert_close(ck.max_pool3d(x3, 2, ceil_mode=True),
                               F.max_pool3d(x3, 2, ceil_mode=True), rtol=0, atol=0)
    torch.testing.assert_close(ck.avg_pool3d(x3, 3, 2, 1), F.avg_pool3d(x3, 3, 2, 1),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool2d_gradient_matches_torch(gen, device):
    x = rand(gen, 2, 8, 9, 11, device=device).requires_grad_(True)
    dy = rand(gen, 2, 8, 5, 6, device=device)
    (g,) = torch.autograd.grad((ck.max_pool2d(x, 3, 2, 1) * dy).sum(), x)
    (r,) = torch.autograd.grad((F.max_pool2d(x, 3, 2, 1) * dy).sum(), x)
    torch.testing.assert_close(g, r, rtol=1e-6, atol=1e-6)


def test_opcheck(gen):
    x = rand(gen, 2, 4, 7, 6)
    w = rand(gen, 6, 2, 3, 3)
    torch.library.opcheck(torch.ops.ck.conv.default,
                          (x, w, None, [1, 2], [1, 0], [1, 1], [1, 1], 2))
    xg = x.clone().requires_grad_(True)
    torch.library.opcheck(torch.ops.ck.max_pool.default, (xg, [3, 3], [2, 2], [1, 1], [1, 1],
                                                          True))
    torch.library.opcheck(torch.ops.ck.avg_pool.default, (x, [3, 3], [2, 2], [1, 1], False,
                                                          False, None))


def test_torch_compile_fullgraph(gen):
    x, w = rand(gen, 1, 4, 9, 9), rand(gen, 8, 4, 3, 3)

    def model(x):
        return ck.avg_pool2d(ck.max_pool2d(ck.conv2d(x, w, padding=1), 2), 2, ceil_mode=True)

    def ref(x):
        return F.avg_pool2d(F.max_pool2d(F.conv2d(x, w, padding=1), 2), 2, ceil_mode=True)

    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x), ref(x), rtol=5e-3, atol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_conv2d_gradients_match_torch(gen, device, dtype):
    x = rand(gen, 2, 4, 9, 7, dtype=dtype, device=device).requires_grad_(True)
    w = rand(gen, 6, 2, 3, 3, dtype=dtype, device=device).requires_grad_(True)
    b = rand(gen, 6, dtype=dtype, device=device).requires_grad_(True)
    kw = dict(stride=2, padding=1, dilation=(1, 2), groups=2)
    y = ck.conv2d(x, w, b, **kw)
    dy = rand(gen, *y.shape, dtype=dtype, device=device)
    got = torch.autograd.grad((y.float() * dy.float()).sum(), (x, w, b))
    xd, wd, bd = (t.detach().double().requires_grad_(True) for t in (x, w, b))
    ref = torch.autograd.grad((F.conv2d(xd, wd, bd, **kw) * dy.double()).sum(), (xd, wd, bd))
    # bound: the terms' magnitudes (as the forward), TF32 for f32, the output rounding
    unit = UNIT[dtype]
    tf32 = 2.0 ** -10 if dtype == torch.float32 else 0.0
    xa, wa, da = xd.detach().abs(), wd.detach().abs(), dy.double().abs()
    mag_x = torch.nn.grad.conv2d_input(xa.shape, wa, da, **kw)
    mag_w = torch.nn.grad.conv2d_weight(xa, wa.shape, da, **kw)
    for g, r, m in zip(got[:2], ref[:2], (mag_x, mag_w)):
        bound = 2 * unit * r.abs() + m * (2.0 ** -18 + tf32) + 1e-6
        assert bool(((g.double().cpu() - r.cpu()).abs() <= bound.cpu()).all())
    torch.testing.assert_close(got[2].double(), ref[2], rtol=2 * unit, atol=1e-3)


def test_conv_opcheck_with_gradients(gen):
    x = rand(gen, 2, 4, 7, 6).requires_grad_(True)
    w = rand(gen, 6, 2, 3, 3).requires_grad_(True)
    torch.library.opcheck(torch.ops.ck.conv.default,
                          (x, w, None, [2, 1], [1, 0], [1, 1], [1, 1], 2))
