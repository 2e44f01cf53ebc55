"""ck_kernels: ck (Composable Kernels in C) from Python.

    import ck_kernels as ck
    y = ck.softmax(x)                      # NumPy (CPU emulator), torch CPU/CUDA, __dlpack__
    y, h = ck.rms_norm(x, (4096,), w, residual=h)
    z = ck.gemm(y, w1.T, bias=b1, activation="silu")   # epilogue fused; w1.T read in place

Every function generates a kernel for the problem the first time (compiled by NVRTC on a GPU,
by the system C compiler for the emulator), caches it, and launches it on the caller's CUDA
stream. Failures raise CkError with ck's status and sentence. With torch installed, each
function is also the custom operator torch.ops.ck.<name> (fake implementation for
torch.compile; autograd for softmax, log_softmax, layer_norm, rms_norm, matmul, conv*d, max_pool*d).
"""
from . import _torchops  # noqa: F401  (registers torch ops first when torch is present)
from . import cache
from ._lib import CkError, Status
from ._runtime import kernel_count, synchronize
from .attention import scaled_dot_product_attention
from .conv import conv1d, conv2d, conv3d, conv_backward_data, conv_backward_weight
from .elementwise import cast, elementwise
from .gemm import gemm, matmul
from .gemm_quant import gemm_scaled
from .gemm_ptr_array import gemm_ptr_array
from .gemm import plan_instance as gemm_instance
from .gemm import tune as tune_gemm
from .norm import layer_norm, rms_norm, rms_norm_quant, smooth_quant
from .permute import permute
from .pool import (avg_pool2d, avg_pool3d, max_pool2d, max_pool3d,  # noqa: F401
                   max_pool_backward)
from .reduce import amax, amin, argmax, argmin, mean, reduce, sum, vector_norm
from .softmax import log_softmax, softmax, topk_softmax
from .tune import tune

__version__ = "0.1.0"


def version():
    """Version of the loaded libck."""
    from ._lib import ck_version

    return ck_version().decode()


__all__ = [
    "CkError", "Status", "cache", "cast", "elementwise", "gemm", "matmul", "gemm_scaled", "gemm_ptr_array", "gemm_instance", "tune_gemm",
    "layer_norm", "rms_norm",
    "rms_norm_quant", "smooth_quant", "permute", "reduce", "sum", "mean", "amax", "amin",
    "argmax", "argmin", "vector_norm", "softmax", "log_softmax", "topk_softmax", "synchronize",
    "kernel_count", "version", "scaled_dot_product_attention",
    "conv1d", "conv2d", "conv3d", "conv_backward_data", "conv_backward_weight", "max_pool2d", "max_pool3d", "avg_pool2d", "avg_pool3d",
    "max_pool_backward", "tune",
]
