"""Loading libck and calling it through ctypes; the package's exception class.

The library is the one built into the wheel (ck_kernels/lib/libck.so), or the file named by
$CK_KERNELS_LIB (a build tree's build/lib/libck.so, for developing ck itself). Every C function
of ck that can fail returns a ck_status; `call` turns a failure into CkError carrying the status
and the sentence of ck_last_error().
"""
import ctypes
import enum
import os

__all__ = ["CkError", "Status", "lib", "call", "fail"]


class Status(enum.IntEnum):
    """ck_status (include/ck/status.h)."""

    SUCCESS = 0
    INVALID_ARGUMENT = 1
    UNSUPPORTED = 2
    OUT_OF_MEMORY = 3
    NOT_FOUND = 4
    BACKEND_UNAVAILABLE = 5
    COMPILE = 6
    LAUNCH = 7
    DEVICE = 8
    IO = 9
    OVERFLOW = 10
    PARSE = 11
    NOT_IMPLEMENTED = 12
    INTERNAL = 13


class CkError(RuntimeError):
    """A ck operation failed. `status` is the ck_status (a Status), `message` the sentence that
    says which argument was wrong and what is accepted."""

    def __init__(self, status, message):
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.message = message
        name = status.name if isinstance(status, Status) else str(status)
        super().__init__(f"CK_ERROR_{name}: {message}" if name != "SUCCESS" else message)


def fail(status, message):
    """Raise CkError for a refusal found on the Python side (same form as the library's)."""
    raise CkError(status, message)


def _load():
    path = os.environ.get("CK_KERNELS_LIB")
    if not path:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libck.so")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"ck_kernels: cannot load libck from {path} ({e}); reinstall the package "
            "(pip install ./python) or set CK_KERNELS_LIB to a built libck.so"
        ) from None


lib = _load()

_P = ctypes.c_void_p
_I = ctypes.c_int


def _sig(name, argtypes, restype=_I):
    f = getattr(lib, name)
    f.argtypes = argtypes
    f.restype = restype
    return f


ck_last_error = _sig("ck_last_error", [], ctypes.c_char_p)
ck_version = _sig("ck_version", [], ctypes.c_char_p)
ck_context_create = _sig("ck_context_create_for_device", [_P, _P])
ck_device_open = _sig("ck_device_open", [_I, _I, _P])
ck_stream_wrap = _sig("ck_stream_wrap", [_P, _P, _P])
ck_context_set_stream = _sig("ck_context_set_stream", [_P, _P], None)
ck_context_synchronize = _sig("ck_context_synchronize", [_P])
ck_context_kernel_count = _sig("ck_context_kernel_count", [_P])
ck_softmax = _sig("ck_softmax", [_P, _P, _P, _P])
ck_topk_softmax = _sig("ck_topk_softmax", [_P, _P, _I, _I, _P, _P])
ck_norm_forward = _sig("ck_norm_forward", [_P, _P])
ck_norm_backward = _sig("ck_norm_backward", [_P, _P])
ck_reduce = _sig("ck_reduce", [_P, _I, _P, _P, _I, _P, _P])
ck_permute = _sig("ck_permute", [_P, _P, _P, _P])
ck_cast = _sig("ck_cast", [_P, _P, _P, _P])
ck_copy = _sig("ck_copy", [_P, _P, _P])
ck_ew_parse = _sig("ck_ew_parse", [ctypes.c_char_p, _P])
ck_elementwise = _sig("ck_elementwise", [_P, _P, _P, _I, _P])
ck_gemm_plan_create = _sig("ck_gemm_plan_create", [_P, _P, _I, _P])
ck_gemm_plan_execute = _sig("ck_gemm_plan_execute", [_P, _P])
ck_gemm_plan_destroy = _sig("ck_gemm_plan_destroy", [_P], None)
ck_gemm_plan_instance = _sig("ck_gemm_plan_instance", [_P, _P])
ck_gemm = _sig("ck_gemm", [_P, _P, _P, _P, _P, _P])
ck_gemm_ptr_array_plan_create = _sig("ck_gemm_ptr_array_plan_create", [_P, _P, _P, _P])
ck_gemm_ptr_array_execute = _sig("ck_gemm_ptr_array_execute", [_P, _P, _I, _P])
ck_gemm_ptr_array_check = _sig("ck_gemm_ptr_array_check", [_P, _P, _I, _P])
ck_gemm_ptr_array_plan_instance = _sig("ck_gemm_ptr_array_plan_instance", [_P, _P])
ck_gemm_ptr_array_plan_destroy = _sig("ck_gemm_ptr_array_plan_destroy", [_P], None)
# ck_gemm_tune(ctx, problem, args, reps, progress, user, best, best_ms)
GEMM_TUNE_PROGRESS = ctypes.CFUNCTYPE(None, _P, _I, _I, _P, ctypes.c_double)
ck_gemm_tune = _sig("ck_gemm_tune", [_P, _P, _P, _I, GEMM_TUNE_PROGRESS, _P, _P, _P])
ck_attention_plan_create = _sig("ck_attention_plan_create", [_P, _P, _P])
ck_attention_plan_execute = _sig("ck_attention_plan_execute", [_P, _P])
ck_attention_plan_destroy = _sig("ck_attention_plan_destroy", [_P], None)
ck_cache_dir = _sig("ck_cache_dir", [ctypes.c_char_p, ctypes.c_size_t])
ck_cache_clear = _sig("ck_cache_clear", [_P])
ck_cache_list = _sig("ck_cache_list", [_P, _P])
ck_round_mode_from_name = _sig("ck_round_mode_from_name", [ctypes.c_char_p, _P])
ck_overflow_mode_from_name = _sig("ck_overflow_mode_from_name", [ctypes.c_char_p, _P])
ck_dtype_from_name = _sig("ck_dtype_from_name", [ctypes.c_char_p, _P])
ck_reduce_op_from_name = _sig("ck_reduce_op_from_name", [ctypes.c_char_p, _P])
libc_free = ctypes.CDLL(None).free
libc_free.argtypes = [_P]
libc_free.restype = None


def error():
    """The CkError for the calling thread's last ck failure."""
    st = lib.ck_last_status()
    return CkError(st, ck_last_error().decode("utf-8", "replace"))


lib.ck_last_status.restype = _I
lib.ck_last_status.argtypes = []


def call(fn, *args):
    """fn(*args); CkError with the status and ck_last_error()'s sentence when it fails."""
    st = fn(*args)
    if st:
        raise CkError(st, ck_last_error().decode("utf-8", "replace"))
