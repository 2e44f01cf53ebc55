"""ck.tune(fn, *args, **kwargs): tune one call of a ck function (ck/tune.h from Python).

The call fn(*args, **kwargs) runs once through the package's general path, with the C
operation it reaches recorded (its arguments: the context, the packed descriptions, the
options); then that operation's tuner runs every candidate instance of the same problem on the
same data, one progress line per candidate on stderr, and stores the fastest in ck's tuning
table for this device and problem, as `ck tune OP ...` does. Later calls of the problem use it.
The call's outputs are overwritten. For gemm / matmul this is tune_gemm. Not for use while
other threads call ck functions (the recording swaps the package's C entry points).
"""
import ctypes
import sys

from . import _fast, _lib
from ._lib import Status, fail

_P, _I = ctypes.c_void_p, ctypes.c_int
PROGRESS = ctypes.CFUNCTYPE(None, _P, _I, _I, ctypes.c_char_p, ctypes.c_double)
_TAIL = [_I, PROGRESS, _P, _P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_double)]

# the C operation a function reaches -> (its tuner in ck/tune.h, the operation's own arguments)
_TUNERS = {
    "ck_softmax": ("ck_softmax_tune", 4),
    "ck_norm_forward": ("ck_norm_forward_tune", 2),
    "ck_norm_backward": ("ck_norm_backward_tune", 2),
    "ck_reduce": ("ck_reduce_tune", 7),
    "ck_permute": ("ck_permute_tune", 4),
    "ck_copy": ("ck_copy_tune", 3),
    "ck_cast": ("ck_cast_tune", 4),
    "ck_elementwise": ("ck_elementwise_tune", 5),
}
_TUNER_FNS = {t: _lib._sig(t, [_P] * n + _TAIL) for t, n in _TUNERS.values()}


def _recorder(name, f, calls):
    def rec(*args):
        calls.append((name, args))
        return f(*args)

    return rec


def _record(fn, args, kwargs):
    """(fn's result, the recorded C calls) of one call of fn through the general path."""
    calls = []
    saved = [(n, getattr(_lib, n)) for n in _TUNERS]
    fast = (_fast.call, _fast.record)
    try:
        for n, f in saved:
            setattr(_lib, n, _recorder(n, f, calls))
        _fast.call = lambda *a: None  # no call template: the C operation is reached
        _fast.record = lambda *a, **k: None
        result = fn(*args, **kwargs)
    finally:
        for n, f in saved:
            setattr(_lib, n, f)
        _fast.call, _fast.record = fast
    return result, calls


def tune(fn, *args, reps=20, progress=True, **kwargs):
    """Tune the call fn(*args, **kwargs) of a ck function (softmax, log_softmax, layer_norm,
    rms_norm, reduce and its shorthands, permute, cast, elementwise; gemm and matmul through
    tune_gemm) and return the winner as a dict: op, instance, ms (median of `reps` runs)."""
    from .gemm import gemm, matmul, tune as tune_gemm

    if fn is gemm or fn is matmul:
        return tune_gemm(*args, reps=reps, progress=progress, **kwargs)
    if int(reps) < 1:
        fail(Status.INVALID_ARGUMENT, f"tune: reps = {reps}; at least 1 timed run is needed.")
    result, calls = _record(fn, args, kwargs)
    if not calls:
        fail(Status.UNSUPPORTED, f"tune: {getattr(fn, '__name__', fn)!r} reached no operation "
             "ck can tune (tunable: softmax, log_softmax, layer_norm, rms_norm, reduce, sum, "
             "mean, amax, amin, argmax, argmin, vector_norm, permute, cast, elementwise, gemm, "
             "matmul; an empty input has nothing to tune).")
    name, cargs = calls[-1]  # the operation itself (a view's copy, if any, came first)
    tuner, nargs = _TUNERS[name]
    op = name[3:]

    def report(user, i, n, instance, ms):
        if progress:
            t = "%.4f ms" % ms if ms >= 0 else "could not run"
            print("ck tune %s: %d/%d %s %s" % (op, i + 1, n, instance.decode(), t),
                  file=sys.stderr, flush=True)

    cb = PROGRESS(report)
    best = ctypes.create_string_buffer(96)
    ms = ctypes.c_double(-1.0)
    st = _TUNER_FNS[tuner](*cargs[:nargs], int(reps), cb, None, best, len(best),
                              ctypes.byref(ms))
    del result  # (kept alive until here: the recorded arguments point into it)
    if st:
        raise _lib.error()
    return {"op": getattr(fn, "__name__", op), "instance": best.value.decode(), "ms": ms.value}
