"""The call templates of eager torch calls (ck_kernels/_fast.py): a repeated call with the same
description takes the template and must compute exactly what the general path computes, with
the new call's data (pointers rewritten), on CPU tensors (the emulator) and on CUDA when there
is a GPU; changed options, views, misaligned operands, gradients and threads take the right
path. Every element against torch's own function. Skipped without torch."""
import threading

import pytest

torch = pytest.importorskip("torch")

import ck_kernels as ck  # noqa: E402
from ck_kernels import _fast  # noqa: E402

if not hasattr(torch.ops, "ck") or not hasattr(torch.ops.ck, "softmax"):
    pytest.skip("ck_kernels was imported without torch", allow_module_level=True)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(autouse=True, params=["c", "python"])
def impl(request, monkeypatch):
    """Every test twice: with the C extension's key/call (where it was built) and with the
    Python versions."""
    if request.param == "c":
        if _fast.ext is None:
            pytest.skip("the C extension ck_kernels._ckfast was not built")
        monkeypatch.setattr(_fast, "key", _fast.ext.key)
        monkeypatch.setattr(_fast, "call", _fast.ext.call)
    else:
        monkeypatch.setattr(_fast, "key", _fast.py_key)
        monkeypatch.setattr(_fast, "call", _fast.py_call)
    _fast.clear()
    yield request.param
    _fast.clear()


def rand(gen, *shape, dev, dtype=torch.float32):
    return torch.randn(*shape, generator=gen).to(dev).to(dtype)


@pytest.fixture
def gen(rng):
    return torch.Generator().manual_seed(int(rng.integers(1 << 31)))


def close(got, ref, tol):
    assert got.shape == ref.shape and got.dtype == ref.dtype
    err = (got.double() - ref.double()).abs().max().item()
    assert err <= tol, err


@pytest.mark.parametrize("dev", DEVICES)
def test_softmax_repeated(gen, dev):
    _fast.clear()
    with torch.no_grad():
        for i in range(4):  # the first call makes the template, the others take it
            x = rand(gen, 5, 77, dev=dev)
            close(ck.softmax(x), torch.softmax(x, -1), 1e-6)
            close(ck.log_softmax(x, scale=0.5), torch.log_softmax(0.5 * x, -1), 1e-5)
        xt = rand(gen, 5, 90, dev=dev)[:, :77]  # a row-strided view: general path
        close(ck.softmax(xt), torch.softmax(xt, -1), 1e-6)
        close(ck.softmax(xt), torch.softmax(xt, -1), 1e-6)
        h = rand(gen, 3, 64, dev=dev, dtype=torch.float16)
        for _ in range(2):
            close(ck.softmax(h), torch.softmax(h.float(), -1).half(), 2e-3)


@pytest.mark.parametrize("dev", DEVICES)
def test_norm_repeated(gen, dev):
    _fast.clear()
    with torch.no_grad():
        for i in range(3):
            x, w, b = rand(gen, 6, 96, dev=dev), rand(gen, 96, dev=dev), rand(gen, 96, dev=dev)
            close(ck.rms_norm(x, (96,), w, 1e-6),
                  torch.nn.functional.rms_norm(x, (96,), w, 1e-6), 1e-5)
            close(ck.layer_norm(x, (96,), w, b),
                  torch.nn.functional.layer_norm(x, (96,), w, b), 1e-5)
            close(ck.layer_norm(x, (96,), w, None),
                  torch.nn.functional.layer_norm(x, (96,), w, None), 1e-5)


@pytest.mark.parametrize("dev", DEVICES)
def test_elementwise_repeated(gen, dev):
    _fast.clear()
    with torch.no_grad():
        for i in range(3):
            x, y = rand(gen, 4, 33, dev=dev), rand(gen, 33, dev=dev)
            close(ck.elementwise("silu(x0)", x), torch.nn.functional.silu(x), 1e-6)
            close(ck.elementwise("x0 * x1 + 1", x, y), x * y + 1, 1e-6)
            # the output like x1 (broadcast x0): not templated, general path
            close(ck.elementwise("x0 + x1", y, x), y + x, 1e-6)


