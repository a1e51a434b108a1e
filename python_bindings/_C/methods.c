/* methods.c — fast paths of the common Tensor methods and pith.* functions. */
#include "state.h"

PyMethodDef methods_tensor_methods[] = {{NULL}};
PyMethodDef methods_module_methods[] = {{NULL}};
