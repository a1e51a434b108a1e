/* interop.h — what interop.c, array_import.c and dlpack.c share (NumPy, buffers, DLPack).
 * The functions the rest of the extension uses are in state.h. */
#ifndef PITH_BINDINGS_INTEROP_H
#define PITH_BINDINGS_INTEROP_H

#include "state.h"

/* interop.c: the drop of a heap Py_buffer owned by imported memory (PyBuffer_Release, free). */
void buffer_drop(void *resource);

/* array_import.c */
/* The struct-module format of `dtype`; NULL for bfloat16, which has none. */
const char *dtype_format(pith_dtype dtype);
/* Whether `obj` is an instance of numpy.<type_name>; 0 when NumPy is not imported (then no
 * such object can exist), -1 with an error. */
int numpy_isinstance(PyObject *obj, const char *type_name);
/* Where a buffer comes from: it decides the error messages. */
typedef enum { SOURCE_BUFFER, SOURCE_NUMPY_ARRAY, SOURCE_NUMPY_SCALAR } buffer_source;
/* pith.tensor copies; as_tensor shares when it can; from_numpy shares or raises. */
typedef enum { IMPORT_COPY, IMPORT_SHARE_OR_COPY, IMPORT_SHARE } import_mode;
/* The buffer of `obj` as a tensor (new C reference), cast to `dtype` when has_dtype (not
 * with IMPORT_SHARE); NULL with a Python error. */
pith_tensor *buffer_import(pith_module_state *st, PyObject *obj, buffer_source source,
                           import_mode mode, int has_dtype, pith_dtype dtype);
/* A new contiguous copy of `t` in `dtype` (new C reference; NULL with a Python error),
 * made without the GIL when it is big. */
pith_tensor *copy_without_gil(pith_module_state *st, const pith_tensor *t, pith_dtype dtype);

/* dlpack.c: Tensor.__dlpack__, Tensor.__dlpack_device__ and pith.from_dlpack. */
PyObject *tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused);
PyObject *module_from_dlpack(PyObject *module, PyObject *args, PyObject *kwargs);
/* Whether `obj` offers DLPack (has __dlpack__, or is a capsule). */
int dlpack_is_capable(PyObject *obj);
/* A tensor sharing the memory of a DLPack-capable object or capsule, or a pith tensor's
 * alias (new C reference); NULL with a Python error. */
pith_tensor *dlpack_import(pith_module_state *st, PyObject *obj);

#endif /* PITH_BINDINGS_INTEROP_H */
