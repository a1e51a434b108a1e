/* generator.c — pith.Generator, the Python face of a pith_generator (core/generator.c),
 * and pith.default_generator, the wrapper of the process-wide default one. See Note
 * [Generators] for what the state is.
 *
 * torch's state is a ByteTensor of the Mersenne Twister's words; pith's is a uint8 tensor
 * of 16 bytes (seed, then counter offset, little-endian), so a state from torch is refused
 * with its size named, as torch refuses a state of the wrong size. */
#include <string.h>

#include "binder.h"
#include "state.h"

#define STATE_BYTES 16

static pith_generator *generator_of(PyObject *obj)
{
    return ((pith_generator_object *)obj)->g;
}

int generator_check(pith_module_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, st->generator_type);
}

pith_generator *generator_from_object(PyObject *obj)
{
    return generator_of(obj);
}

/* A wrapper of `g`, which it retains; the default generator's is the module's one. */
PyObject *generator_wrap(pith_module_state *st, pith_generator *g)
{
    if (g == pith_default_generator() && st->default_generator)
        return Py_NewRef(st->default_generator);
    pith_generator_object *obj =
        (pith_generator_object *)st->generator_type->tp_alloc(st->generator_type, 0);
    if (!obj)
        return NULL;
    pith_generator_retain(g);
    obj->g = g;
    return (PyObject *)obj;
}

/* A seed as torch takes one: any int in [-2**63, 2**64), negatives wrapping. */
static int seed_from_object(PyObject *seed, uint64_t *out)
{
    PyObject *index = PyNumber_Index(seed);
    if (!index) {
        PyErr_Format(PyExc_TypeError, "manual_seed expected a long, but got %s",
                     Py_TYPE(seed)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (!overflow && !(v == -1 && PyErr_Occurred())) {
        Py_DECREF(index);
        *out = (uint64_t)v;
        return 0;
    }
    PyErr_Clear();
    unsigned long long u = PyLong_AsUnsignedLongLong(index);
    Py_DECREF(index);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long long");
        return -1;
    }
    *out = u;
    return 0;
}

static PyObject *generator_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"device", NULL};
    PyObject *device = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", kwlist, &device))
        return NULL;
    if (device && device != Py_None) {
        PyObject *text = PyObject_Str(device);
        if (!text)
            return NULL;
        int cpu = PyUnicode_CompareWithASCIIString(text, "cpu") == 0;
        Py_DECREF(text);
        if (!cpu)
            return PyErr_Format(PyExc_RuntimeError,
                                "Generator: pith has only CPU generators, not device %R",
                                device);
    }
    pith_generator *g = pith_generator_new(UINT64_C(67280421310721));
    if (!g)
        return PyErr_NoMemory();
    pith_generator_object *obj = (pith_generator_object *)type->tp_alloc(type, 0);
    if (!obj) {
        pith_generator_release(g);
        return NULL;
    }
    obj->g = g;
    return (PyObject *)obj;
}

static void generator_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    pith_generator_release(generator_of(self));
    type->tp_free(self);
    Py_DECREF(type);
}

static PyObject *generator_manual_seed(PyObject *self, PyObject *seed)
{
    uint64_t s;
    if (seed_from_object(seed, &s) < 0)
        return NULL;
    pith_generator_manual_seed(generator_of(self), s);
    return Py_NewRef(self);
}

static PyObject *generator_seed(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(pith_generator_seed(generator_of(self)));
}

static PyObject *generator_initial_seed(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(pith_generator_initial_seed(generator_of(self)));
}

static void state_encode(uint64_t seed, uint64_t offset, unsigned char bytes[STATE_BYTES])
{
    for (int i = 0; i < 8; i++) {
        bytes[i] = (unsigned char)(seed >> (8 * i));
        bytes[8 + i] = (unsigned char)(offset >> (8 * i));
    }
}

static PyObject *generator_get_state(PyObject *self, PyObject *unused)
{
    (void)unused;
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    uint64_t seed, offset;
    pith_generator_get_state(generator_of(self), &seed, &offset);
    unsigned char bytes[STATE_BYTES];
    state_encode(seed, offset, bytes);
    int64_t n = STATE_BYTES;
    return tensor_wrap(st, pith_from_data(bytes, 1, &n, PITH_UINT8));
}

static PyObject *generator_set_state(PyObject *self, PyObject *state)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    if (!tensor_check(st, state) || pith_tensor_dtype(tensor_of(state)) != PITH_UINT8)
        return PyErr_Format(PyExc_TypeError, "expected a pith.uint8 tensor (a state from "
                            "get_state()), but got %s",
                            tensor_check(st, state) ? "a tensor of another dtype"
                                                    : Py_TYPE(state)->tp_name);
    pith_tensor *t = tensor_of(state);
    if (pith_numel(t) != STATE_BYTES)
        return PyErr_Format(PyExc_RuntimeError, "Expected a generator state of %d bytes, but "
                            "found the input RNG state size to be %lld",
                            STATE_BYTES, (long long)pith_numel(t));
    unsigned char bytes[STATE_BYTES];
    for (int i = 0; i < STATE_BYTES; i++) {
        double v;
        if (pith_item_at(t, i, &v) != PITH_OK)
            return error_raise(st);
        bytes[i] = (unsigned char)v;
    }
    uint64_t seed = 0, offset = 0;
    for (int i = 0; i < 8; i++) {
        seed |= (uint64_t)bytes[i] << (8 * i);
        offset |= (uint64_t)bytes[8 + i] << (8 * i);
    }
    pith_generator_set_state(generator_of(self), seed, offset);
    return Py_NewRef(self);
}