@pytest.mark.parametrize("dev", DEVICES)
def test_gemm_repeated(gen, dev):
    _fast.clear()
    dt = torch.float16
    with torch.no_grad():
        for i in range(3):
            a, b = rand(gen, 24, 40, dev=dev, dtype=dt), rand(gen, 40, 16, dev=dev, dtype=dt)
            bias = rand(gen, 16, dev=dev, dtype=dt)
            ref = (a.double() @ b.double())
            close(ck.matmul(a, b).double(), ref, 0.05)
            close(ck.gemm(a, b, bias=bias, activation="relu").double(),
                  torch.relu(ref + bias.double()), 0.05)
        # an operand whose pointer moved off 16 bytes: the template refuses, general path
        big = rand(gen, 24, 48, dev=dev, dtype=dt)
        a2 = big[:, 8:48]
        a3 = big[:, 1:41]
        assert a2.stride() == a3.stride() and a2.shape == a3.shape
        close(ck.matmul(a2, b).double(), a2.double() @ b.double(), 0.05)
        close(ck.matmul(a3, b).double(), a3.double() @ b.double(), 0.05)


@pytest.mark.parametrize("dev", DEVICES)
def test_gradients_after_templates(gen, dev):
    _fast.clear()
    x = rand(gen, 4, 50, dev=dev)
    with torch.no_grad():
        ck.softmax(x), ck.softmax(x)
    xg = x.clone().requires_grad_()
    y = ck.softmax(xg)
    (y * y).sum().backward()
    xr = x.clone().requires_grad_()
    yr = torch.softmax(xr, -1)
    (yr * yr).sum().backward()
    close(xg.grad, xr.grad, 1e-5)


def test_threads(gen):
    """Each thread has its own templates (buffers): concurrent calls stay correct."""
    xs = [rand(gen, 8, 40, dev="cpu") for _ in range(4)]
    refs = [torch.softmax(x, -1) for x in xs]
    errors = []

    def work(i):
        try:
            with torch.no_grad():
                for _ in range(3):
                    close(ck.softmax(xs[i]), refs[i], 1e-6)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("dev", DEVICES)
def test_memory_ops_repeated(gen, dev):
    _fast.clear()
    with torch.no_grad():
        for i in range(3):
            x = rand(gen, 6, 40, dev=dev)
            close(ck.sum(x, -1), x.sum(-1), 1e-4)
            close(ck.reduce(x, "amax", 0, keepdim=True), x.amax(0, keepdim=True), 0)
            close(ck.permute(x, (1, 0)), x.permute(1, 0).contiguous(), 0)
            close(ck.cast(x, torch.float16), x.half(), 0)
            close(ck.cast(x, "bf16", scale=2.0), (2 * x).bfloat16(), 0)
            w, idx = ck.topk_softmax(x, 4)
            rw, ri = torch.topk(torch.softmax(x, -1), 4)
            close(w, rw, 1e-6)
            assert torch.equal(idx.long(), ri)
        y = rand(gen, 3, 5, 7, dev=dev)
        for _ in range(2):
            close(ck.permute(y, (2, 0, 1)), y.permute(2, 0, 1).contiguous(), 0)
            close(ck.sum(y, None), y.sum().reshape(()), 1e-4)


@pytest.mark.parametrize("dev", DEVICES)
def test_sdpa_repeated(gen, dev):
    _fast.clear()
    F = torch.nn.functional
    with torch.no_grad():
        for i in range(3):
            q = rand(gen, 1, 2, 17, 64, dev=dev, dtype=torch.float16)
            k = rand(gen, 1, 2, 40, 64, dev=dev, dtype=torch.float16)
            v = rand(gen, 1, 2, 40, 64, dev=dev, dtype=torch.float16)
            for causal in (False, True):
                ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                     is_causal=causal)
                close(ck.scaled_dot_product_attention(q, k, v, is_causal=causal).float(), ref,
                      4e-3)
            ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), scale=0.3)
            close(ck.scaled_dot_product_attention(q, k, v, scale=0.3).float(), ref, 4e-3)


@pytest.mark.parametrize("dev", DEVICES)
def test_conv_repeated(gen, dev):
    _fast.clear()
    F = torch.nn.functional
    with torch.no_grad():
        for i in range(3):
            x = rand(gen, 2, 8, 9, 7, dev=dev, dtype=torch.float16)
            w = rand(gen, 16, 8, 3, 3, dev=dev, dtype=torch.float16)
            b = rand(gen, 16, dev=dev, dtype=torch.float16)
            ref = F.conv2d(x.double(), w.double(), b.double(), padding=1)
            close(ck.conv2d(x, w, b, padding=1).double(), ref, 0.05)
            ref = F.conv2d(x.double(), w.double(), stride=2)
            close(ck.conv2d(x, w, stride=2).double(), ref, 0.05)
        # a non-packed input (a channel slice): not recorded, the general path copies it
        big = rand(gen, 2, 12, 9, 7, dev=dev, dtype=torch.float16)
        xs = big[:, 2:10]
        for _ in range(2):
            ref = F.conv2d(xs.double(), w.double(), padding=1)
            close(ck.conv2d(xs, w, padding=1).double(), ref, 0.05)


