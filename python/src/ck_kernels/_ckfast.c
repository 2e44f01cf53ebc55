/*
 * ck_kernels._ckfast: the repeated eager call of a ck function on torch tensors, in C.
 *
 * _fast.py describes the scheme (call templates): the first call of a function on given
 * tensor types, shapes, strides, devices, stream and options takes the package's general path,
 * which leaves a template (the packed arguments of the C call with the slots where the data
 * pointers go, and how to allocate the outputs). A later call with the same key only reads
 * the data pointers, allocates the outputs, writes the pointers and calls ck. _fast.py holds
 * the same functions in Python; this module replaces `key` and `call` when it is built (a few
 * microseconds less per call, where the Python version spends them on attribute lookups and
 * ctypes' argument conversion).
 *
 * Template (a list, made by _fast.template; the layout is shared with _fast.py):
 *   [0] fn     address of the C function: int fn(uintptr_t a0, ..., a(n-1)), n <= 8;
 *              its int parameters read the low half of the register (x86-64, AArch64)
 *   [1] args   bytes: n native uint64 argument values (the buffer's addresses, the context)
 *   [2] base   address of the argument buffer the slots are offsets into
 *   [3] slots  bytes: one native int32 per input tensor, then per output: the offset where
 *              its data pointer goes in the buffer, or -2 - k for argument k, or -1 (none)
 *   [4] align  bytes: one native int32 per input tensor: the alignment its data pointer needs
 *              for the recorded kernel (1: none); a misaligned pointer is a miss
 *   [5] outs   None (one output, torch.empty_like(first input)) or a tuple of (args, kwargs)
 *              for torch.empty, one per output
 *   [6..]      what _fast.py's version and the buffer's lifetime need (not read here)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030A0000
static PyObject *Py_NewRef(PyObject *o)
{
    Py_INCREF(o);
    return o;
}
#endif

enum { MAX_ARGS = 8, MAX_TENSORS = 16 };

typedef int (*fn0)(void);
typedef int (*fn1)(uintptr_t);
typedef int (*fn2)(uintptr_t, uintptr_t);
typedef int (*fn3)(uintptr_t, uintptr_t, uintptr_t);
typedef int (*fn4)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef int (*fn5)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef int (*fn6)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef int (*fn7)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef int (*fn8)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                   uintptr_t);

/* set by setup() */
static PyObject *local_obj;    /* _fast's threading.local: .templates is the thread's dict */
static PyObject *tensor_type;  /* torch.Tensor */
static PyObject *grad_enabled; /* torch.is_grad_enabled */
static PyObject *dispatch_len; /* torch._C._len_torch_dispatch_stack */
static PyObject *raw_stream;   /* torch._C._cuda_getCurrentRawStream, or None */
static PyObject *empty_like;   /* torch.empty_like */
static PyObject *empty;        /* torch.empty */
static PyObject *error_fn;     /* _lib.error: the CkError of the last failure */

static PyObject *s_templates, *s_dtype, *s_shape, *s_stride, *s_device, *s_is_cuda,
    *s_get_device, *s_data_ptr, *s_requires_grad;

static PyObject *setup(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[8];
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7]))
        return NULL;
    PyObject **dst[8] = {&local_obj, &tensor_type, &grad_enabled, &dispatch_len,
                         &raw_stream, &empty_like,  &empty,        &error_fn};
    for (int i = 0; i < 8; ++i) {
        Py_INCREF(o[i]);
        Py_XSETREF(*dst[i], o[i]);
    }
    Py_RETURN_NONE;
}

/* 1: every argument is a plain torch.Tensor and the call may skip the dispatcher (no dispatch
 * mode active; with grad enabled, no input requires a gradient); 0: not; -1: error. */
static int eager(PyObject *const *ts, Py_ssize_t n)
{
    if (!tensor_type)
        return 0;
    for (Py_ssize_t i = 0; i < n; ++i)
        if ((PyObject *)Py_TYPE(ts[i]) != tensor_type)
            return 0;
    PyObject *r = PyObject_CallNoArgs(dispatch_len);
    if (!r)
        return -1;
    long depth = PyLong_AsLong(r);
    Py_DECREF(r);
    if (depth != 0)
        return depth == -1 && PyErr_Occurred() ? -1 : 0;
    if (!(r = PyObject_CallNoArgs(grad_enabled)))
        return -1;
    int grad = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (grad < 0)
        return -1;
    for (Py_ssize_t i = 0; grad && i < n; ++i) {
        PyObject *g = PyObject_GetAttr(ts[i], s_requires_grad);
        if (!g)
            return -1;
        int req = PyObject_IsTrue(g);
        Py_DECREF(g);
        if (req)
            return req < 0 ? -1 : 0;
    }
    return 1;
}