static PyObject *generator_device(PyObject *self, void *closure)
{
    (void)self;
    (void)closure;
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    /* the same object Tensor.device gives for a CPU tensor */
    return device_object(st, PITH_CPU);
}

/* Pickles as (Generator, (), (seed, offset)): a copy with the same state. */
static PyObject *generator_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    uint64_t seed, offset;
    pith_generator_get_state(generator_of(self), &seed, &offset);
    return Py_BuildValue("(O()(KK))", (PyObject *)Py_TYPE(self), (unsigned long long)seed,
                         (unsigned long long)offset);
}

static PyObject *generator_setstate(PyObject *self, PyObject *state)
{
    unsigned long long seed, offset;
    if (!PyArg_ParseTuple(state, "KK:__setstate__", &seed, &offset))
        return NULL;
    pith_generator_set_state(generator_of(self), seed, offset);
    Py_RETURN_NONE;
}

static PyMethodDef generator_methods[] = {
    {"manual_seed", generator_manual_seed, METH_O,
     "manual_seed(seed) -> Generator: sets the seed and restarts the stream."},
    {"seed", generator_seed, METH_NOARGS,
     "seed() -> int: seeds from the operating system's entropy and returns the seed."},
    {"initial_seed", generator_initial_seed, METH_NOARGS, "initial_seed() -> int"},
    {"get_state", generator_get_state, METH_NOARGS,
     "get_state() -> Tensor: the state, a uint8 tensor of 16 bytes."},
    {"set_state", generator_set_state, METH_O,
     "set_state(new_state) -> Generator: restores a state from get_state()."},
    {"__reduce__", generator_reduce, METH_NOARGS, NULL},
    {"__setstate__", generator_setstate, METH_O, NULL},
    {NULL},
};

static PyGetSetDef generator_getset[] = {
    {"device", generator_device, NULL, "The device of the generator (always the CPU).", NULL},
    {NULL},
};

static PyType_Slot generator_slots[] = {
    {Py_tp_new, generator_new},
    {Py_tp_dealloc, generator_dealloc},
    {Py_tp_methods, generator_methods},
    {Py_tp_getset, generator_getset},
    {Py_tp_doc, "Generator(device='cpu'): the state of a random stream. Random ops take one "
                "as generator=; See Note [Generators]."},
    {0, NULL},
};

static PyType_Spec generator_spec = {
    .name = "pith.Generator",
    .basicsize = sizeof(pith_generator_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = generator_slots,
};

static PyObject *module_default_generator_seed(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromUnsignedLongLong(pith_generator_seed(NULL));
}

static PyObject *module_initial_seed(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromUnsignedLongLong(pith_generator_initial_seed(NULL));
}

static PyObject *module_manual_seed(PyObject *module, PyObject *seed)
{
    pith_module_state *st = state_of_module(module);
    uint64_t s;
    if (seed_from_object(seed, &s) < 0)
        return NULL;
    pith_generator_manual_seed(NULL, s);
    return Py_NewRef(st->default_generator);
}

static PyObject *module_get_rng_state(PyObject *module, PyObject *unused)
{
    return generator_get_state(state_of_module(module)->default_generator, unused);
}

static PyObject *module_set_rng_state(PyObject *module, PyObject *state)
{
    PyObject *g = generator_set_state(state_of_module(module)->default_generator, state);
    if (!g)
        return NULL;
    Py_DECREF(g);
    Py_RETURN_NONE;
}

static PyMethodDef generator_module_methods[] = {
    {"manual_seed", module_manual_seed, METH_O,
     "manual_seed(seed) -> Generator: seeds the default generator and returns it."},
    {"get_rng_state", module_get_rng_state, METH_NOARGS,
     "get_rng_state() -> Tensor: the default generator's state."},
    {"set_rng_state", module_set_rng_state, METH_O,
     "set_rng_state(new_state): restores the default generator's state."},
    {"seed", module_default_generator_seed, METH_NOARGS,
     "seed() -> int: seeds the default generator from the operating system's entropy."},
    {"initial_seed", module_initial_seed, METH_NOARGS,
     "initial_seed() -> int: the seed the default generator was last given."},
    {NULL},
};

int generator_type_init(PyObject *module, pith_module_state *st)
{
    st->generator_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &generator_spec, NULL);
    if (!st->generator_type || PyModule_AddType(module, st->generator_type) < 0)
        return -1;
    pith_generator_object *obj =
        (pith_generator_object *)st->generator_type->tp_alloc(st->generator_type, 0);
    if (!obj)
        return -1;
    obj->g = pith_default_generator();
    st->default_generator = (PyObject *)obj;
    if (PyModule_AddObjectRef(module, "default_generator", st->default_generator) < 0)
        return -1;
    return PyModule_AddFunctions(module, generator_module_methods);
}
