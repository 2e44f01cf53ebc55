"""The C extension ck_kernels._ckfast (the call templates' key/call in C) without torch: a
stand-in tensor class over NumPy arrays gives it what it reads of a torch tensor (dtype,
shape, stride(), device, is_cuda, data_ptr(), requires_grad), and templates of real ck calls
(softmax, pooling with pointers passed as arguments) run on the emulator. Every element against
NumPy. Runs where the extension was built (the pip-installed package, or CK_KERNELS_EXT)."""
import ctypes
import importlib.machinery
import importlib.util
import os
import struct
import threading

import numpy as np
import pytest

from ck_kernels import _fast, _lib, _runtime, _tensor
from ck_kernels._tensor import HOST, TENSOR_SIZE, Pack, describe


def _ext():
    path = os.environ.get("CK_KERNELS_EXT")
    if path:
        loader = importlib.machinery.ExtensionFileLoader("ck_kernels._ckfast", path)
        spec = importlib.util.spec_from_file_location("ck_kernels._ckfast", path, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        return mod
    try:
        from ck_kernels import _ckfast
        return _ckfast
    except ImportError:
        return None


ext = _ext()
if ext is None:
    pytest.skip("the C extension ck_kernels._ckfast was not built", allow_module_level=True)


class Fake:
    """What _ckfast reads of a torch tensor, over a NumPy array."""

    requires_grad = False
    is_cuda = False
    device = "cpu"

    def __init__(self, a):
        self.a = a
        self.dtype = a.dtype.str
        self.shape = a.shape

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def data_ptr(self):
        return self.a.ctypes.data

    def get_device(self):
        return -1


class Local(threading.local):
    def __init__(self):
        self.templates = {}


@pytest.fixture
def fast():
    """_ckfast set up with the stand-ins; afterwards set up again as the package had it."""
    local = Local()
    state = {"grad": False, "depth": 0}
    ext.setup(local, Fake, lambda: state["grad"], lambda: state["depth"], lambda i: 0,
              lambda t: Fake(np.empty_like(t.a)),
              lambda shape, dtype, device: Fake(np.empty(shape, dtype=dtype)), _lib.error)
    yield local, state
    if _fast.ext is not None:  # (torch present: the package's own setup)
        _fast.ext.setup(_fast._local, _fast.torch.Tensor, _fast.torch.is_grad_enabled,
                        _fast._torchops.dispatch_stack_len, _fast._torchops.raw_stream,
                        _fast.torch.empty_like, _fast.torch.empty, _lib.error)


_SMX = struct.Struct("=ifQi4x")  # ck_softmax_options


def softmax_template(x, y):
    """A template of ck_softmax(ctx, x, y, options) recorded from numpy x -> y."""
    p = Pack.owned(3 * TENSOR_SIZE + _SMX.size)
    xp, yp, _ = p.tensors([describe(x, "x"), describe(y, "y"), None])
    _SMX.pack_into(p.buf, 3 * TENSOR_SIZE, 0, 1.0, 0, 0)
    ctx = _runtime.context(HOST)
    return _fast.template(_lib.ck_softmax, (ctx, xp, yp, p.base + 3 * TENSOR_SIZE), p.buf,
                          (0, TENSOR_SIZE))


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_softmax_template(fast, rng):
    local, _ = fast
    x0 = rng.standard_normal((5, 70)).astype(np.float32)
    local.templates[ext.key(("smx",), Fake(x0))] = softmax_template(x0, np.empty_like(x0))
    for _ in range(3):  # new data each call: the pointers are rewritten
        x = rng.standard_normal((5, 70)).astype(np.float32)
        y = ext.call(("smx",), Fake(x))
        assert isinstance(y, Fake)
        np.testing.assert_allclose(y.a, np_softmax(x), rtol=1e-5, atol=1e-6)


def test_misses(fast, rng):
    local, state = fast
    x0 = rng.standard_normal((4, 32)).astype(np.float32)
    local.templates[ext.key(("smx",), Fake(x0))] = softmax_template(x0, np.empty_like(x0))
    assert ext.call(("smx",), Fake(x0)) is not None
    assert ext.call(("other",), Fake(x0)) is None  # other options
    assert ext.call(("smx",), Fake(x0[:, :16])) is None  # other shape and strides
    assert ext.call(("smx",), Fake(x0.astype(np.float64))) is None  # other dtype
    assert ext.call(("smx",), x0) is None  # not the tensor type
    state["depth"] = 1  # a dispatch mode is active
    assert ext.call(("smx",), Fake(x0)) is None
    state["depth"], state["grad"] = 0, True
    f = Fake(x0)
    assert ext.call(("smx",), f) is not None  # grad enabled, nothing requires it
    f.requires_grad = True
    assert ext.call(("smx",), f) is None


def test_alignment_and_errors(fast, rng):
    local, _ = fast
    buf = np.zeros(4 * 33 + 1, dtype=np.float32)
    a, b = buf[:4 * 32].reshape(4, 32), buf[1:1 + 4 * 32].reshape(4, 32)  # b 4 bytes off
    t = softmax_template(a, np.empty_like(a))
    t[4] = struct.pack("=i", 16)  # the recorded kernel needs 16-byte aligned x
    local.templates[ext.key(("smx",), Fake(a))] = t
    if a.ctypes.data % 16 == 0:
        assert ext.call(("smx",), Fake(a)) is not None
    assert ext.call(("smx",), Fake(b)) is None  # misaligned: a miss, not a wrong kernel
    # a failing C call raises the package's CkError with ck's sentence
    bad = softmax_template(a, np.empty_like(a))
    bad[1] = struct.pack("=4Q", 0, 0, 0, 0)  # no context: ck_softmax refuses
    local.templates[ext.key(("bad",), Fake(a))] = bad
    with pytest.raises(_lib.CkError) as e:
        ext.call(("bad",), Fake(a))
    assert e.value.status == _lib.Status.INVALID_ARGUMENT
    # a malformed template is an error, not a crash
    local.templates[ext.key(("short",), Fake(a))] = [0, b"", 0]
    assert ext.call(("short",), Fake(a)) is None
    wrong = softmax_template(a, np.empty_like(a))
    wrong[3] = struct.pack("=i", 0)  # one slot for an input and an output
    local.templates[ext.key(("wrong",), Fake(a))] = wrong
    with pytest.raises(ValueError):
        ext.call(("wrong",), Fake(a))


_POOL = struct.Struct("=2i2q15q2iq2i")  # ck_pool_problem
_forward = _lib._sig("ck_pool_forward", [ctypes.c_void_p] * 5)


def test_pointer_arguments_and_two_outputs(fast, rng):
    """ck_pool_forward(ctx, problem, x, y, indices): the pointers are arguments, not buffer
    slots, and the outputs come from the output specs (torch.empty's arguments)."""
    local, _ = fast
    n, h, w, c = 2, 6, 7, 8
    prob = ctypes.create_string_buffer(_POOL.size)
    _POOL.pack_into(prob, 0, 0, 2, n, c, h, w, 1, 2, 2, 1, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
                    _tensor.F32, 2)  # max 2x2 stride 2, int64 indices
    ho, wo = h // 2, w // 2
    outs = (((n, ho, wo, c),), {"dtype": np.float32, "device": "cpu"}), \
           (((n, ho, wo, c),), {"dtype": np.int64, "device": "cpu"})
    ctx = _runtime.context(HOST)
    t = _fast.template(_forward, (ctx, ctypes.addressof(prob), 0, 0, 0), prob,
                       (_fast.arg(2), _fast.arg(3), _fast.arg(4)), outs=outs)
    x0 = rng.standard_normal((n, h, w, c)).astype(np.float32)
    local.templates[ext.key(("pool",), Fake(x0))] = t
    for _ in range(2):
        x = rng.standard_normal((n, h, w, c)).astype(np.float32)
        y, ind = ext.call(("pool",), Fake(x))
        win = x[:, :2 * ho, :2 * wo].reshape(n, ho, 2, wo, 2, c)
        np.testing.assert_array_equal(y.a, win.max(axis=(2, 4)))
        flat = np.take_along_axis(x.transpose(0, 3, 1, 2).reshape(n, c, h * w),
                                  ind.a.transpose(0, 3, 1, 2).reshape(n, c, -1), 2)
        np.testing.assert_array_equal(flat.reshape(n, c, ho, wo).transpose(0, 2, 3, 1), y.a)
