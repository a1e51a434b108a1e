/* grad_mode.c — grad mode and inference mode for Python: the functions behind
 * pith.is_grad_enabled, pith.no_grad & co. (pith/_grad_mode.py), and Tensor.is_inference.
 * The flags are libpith's (See Note [Grad mode is per thread], core/grad_mode.c). */
#include "function_layer.h"

/* A bool argument, as PyTorch's binder takes it: a bool, nothing else. */
static int bool_argument(PyObject *v, const char *fn, const char *name, bool *out)
{
    if (!PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position 1) must be bool, not %.200s",
                     fn, name, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = v == Py_True;
    return 0;
}

static PyObject *module_is_grad_enabled(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(pith_grad_enabled());
}

static PyObject *module_set_grad_enabled(PyObject *module, PyObject *mode)
{
    bool on;
    if (bool_argument(mode, "set_grad_enabled", "enabled", &on) < 0)
        return NULL;
    pith_set_grad_enabled(on);
    Py_RETURN_NONE;
}

static PyObject *module_is_inference_mode_enabled(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(pith_inference_mode_enabled());
}

static PyObject *module_set_inference_mode_enabled(PyObject *module, PyObject *mode)
{
    bool on;
    if (bool_argument(mode, "_set_inference_mode_enabled", "enabled", &on) < 0)
        return NULL;
    pith_set_inference_mode_enabled(on);
    Py_RETURN_NONE;
}

static PyObject *tensor_is_inference(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "is_inference");
    return PyBool_FromLong(pith_is_inference(tensor_of(self)));
}

PyMethodDef grad_mode_module_methods[] = {
    {"is_grad_enabled", module_is_grad_enabled, METH_NOARGS,
     "is_grad_enabled(): whether grad mode is on in this thread."},
    {"_set_grad_enabled", module_set_grad_enabled, METH_O,
     "_set_grad_enabled(enabled: bool): sets this thread's grad mode."},
    {"is_inference_mode_enabled", module_is_inference_mode_enabled, METH_NOARGS,
     "is_inference_mode_enabled(): whether inference mode is on in this thread."},
    {"_set_inference_mode_enabled", module_set_inference_mode_enabled, METH_O,
     "_set_inference_mode_enabled(enabled: bool): sets this thread's inference-mode flag "
     "alone (pith.inference_mode also sets grad mode)."},
    {NULL},
};

PyMethodDef grad_mode_tensor_methods[] = {
    {"is_inference", tensor_is_inference, METH_NOARGS,
     "is_inference(): whether this tensor was created in inference mode (or is a view of "
     "such a tensor)."},
    {NULL},
};
