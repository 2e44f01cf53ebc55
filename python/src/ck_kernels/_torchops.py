"""torch.library registration shared by the operation modules.

Each operation module defines its core (framework-neutral) function and, through `op`, a custom
operator ck::<name> with a fake (meta) implementation, so torch.compile graphs hold it without
a graph break, and optionally an autograd formula. With torch absent every helper is a no-op and
the functions take NumPy / DLPack inputs only.
"""
import os

from . import _runtime, _tensor

torch = None
_lib = None
raw_stream = None

if not os.environ.get("CK_KERNELS_NO_TORCH"):
    try:
        import torch  # noqa: F811
    except ImportError:
        torch = None

if torch is not None:
    _tensor.set_torch(torch)
    _lib = torch.library.Library("ck", "DEF")
    # raw_stream(ordinal): the current CUstream of a GPU, as an int
    raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
        (lambda i: torch.cuda.current_stream(i).cuda_stream)  # older torch
    _runtime.set_stream_getter(raw_stream)


def available():
    return torch is not None


def is_torch(x):
    return torch is not None and isinstance(x, torch.Tensor)


def op(schema, impl, fake, backward=None, setup_context=None):
    """Define ck::<schema> with `impl` on CPU and CUDA, `fake` for meta tensors / compile, and
    autograd from `backward` / `setup_context` (torch.library.register_autograd). Returns the
    operator (torch.ops.ck.<name>) or None without torch."""
    if torch is None:
        return None
    name = schema.split("(", 1)[0]
    _lib.define(schema)
    qual = "ck::" + name
    _lib.impl(name, impl, "CPU")
    _lib.impl(name, impl, "CUDA")
    torch.library.register_fake(qual, fake, lib=_lib)
    if backward is None:  # never a silently wrong (zero) gradient: a clear error instead
        backward, setup_context = _no_backward(name), _no_setup
    torch.library.register_autograd(qual, backward, setup_context=setup_context, lib=_lib)
    return getattr(torch.ops.ck, name).default


def _no_setup(ctx, inputs, output):
    pass


def _no_backward(name):
    def backward(ctx, *grads):
        from ._lib import CkError, Status

        raise CkError(Status.NOT_IMPLEMENTED, f"ck.{name} has no backward (ck provides "
                      "gradients for softmax, log_softmax, layer_norm, rms_norm, elementwise, "
                      "cast, permute, sum, mean and matmul); compute this step with torch (or, "
                      "for gemm, ck.matmul and ck.elementwise) where a gradient must flow "
                      "through it.")

    return backward


if torch is not None:
    is_compiling = torch.compiler.is_compiling
    dispatch_stack_len = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
    _grad_enabled = torch.is_grad_enabled
    _Tensor = torch.Tensor
else:
    def is_compiling():
        return False

    def dispatch_stack_len():
        return 0


def direct(*tensors):
    """True when a call on these torch tensors may skip the dispatcher and run the operation's
    implementation at once (what the dispatcher would do): eager mode, plain tensors, no
    tensor needing a gradient, no dispatch mode active. Saves the custom op's dispatch cost
    (tens of microseconds) on every eager inference call."""
    if is_compiling() or dispatch_stack_len():
        return False
    grad = _grad_enabled()
    for t in tensors:
        if t is not None and (type(t) is not _Tensor or (grad and t.requires_grad)):
            return False
    return True
