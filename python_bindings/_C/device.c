/* device.c — pith.device (PyTorch's torch.device: a device type PyTorch knows and an
 * optional index), the reading of device arguments, and the errors for the devices pith
 * does not have. pith tensors live on the CPU, or on Meta (no data). */
#include <string.h>

#include "state.h"

/* Note [Device arguments]
 * Every device= of pith reads its argument here (device_read): a str in PyTorch's grammar
 * ('cpu', 'cuda:1'), a pith.device, a torch.device (read through its `type` and `index`,
 * so that code holding PyTorch's devices can pass them), or an int, which PyTorch takes
 * for an accelerator index and refuses when there is none, as here. What PyTorch refuses
 * raises PyTorch's error (an unknown type is RuntimeError). Of the devices PyTorch knows,
 * pith has the CPU (with or without an index) and Meta (operators only: pith.ops, where a
 * factory makes a data-less tensor); for the others device_resolve raises, for CUDA
 * AssertionError as PyTorch built without CUDA does ("Torch not compiled with CUDA
 * enabled"), and NotImplementedError for the rest, so that `except AssertionError` and
 * `except RuntimeError` written for PyTorch still catch them. */

/* PyTorch's device types (c10::DeviceType): in the order of PyTorch's parse error, with
 * the enum values that its hash uses (device_hash). */
enum {
    DEV_CPU, DEV_CUDA, DEV_IPU, DEV_XPU, DEV_MKLDNN, DEV_OPENGL, DEV_OPENCL, DEV_IDEEP,
    DEV_HIP, DEV_VE, DEV_FPGA, DEV_MAIA, DEV_XLA, DEV_LAZY, DEV_VULKAN, DEV_MPS, DEV_META,
    DEV_HPU, DEV_MTIA, DEV_PRIVATEUSEONE, DEVICE_NUM_TYPES
};

static const struct {
    const char *name;
    int id;
} device_types[DEVICE_NUM_TYPES] = {
    [DEV_CPU] = {"cpu", 0},         [DEV_CUDA] = {"cuda", 1},
    [DEV_IPU] = {"ipu", 18},        [DEV_XPU] = {"xpu", 12},
    [DEV_MKLDNN] = {"mkldnn", 2},   [DEV_OPENGL] = {"opengl", 3},
    [DEV_OPENCL] = {"opencl", 4},   [DEV_IDEEP] = {"ideep", 5},
    [DEV_HIP] = {"hip", 6},         [DEV_VE] = {"ve", 16},
    [DEV_FPGA] = {"fpga", 7},       [DEV_MAIA] = {"maia", 8},
    [DEV_XLA] = {"xla", 9},         [DEV_LAZY] = {"lazy", 17},
    [DEV_VULKAN] = {"vulkan", 10},  [DEV_MPS] = {"mps", 13},
    [DEV_META] = {"meta", 14},      [DEV_HPU] = {"hpu", 15},
    [DEV_MTIA] = {"mtia", 19},      [DEV_PRIVATEUSEONE] = {"privateuseone", 20},
};

/* PyTorch keeps a device index in an int8: larger ones wrap there (torch.device('cuda:128')
 * has index 65408); pith refuses them. */
#define DEVICE_INDEX_MAX 127

typedef struct {
    PyObject_HEAD
    int type;  /* DEV_* */
    int index; /* -1: none */
} pith_device_object;

static const char accelerator_message[] = "Cannot access accelerator device when none is "
                                          "available.";

static PyObject *device_make(pith_module_state *st, int type, int index)
{
    if (index < 0 && (type == DEV_CPU || type == DEV_META))
        return Py_NewRef(st->devices[type == DEV_META]);
    pith_device_object *d = PyObject_New(pith_device_object, st->device_type);
    if (d) {
        d->type = type;
        d->index = index;
    }
    return (PyObject *)d;
}

PyObject *device_object(pith_module_state *st, pith_device device)
{
    return Py_NewRef(st->devices[device == PITH_META]);
}

/* ---- reading a device ---- */

static int type_find(const char *name, size_t n)
{
    for (int t = 0; t < DEVICE_NUM_TYPES; t++)
        if (strlen(device_types[t].name) == n && memcmp(device_types[t].name, name, n) == 0)
            return t;
    return -1;
}