@pytest.mark.parametrize("dev", DEVICES)
def test_pool_repeated(gen, dev):
    F = torch.nn.functional
    with torch.no_grad():
        for i in range(3):  # channels-last input: templated, results channels-last views
            x = rand(gen, 2, 16, 9, 11, dev=dev).to(memory_format=torch.channels_last)
            y, ind = ck.max_pool2d(x, 3, 2, 1, return_indices=True)
            ry, ri = F.max_pool2d(x, 3, 2, 1, return_indices=True)
            close(y, ry, 0)
            assert torch.equal(ind, ri)
            close(ck.max_pool2d(x, (2, 3)), F.max_pool2d(x, (2, 3)), 0)
            close(ck.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
                  F.avg_pool2d(x, 3, 1, 1, count_include_pad=False), 1e-6)
        xn = rand(gen, 2, 16, 9, 11, dev=dev)  # NCHW: the general path (permutes)
        for _ in range(2):
            close(ck.max_pool2d(xn, 3, 2), F.max_pool2d(xn, 3, 2), 0)


# (module, name of its general-path function, call of the op, reference)
def _cases(gen, dev):
    F = torch.nn.functional
    x, w, b = rand(gen, 6, 64, dev=dev), rand(gen, 64, dev=dev), rand(gen, 64, dev=dev)
    h = [rand(gen, 32, 32, dev=dev, dtype=torch.float16) for _ in range(2)]
    q = rand(gen, 1, 2, 16, 64, dev=dev, dtype=torch.float16)
    xc = rand(gen, 1, 8, 6, 6, dev=dev, dtype=torch.float16)
    wc = rand(gen, 8, 8, 3, 3, dev=dev, dtype=torch.float16)
    xl = rand(gen, 1, 8, 6, 6, dev=dev).to(memory_format=torch.channels_last)
    return [
        ("softmax", "_softmax_core", lambda: ck.softmax(x), torch.softmax(x, -1), 1e-6),
        ("softmax", "_topk_core", lambda: ck.topk_softmax(x, 3)[0],
         torch.topk(torch.softmax(x, -1), 3)[0], 1e-6),
        ("norm", "_forward_plain", lambda: ck.layer_norm(x, (64,), w, b),
         F.layer_norm(x, (64,), w, b), 1e-5),
        ("elementwise", "_ew_core", lambda: ck.elementwise("x0 * x1", x, w), x * w, 1e-6),
        ("elementwise", "_cast_core", lambda: ck.cast(x, torch.float16), x.half(), 0),
        ("reduce", "_reduce_core", lambda: ck.sum(x, [1]), x.sum(1), 1e-4),
        ("permute", "_permute_core", lambda: ck.permute(x, (1, 0)), x.t().contiguous(), 0),
        ("gemm", "_gemm_bias_act", lambda: ck.matmul(h[0], h[1]).double(),
         h[0].double() @ h[1].double(), 0.05),
        ("attention", "_sdpa_core", lambda: ck.scaled_dot_product_attention(q, q, q).float(),
         F.scaled_dot_product_attention(q.float(), q.float(), q.float()), 4e-3),
        ("conv", "_conv_core", lambda: ck.conv2d(xc, wc, padding=1).double(),
         F.conv2d(xc.double(), wc.double(), padding=1), 0.05),
        ("pool", "_pool_core", lambda: ck.max_pool2d(xl, 2), F.max_pool2d(xl, 2), 0),
    ]


@pytest.mark.parametrize("dev", DEVICES)
def test_templates_are_taken(gen, dev, monkeypatch):
    """After the first call, a repeated call never enters the general path (it is replaced by
    a function that fails) and still computes every element right."""
    import importlib

    with torch.no_grad():
        for mod, name, fn, ref, tol in _cases(gen, dev):
            close(fn(), ref, tol)  # records
            m = importlib.import_module("ck_kernels." + mod)

            def general(*a, **k):
                raise AssertionError(f"{mod}.{name}: the general path was taken")

            with monkeypatch.context() as mp:
                mp.setattr(m, name, general)
                close(fn(), ref, tol)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_templates_follow_the_stream(gen):
    """A template is keyed by the current stream: a call on another stream runs there."""
    x = rand(gen, 64, 1000, dev="cuda")
    ref = torch.softmax(x, -1)
    with torch.no_grad():
        close(ck.softmax(x), ref, 1e-6)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                y = ck.softmax(x)
        s.synchronize()
        close(y, ref, 1e-6)
        close(ck.softmax(x), ref, 1e-6)