/* The current stream of the first tensor's GPU (0 for a CPU tensor), as an int object. */
static PyObject *stream_of(PyObject *t)
{
    PyObject *c = PyObject_GetAttr(t, s_is_cuda);
    if (!c)
        return NULL;
    int cuda = PyObject_IsTrue(c);
    Py_DECREF(c);
    if (cuda < 0)
        return NULL;
    if (!cuda || raw_stream == Py_None)
        return PyLong_FromLong(0);
    PyObject *dev = PyObject_CallMethodNoArgs(t, s_get_device);
    if (!dev)
        return NULL;
    PyObject *s = PyObject_CallOneArg(raw_stream, dev);
    Py_DECREF(dev);
    return s;
}

/* The template key: (opts, stream, then dtype, shape, stride(), device of each tensor). */
static PyObject *make_key(PyObject *opts, PyObject *const *ts, Py_ssize_t n)
{
    PyObject *key = PyTuple_New(2 + 4 * n);
    if (!key)
        return NULL;
    Py_INCREF(opts);
    PyTuple_SET_ITEM(key, 0, opts);
    PyObject *s = n ? stream_of(ts[0]) : PyLong_FromLong(0);
    if (!s)
        goto fail;
    PyTuple_SET_ITEM(key, 1, s);
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *v[4] = {PyObject_GetAttr(ts[i], s_dtype), PyObject_GetAttr(ts[i], s_shape),
                          PyObject_CallMethodNoArgs(ts[i], s_stride),
                          PyObject_GetAttr(ts[i], s_device)};
        for (int j = 0; j < 4; ++j)
            PyTuple_SET_ITEM(key, 2 + 4 * i + j, v[j]); /* NULLs are skipped by the dealloc */
        if (!v[0] || !v[1] || !v[2] || !v[3])
            goto fail;
    }
    return key;
fail:
    Py_DECREF(key);
    return NULL;
}

/* key(opts, *tensors): the template key of a call (what _fast.put records under). */
static PyObject *key_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs < 1 || nargs - 1 > MAX_TENSORS) {
        PyErr_SetString(PyExc_TypeError, "_ckfast.key(opts, *tensors): 0 to 16 tensors");
        return NULL;
    }
    return make_key(args[0], args + 1, nargs - 1);
}

static int data_ptr(PyObject *t, uintptr_t *p)
{
    PyObject *r = PyObject_CallMethodNoArgs(t, s_data_ptr);
    if (!r)
        return -1;
    *p = (uintptr_t)PyLong_AsUnsignedLongLong(r);
    Py_DECREF(r);
    return *p == (uintptr_t)-1 && PyErr_Occurred() ? -1 : 0;
}

/* Call fn(a[0..n)) with the GIL released, as ctypes does (on the emulator the kernel runs
 * inside the call; other Python threads go on meanwhile). */