static bool is_ascii_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int type_known(int type, PyObject *text)
{
    if (type >= 0)
        return 0;
    PyObject *names = PyUnicode_FromString("");
    for (int t = 0; names && t < DEVICE_NUM_TYPES; t++)
        Py_SETREF(names, PyUnicode_FromFormat("%U%s%s", names, t ? ", " : "",
                                              device_types[t].name));
    if (names)
        PyErr_Format(PyExc_RuntimeError, "Expected one of %U device type at start of device "
                     "string: %U", names, text);
    Py_XDECREF(names);
    return -1;
}

/* A device string, PyTorch's grammar: a type name of letters and '_', then optionally ':'
 * and an index without leading zeros. `text` is the str, for messages. */
static int device_parse(PyObject *text, int *type, int *index)
{
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    if (!s)
        return -1;
    if ((size_t)n != strlen(s)) {
        PyErr_SetString(PyExc_ValueError, "embedded null character in a str argument");
        return -1;
    }
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "Device string must not be empty");
        return -1;
    }
    Py_ssize_t name_end = 0;
    while (name_end < n && is_ascii_name_char(s[name_end]))
        name_end++;
    bool valid = name_end > 0 && (name_end == n || s[name_end] == ':');
    long long value = -1;
    if (valid && name_end < n) {
        Py_ssize_t start = name_end + 1, i = start;
        value = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            value = value > DEVICE_INDEX_MAX ? value : value * 10 + (s[i] - '0');
        valid = i == n && i > start && !(s[start] == '0' && i - start > 1);
    }
    if (!valid) {
        PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%U'", text);
        return -1;
    }
    if (value > DEVICE_INDEX_MAX) {
        PyErr_Format(PyExc_RuntimeError, "Device index must be at most %d, in device string "
                     "'%U'", DEVICE_INDEX_MAX, text);
        return -1;
    }
    *type = type_find(s, (size_t)name_end);
    *index = (int)value;
    return type_known(*type, text);
}

/* PyTorch's device of an index argument: an int (not a bool), non-negative, small. */
static int index_parse(PyObject *obj, int *index)
{
    if (obj == Py_None) {
        *index = -1;
        return 0;
    }
    PyObject *number = PyBool_Check(obj) ? NULL : PyNumber_Index(obj);
    if (!number) {
        PyErr_Format(PyExc_TypeError, "device(): argument 'index' (position 2) must be int, "
                     "not %.200s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(number, &overflow);
    Py_DECREF(number);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow < 0 || (!overflow && v < 0)) {
        PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative");
        return -1;
    }
    if (overflow > 0 || v > DEVICE_INDEX_MAX) {
        PyErr_Format(PyExc_RuntimeError, "Device index must be at most %d", DEVICE_INDEX_MAX);
        return -1;
    }
    *index = (int)v;
    return 0;
}

static bool is_torch_device(PyObject *obj)
{
    return strcmp(Py_TYPE(obj)->tp_name, "torch.device") == 0;
}

/* A torch.device, through its `type` (a str) and `index` (an int or None). */
static int torch_device_read(PyObject *obj, int *type, int *index)
{
    PyObject *name = PyObject_GetAttrString(obj, "type");
    PyObject *number = name ? PyObject_GetAttrString(obj, "index") : NULL;
    int rc = -1;
    if (number && !PyUnicode_Check(name))
        PyErr_Format(PyExc_TypeError, "a torch.device whose type is %.200s, not str",
                     Py_TYPE(name)->tp_name);
    else if (number && index_parse(number, index) == 0) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(name, &n);
        *type = s ? type_find(s, (size_t)n) : -1;
        rc = s ? type_known(*type, name) : -1;
    }
    Py_XDECREF(name);
    Py_XDECREF(number);
    return rc;
}

bool device_like(pith_module_state *st, PyObject *obj)
{
    return PyUnicode_Check(obj) || PyObject_TypeCheck(obj, st->device_type) ||
           is_torch_device(obj) || (PyLong_Check(obj) && !PyBool_Check(obj));
}

