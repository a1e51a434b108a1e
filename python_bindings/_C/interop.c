/* interop.c — NumPy, the buffer protocol and DLPack for pith.Tensor. (Being written.) */
#include "state.h"

int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    PyErr_SetString(PyExc_BufferError, "pith.Tensor: the buffer protocol is not written yet");
    view->obj = NULL;
    return -1;
}

void tensor_releasebuffer(PyObject *self, Py_buffer *view) {}

PyMethodDef interop_tensor_methods[] = {{NULL}};
PyMethodDef interop_module_methods[] = {{NULL}};