static int invoke(PyObject *fn_obj, const uintptr_t *a, Py_ssize_t n, int *status)
{
    void *fn = PyLong_AsVoidPtr(fn_obj);
    if (!fn)
        return -1;
    if (n > MAX_ARGS) {
        PyErr_SetString(PyExc_ValueError, "_ckfast: a template of more than 8 arguments");
        return -1;
    }
    Py_BEGIN_ALLOW_THREADS
    switch (n) {
    case 0: *status = ((fn0)fn)(); break;
    case 1: *status = ((fn1)fn)(a[0]); break;
    case 2: *status = ((fn2)fn)(a[0], a[1]); break;
    case 3: *status = ((fn3)fn)(a[0], a[1], a[2]); break;
    case 4: *status = ((fn4)fn)(a[0], a[1], a[2], a[3]); break;
    case 5: *status = ((fn5)fn)(a[0], a[1], a[2], a[3], a[4]); break;
    case 6: *status = ((fn6)fn)(a[0], a[1], a[2], a[3], a[4], a[5]); break;
    case 7: *status = ((fn7)fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
    default: *status = ((fn8)fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
    }
    Py_END_ALLOW_THREADS
    return 0;
}

/* call(opts, *tensors): the outputs of the recorded call on these tensors (one tensor or a
 * tuple), or None when no template matches (the caller then takes the general path). */
static PyObject *call_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    Py_ssize_t n = nargs - 1;
    if (n < 0 || n > MAX_TENSORS) {
        PyErr_SetString(PyExc_TypeError, "_ckfast.call(opts, *tensors): 0 to 16 tensors");
        return NULL;
    }
    int ok = eager(args + 1, n);
    if (ok <= 0)
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *key = make_key(args[0], args + 1, n);
    if (!key)
        return NULL;
    PyObject *table = PyObject_GetAttr(local_obj, s_templates);
    if (!table) {
        Py_DECREF(key);
        return NULL;
    }
    PyObject *t = PyDict_GetItemWithError(table, key); /* borrowed */
    Py_DECREF(key);
    if (!t || !PyList_Check(t) || PyList_GET_SIZE(t) < 6) {
        Py_DECREF(table);
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    Py_INCREF(t);
    Py_DECREF(table);
    PyObject *result = NULL, *outs_made[MAX_TENSORS] = {NULL};
    Py_ssize_t nout = 0;
    PyObject *fn = PyList_GET_ITEM(t, 0), *argb = PyList_GET_ITEM(t, 1);
    PyObject *slotb = PyList_GET_ITEM(t, 3), *alignb = PyList_GET_ITEM(t, 4);
    PyObject *outs = PyList_GET_ITEM(t, 5);
    char *base = (char *)PyLong_AsVoidPtr(PyList_GET_ITEM(t, 2));
    if (!base || !PyBytes_Check(argb) || !PyBytes_Check(slotb) || !PyBytes_Check(alignb)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "_ckfast: a malformed template");
        goto done;
    }
    nout = outs == Py_None ? 1 : PyTuple_Check(outs) ? PyTuple_GET_SIZE(outs) : -1;
    Py_ssize_t na = PyBytes_GET_SIZE(argb) / 8;
    if (nout < 1 || n + nout > MAX_TENSORS || na > MAX_ARGS ||
        PyBytes_GET_SIZE(slotb) != (n + nout) * 4 || PyBytes_GET_SIZE(alignb) != n * 4) {
        PyErr_SetString(PyExc_ValueError, "_ckfast: a template of another shape of call");
        nout = 0;
        goto done;
    }
    const char *slots = PyBytes_AS_STRING(slotb), *align = PyBytes_AS_STRING(alignb);
    uintptr_t ptrs[MAX_TENSORS];
    for (Py_ssize_t i = 0; i < n; ++i) {
        int32_t al;
        memcpy(&al, align + 4 * i, 4);
        if (data_ptr(args[1 + i], &ptrs[i]) < 0)
            goto done;
        if (al > 1 && ptrs[i] % (uintptr_t)al) { /* the recorded kernel needs aligned data */
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    for (Py_ssize_t o = 0; o < nout; ++o) {
        PyObject *y;
        if (outs == Py_None) {
            y = PyObject_CallOneArg(empty_like, args[1]);
        } else {
            PyObject *spec = PyTuple_GET_ITEM(outs, o);
            y = PyTuple_Check(spec) && PyTuple_GET_SIZE(spec) == 2
                    ? PyObject_Call(empty, PyTuple_GET_ITEM(spec, 0), PyTuple_GET_ITEM(spec, 1))
                    : (PyErr_SetString(PyExc_ValueError, "_ckfast: a malformed output"), NULL);
        }
        if (!y || data_ptr(y, &ptrs[n + o]) < 0) {
            Py_XDECREF(y);
            goto done;
        }
        outs_made[o] = y;
    }
    uintptr_t a[MAX_ARGS];
    memcpy(a, PyBytes_AS_STRING(argb), (size_t)na * 8);
    for (Py_ssize_t i = 0; i < n + nout; ++i) {
        int32_t off;
        memcpy(&off, slots + 4 * i, 4);
        if (off >= 0)
            memcpy(base + off, &ptrs[i], sizeof(uintptr_t));
        else if (off <= -2 && -2 - off < na)
            a[-2 - off] = ptrs[i];
    }
    int status = 0;
    if (invoke(fn, a, na, &status) < 0)
        goto done;
    if (status) {
        PyObject *e = PyObject_CallNoArgs(error_fn);
        if (e) {
            PyErr_SetObject((PyObject *)Py_TYPE(e), e);
            Py_DECREF(e);
        }
        goto done;
    }
    if (nout == 1) {
        result = outs_made[0];
        outs_made[0] = NULL;
    } else if ((result = PyTuple_New(nout))) {
        for (Py_ssize_t o = 0; o < nout; ++o) {
            PyTuple_SET_ITEM(result, o, outs_made[o]);
            outs_made[o] = NULL;
        }
    }
done:
    for (Py_ssize_t o = 0; o < nout && o < MAX_TENSORS; ++o)
        Py_XDECREF(outs_made[o]);
    Py_DECREF(t);
    return result;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(local, Tensor, is_grad_enabled, dispatch_stack_len, raw_stream, empty_like, empty, "
     "error)"},
    {"key", (PyCFunction)(void (*)(void))key_py, METH_FASTCALL, "key(opts, *tensors)"},
    {"call", (PyCFunction)(void (*)(void))call_py, METH_FASTCALL, "call(opts, *tensors)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ckfast",
                                    "Call templates of ck_kernels in C (see _fast.py).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ckfast(void)
{
    const char *names[9] = {"templates", "dtype",    "shape",    "stride",       "device",
                            "is_cuda",   "get_device", "data_ptr", "requires_grad"};
    PyObject **dst[9] = {&s_templates, &s_dtype,      &s_shape,    &s_stride,       &s_device,
                         &s_is_cuda,   &s_get_device, &s_data_ptr, &s_requires_grad};
    for (int i = 0; i < 9; ++i)
        if (!(*dst[i] = PyUnicode_InternFromString(names[i])))
            return NULL;
    return PyModule_Create(&module);
}