int device_read(pith_module_state *st, PyObject *obj, int *type, int *index)
{
    if (PyObject_TypeCheck(obj, st->device_type)) {
        *type = ((pith_device_object *)obj)->type;
        *index = ((pith_device_object *)obj)->index;
        return 0;
    }
    if (PyUnicode_Check(obj))
        return device_parse(obj, type, index);
    if (is_torch_device(obj))
        return torch_device_read(obj, type, index);
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        PyErr_SetString(PyExc_RuntimeError, accelerator_message);
        return -1;
    }
    PyErr_Format(PyExc_TypeError, "device must be a str, an int or a pith.device, not %.200s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

/* "'cuda:1'": the device as PyTorch prints it, for messages. */
static PyObject *device_text(int type, int index)
{
    return index < 0 ? PyUnicode_FromString(device_types[type].name)
                     : PyUnicode_FromFormat("%s:%d", device_types[type].name, index);
}

/* See Note [Device arguments]: the CPU, and Meta when `meta_ok`, into *out; the others
 * raise, naming `fn` (a function name such as "zeros", or NULL). */
static int device_resolve(int type, int index, bool meta_ok, const char *fn, pith_device *out)
{
    if (type == DEV_CPU || (meta_ok && type == DEV_META)) {
        *out = type == DEV_META ? PITH_META : PITH_CPU;
        return 0;
    }
    PyObject *text = device_text(type, index);
    if (!text)
        return -1;
    const char *sep = fn ? "(): " : "";
    if (type == DEV_CUDA)
        PyErr_Format(PyExc_AssertionError, "%s%sdevice='%U': pith is not compiled with CUDA "
                     "enabled (pith tensors live on the CPU)", fn ? fn : "", sep, text);
    else
        PyErr_Format(PyExc_NotImplementedError, "%s%sdevice='%U' is not supported: %s",
                     fn ? fn : "", sep, text,
                     meta_ok ? "pith has the 'cpu' and 'meta' devices"
                             : "pith tensors live on the CPU");
    Py_DECREF(text);
    return -1;
}

int device_argument(pith_module_state *st, PyObject *obj, bool meta_ok, const char *fn,
                    pith_device *out)
{
    int type, index;
    if (!obj || obj == Py_None) {
        *out = PITH_CPU;
        return 0;
    }
    if (device_read(st, obj, &type, &index) < 0)
        return -1;
    return device_resolve(type, index, meta_ok, fn, out);
}

int device_of_answer(pith_module_state *st, PyObject *obj, pith_device *out)
{
    int type, index;
    if (device_read(st, obj, &type, &index) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (type != DEV_CPU && type != DEV_META)
        return 0;
    *out = type == DEV_META ? PITH_META : PITH_CPU;
    return 1;
}

/* ---- the type ---- */

static PyObject *device_invalid_arguments(PyObject *args, PyObject *kwargs)
{
    PyObject *types = PyUnicode_FromString("");
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    for (Py_ssize_t i = 0; types && i < n; i++)
        Py_SETREF(types, PyUnicode_FromFormat("%U%s%s", types, i ? ", " : "",
                                              Py_TYPE(PyTuple_GET_ITEM(args, i))->tp_name));
    if (kwargs && types) {
        PyObject *key, *value;
        Py_ssize_t pos = 0, i = n;
        while (types && PyDict_Next(kwargs, &pos, &key, &value))
            Py_SETREF(types, PyUnicode_FromFormat("%U%s%U=%s", types, i++ ? ", " : "", key,
                                                  Py_TYPE(value)->tp_name));
    }
    if (types)
        PyErr_Format(PyExc_TypeError, "device() received an invalid combination of arguments "
                     "- got (%U), but expected one of:\n * (pith.device device)\n * (str type, "
                     "int index = -1)\n", types);
    Py_XDECREF(types);
    return NULL;
}

/* device(type_or_device) or device(type, index=None): as torch.device. */
static PyObject *device_new(PyTypeObject *cls, PyObject *args, PyObject *kwargs)
{
    pith_module_state *st = state_of_type(cls);
    if (!st)
        return NULL;
    PyObject *first = NULL, *index_obj = Py_None;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > 2)
        return device_invalid_arguments(args, kwargs);
    if (n > 0)
        first = PyTuple_GET_ITEM(args, 0);
    if (n > 1)
        index_obj = PyTuple_GET_ITEM(args, 1);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    bool index_given = n > 1;
    while (kwargs && PyDict_Next(kwargs, &pos, &key, &value)) {
        bool is_first = PyUnicode_CompareWithASCIIString(key, "type") == 0 ||
                        PyUnicode_CompareWithASCIIString(key, "device") == 0;
        if (is_first && !first) {
            first = value;
        } else if (PyUnicode_CompareWithASCIIString(key, "index") == 0 && !index_given) {
            index_obj = value;
            index_given = true;
        } else if (is_first || PyUnicode_CompareWithASCIIString(key, "index") == 0) {
            return device_invalid_arguments(args, kwargs);
        } else {
            PyErr_Format(PyExc_TypeError, "device() got an unexpected keyword argument '%U'",
                         key);
            return NULL;
        }
    }
    if (!first)
        return device_invalid_arguments(args, kwargs);
    PyObject *decoded = NULL;
    if (PyBytes_Check(first)) { /* PyTorch takes bytes for the type too */
        if (!(decoded = PyUnicode_FromEncodedObject(first, "utf-8", "strict")))
            return NULL;
        first = decoded;
    }
    int type, index, explicit_index;
    PyObject *r = NULL;
    if (!device_like(st, first) || (!PyUnicode_Check(first) && index_obj != Py_None)) {
        r = device_invalid_arguments(args, kwargs); /* or a device, or an int, and an index */
        goto done;
    }
    if (device_read(st, first, &type, &index) < 0 || index_parse(index_obj, &explicit_index) < 0)
        goto done;
    if (index_given && index >= 0) { /* even index=None, as in PyTorch */
        PyErr_Format(PyExc_RuntimeError, "type (string) must not include an index because "
                     "index was passed explicitly: %U", first);
        goto done;
    }
    if (type == DEV_MKLDNN &&
        PyErr_WarnEx(PyExc_UserWarning, "'mkldnn' is no longer used as device type. So "
                     "torch.device('mkldnn') will be deprecated and removed in the future. "
                     "Please use other valid device types instead.", 1) < 0)
        goto done;
    r = device_make(st, type, explicit_index >= 0 ? explicit_index : index);
done:
    Py_XDECREF(decoded);
    return r;
}

#define DEVICE(self) ((pith_device_object *)(self))

static PyObject *device_get_type(PyObject *self, void *closure)
{
    return PyUnicode_FromString(device_types[DEVICE(self)->type].name);
}

static PyObject *device_get_index(PyObject *self, void *closure)
{
    if (DEVICE(self)->index < 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(DEVICE(self)->index);
}

static PyObject *device_str(PyObject *self)
{
    return device_text(DEVICE(self)->type, DEVICE(self)->index);
}

static PyObject *device_repr(PyObject *self)
{
    const char *name = device_types[DEVICE(self)->type].name;
    if (DEVICE(self)->index < 0)
        return PyUnicode_FromFormat("device(type='%s')", name);
    return PyUnicode_FromFormat("device(type='%s', index=%d)", name, DEVICE(self)->index);
}

/* PyTorch's hash: the c10 enum value of the type, shifted, and the index as a uint8 (-1 is
 * 255); so a pith.device hashes as the torch.device it equals. */
static Py_hash_t device_hash(PyObject *self)
{
    return ((Py_hash_t)device_types[DEVICE(self)->type].id << 16) |
           (Py_hash_t)(uint8_t)DEVICE(self)->index;
}

/* Equal to a pith.device or torch.device of the same type and index; never to a str (as
 * torch.device('cpu') != 'cpu'). Devices have no order. */
static PyObject *device_richcompare(PyObject *a, PyObject *b, int op)
{
    if (op != Py_EQ && op != Py_NE)
        Py_RETURN_NOTIMPLEMENTED;
    pith_module_state *st = state_of_type(Py_TYPE(a));
    if (!st)
        return NULL;
    int type, index;
    if (PyObject_TypeCheck(b, st->device_type)) {
        type = DEVICE(b)->type;
        index = DEVICE(b)->index;
    } else if (is_torch_device(b)) {
        if (torch_device_read(b, &type, &index) < 0)
            return NULL;
    } else {
        Py_RETURN_NOTIMPLEMENTED;
    }
    bool equal = type == DEVICE(a)->type && index == DEVICE(a)->index;
    return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

/* Pickled as the call that makes it: device('cpu') or device('cuda', 1). */
static PyObject *device_reduce(PyObject *self, PyObject *unused)
{
    const char *name = device_types[DEVICE(self)->type].name;
    if (DEVICE(self)->index < 0)
        return Py_BuildValue("O(s)", (PyObject *)Py_TYPE(self), name);
    return Py_BuildValue("O(si)", (PyObject *)Py_TYPE(self), name, DEVICE(self)->index);
}

/* `with pith.device('cpu'):` makes the CPU the default device of the factories in the
 * block, as PyTorch's device context does: it is the only device they make tensors on, so
 * the block changes nothing; any other device raises here, not at the first factory. */
static PyObject *device_enter(PyObject *self, PyObject *unused)
{
    pith_device out;
    if (device_resolve(DEVICE(self)->type, DEVICE(self)->index, false, "device.__enter__",
                       &out) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *device_exit(PyObject *self, PyObject *args)
{
    Py_RETURN_NONE;
}

static PyGetSetDef device_getset[] = {
    {"type", device_get_type, NULL, "The device type, such as 'cpu' or 'cuda'.", NULL},
    {"index", device_get_index, NULL, "The device index, or None.", NULL},
    {NULL},
};

static PyMethodDef device_methods[] = {
    {"__reduce__", device_reduce, METH_NOARGS, NULL},
    {"__enter__", device_enter, METH_NOARGS, NULL},
    {"__exit__", device_exit, METH_VARARGS, NULL},
    {NULL},
};

static void device_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot device_slots[] = {
    {Py_tp_new, device_new},
    {Py_tp_dealloc, device_dealloc},
    {Py_tp_repr, device_repr},
    {Py_tp_str, device_str},
    {Py_tp_hash, device_hash},
    {Py_tp_richcompare, device_richcompare},
    {Py_tp_getset, device_getset},
    {Py_tp_methods, device_methods},
    {Py_tp_doc, "device(type, index=None) or device('type:index'): a device, as "
                "torch.device. pith tensors live on the CPU."},
    {0, NULL},
};

static PyType_Spec device_spec = {
    .name = "pith.device",
    .basicsize = sizeof(pith_device_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = device_slots,
};

/* _cpu_device(device, fn): the pith.device a device= argument of the Python layer names,
 * None for None; raises for any device but the CPU (See Note [Device arguments]). */
static PyObject *module_cpu_device(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    pith_module_state *st = state_of_module(module);
    const char *fn = nargs == 2 && PyUnicode_Check(args[1]) ? PyUnicode_AsUTF8(args[1]) : NULL;
    if (!fn) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_cpu_device(device, fn: str)");
        return NULL;
    }
    if (args[0] == Py_None)
        Py_RETURN_NONE;
    int type, index;
    pith_device out;
    if (device_read(st, args[0], &type, &index) < 0 ||
        device_resolve(type, index, false, fn, &out) < 0)
        return NULL;
    return PyObject_TypeCheck(args[0], st->device_type) ? Py_NewRef(args[0])
                                                         : device_make(st, type, index);
}

static PyMethodDef device_module_methods[] = {
    {"_cpu_device", (PyCFunction)(void (*)(void))module_cpu_device, METH_FASTCALL,
     "_cpu_device(device, fn): the pith.device of a CPU device= argument (None for None); "
     "other devices raise, naming fn."},
    {NULL},
};

int device_type_init(PyObject *module, pith_module_state *st)
{
    st->device_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &device_spec, NULL);
    if (!st->device_type || PyModule_AddType(module, st->device_type) < 0 ||
        PyModule_AddFunctions(module, device_module_methods) < 0)
        return -1;
    const int cached[2] = {DEV_CPU, DEV_META};
    for (int i = 0; i < 2; i++) {
        pith_device_object *d = PyObject_New(pith_device_object, st->device_type);
        if (!d)
            return -1;
        d->type = cached[i];
        d->index = -1;
        st->devices[i] = (PyObject *)d;
    }
    return 0;
}
