/* graph.c — building graphs: stand-ins, pith_graph_call over them, and outputs.
 *
 * Note [Stand-ins]
 * A graph value is represented to the caller by a stand-in: a Meta tensor with the value's
 * sizes, strides and dtype, so that a graph is built with the boxed convention and every
 * node's shape comes from its op's Meta kernel.
 *  - Every stand-in's storage is one this file made (standin_storage_new): its deleter is
 *    standin_storage_free and its ctx a standin_ctx naming the graph (by a graph_ident,
 *    which holds a serial number and outlives the graph) and the root value that owns the
 *    storage. A Meta kernel's fresh result gets such a storage before it is handed out; a
 *    view made by a Meta kernel shares its base's storage, and so its ctx.
 *  - So a tensor is recognised as a stand-in by its storage's deleter, as one of this
 *    graph by the ident (a serial number, never an address: a freed graph's memory may be
 *    reused by the next one), and as a particular value by the graph's pointer map, which
 *    holds a reference to every stand-in it made, so no address in it is reused while the
 *    graph lives. A Meta tensor made from a stand-in outside pith_graph_call shares the
 *    storage but is not in the map: that is an error that says so.
 *  - A 0-dim wrapped number among the arguments (what Python's `x * 0.5` becomes) is a
 *    constant, copied by value. Any other tensor is PITH_ERR_VALUE, pointing at
 *    pith_graph_param.
 *  - The Meta kernels run with Meta included and Python and PythonMode excluded (ops
 *    without a tensor argument, such as `ones`, would otherwise land on CPU and allocate;
 *    a mode must not see stand-ins).
 *  - Stand-ins never carry data: pith_compiled_run refuses Meta tensors. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/graph_internal.h"
#include "dispatch/keys.h"
#include "kernels/ops_internal.h"

static atomic_uint_fast64_t next_graph_serial = 1;

static void ident_release(graph_ident *id)
{
    if (id && atomic_fetch_sub_explicit(&id->refcount, 1, memory_order_acq_rel) == 1)
        free(id);
}

static void standin_storage_free(void *data, void *ctx)
{
    (void)data;
    standin_ctx *c = ctx;
    ident_release(c->ident);
    free(c);
}

bool standin_of(const pith_tensor *t, const graph_ident **ident, int *root)
{
    if (!t || t->device != PITH_META || t->storage->deleter != standin_storage_free)
        return false;
    const standin_ctx *c = t->storage->ctx;
    *ident = c->ident;
    *root = c->root;
    return true;
}

static pith_storage *standin_storage_new(pith_graph *g, size_t nbytes, int root)
{
    standin_ctx *c = malloc(sizeof *c);
    if (!c)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "pith_graph: out of memory");
    c->ident = g->ident;
    c->root = root;
    pith_storage *s = storage_from_blob(NULL, nbytes, standin_storage_free, c);
    if (!s) {
        free(c);
        return NULL;
    }
    atomic_fetch_add_explicit(&g->ident->refcount, 1, memory_order_relaxed);
    return s;
}

const char *gvalue_kind_name(gval_kind k)
{
    switch (k) {
    case GVAL_INPUT:
        return "input";
    case GVAL_PARAM:
        return "param";
    case GVAL_CONST:
        return "const";
    case GVAL_RESULT:
        break;
    }
    return "result";
}

/* ---- growth and the pointer map ---- */

static bool grow(void **data, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*data, n * elem);
    if (!p) {
        pith_set_error(PITH_ERR_NOMEM, "pith_graph: out of memory");
        return false;
    }
    *data = p;
    *cap = n;
    return true;
}

static size_t map_slot(const pith_tensor *t, size_t cap)
{
    uintptr_t h = (uintptr_t)t;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (cap - 1);
}

static int map_find(const pith_graph *g, const pith_tensor *t)
{
    if (!g->map_cap)
        return -1;
    for (size_t i = map_slot(t, g->map_cap);; i = (i + 1) & (g->map_cap - 1)) {
        if (g->map[i].key == t)
            return g->map[i].value;
        if (!g->map[i].key)
            return -1;
    }
}

static bool map_put(pith_graph *g, const pith_tensor *t, int value)
{
    if ((g->map_used + 1) * 2 > g->map_cap) {
        size_t cap = g->map_cap ? g->map_cap * 2 : 64;
        __typeof__(g->map) m = calloc(cap, sizeof *m);
        if (!m) {
            pith_set_error(PITH_ERR_NOMEM, "pith_graph: out of memory");
            return false;
        }
        for (size_t i = 0; i < g->map_cap; i++)
            if (g->map[i].key) {
                size_t j = map_slot(g->map[i].key, cap);
                while (m[j].key)
                    j = (j + 1) & (cap - 1);
                m[j] = g->map[i];
            }
        free(g->map);
        g->map = m;
        g->map_cap = cap;
    }
    size_t i = map_slot(t, g->map_cap);
    while (g->map[i].key && g->map[i].key != t)
        i = (i + 1) & (g->map_cap - 1);
    if (!g->map[i].key)
        g->map_used++;
    g->map[i].key = t;
    g->map[i].value = value;
    return true;
}

/* Appends a value holding `t` (a reference the graph takes over). */
static int value_add(pith_graph *g, gval_kind kind, pith_tensor *t, int root)
{
    if (!grow((void **)&g->values, &g->cap_values, g->nvalues + 1, sizeof *g->values)) {
        pith_release(t);
        return -1;
    }
    size_t cap = g->cap_values;
    int64_t *versions = realloc(g->root_version, cap * sizeof *versions);
    if (!versions) {
        pith_release(t);
        pith_set_error(PITH_ERR_NOMEM, "pith_graph: out of memory");
        return -1;
    }
    g->root_version = versions;
    int id = (int)g->nvalues;
    if (kind != GVAL_CONST && !map_put(g, t, id)) {
        pith_release(t);
        return -1;
    }
    g->values[id] = (gvalue){kind, 0, -1, root < 0 ? id : root, t, NULL};
    g->root_version[id] = 0;
    g->nvalues++;
    return id;
}

/* ---- lifetime ---- */

pith_graph *pith_graph_new(void)
{
    pith_graph *g = calloc(1, sizeof *g);
    graph_ident *id = malloc(sizeof *id);
    if (!g || !id) {
        free(g);
        free(id);
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "pith_graph_new: out of memory");
    }
    atomic_init(&id->refcount, 1);
    atomic_init(&id->alive, true);
    id->serial = atomic_fetch_add(&next_graph_serial, 1);
    g->ident = id;
    return g;
}

static void node_clear(gnode *n)
{
    for (size_t i = 0; i < n->nargs; i++)
        value_clear(&n->args[i]);
    free(n->args);
    free(n->refs);
    free(n->results);
    free(n->mutated);
}

void pith_graph_free(pith_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nnodes; i++)
        node_clear(&g->nodes[i]);
    for (size_t i = 0; i < g->nvalues; i++) {
        pith_release(g->values[i].t);
        pith_release(g->values[i].held);
    }
    atomic_store(&g->ident->alive, false);
    ident_release(g->ident);
    free(g->nodes);
    free(g->values);
    free(g->root_version);
    free(g->inputs);
    free(g->outputs);
    free(g->map);
    free(g);
}

/* ---- inputs and params ---- */

/* A stand-in with `t`'s geometry over a new stand-in storage of `nbytes` for value `id`. */
static pith_tensor *standin_new(pith_graph *g, int ndim, const int64_t *sizes,
                                const int64_t *strides, int64_t offset, pith_dtype dtype,
                                size_t nbytes, int id)
{
    pith_storage *s = standin_storage_new(g, nbytes, id);
    if (!s)
        return NULL;
    pith_tensor *t = tensor_from_storage(s, ndim, sizes, strides, offset, dtype, PITH_META);
    storage_release(s);
    return t;
}

pith_tensor *pith_graph_input(pith_graph *g, pith_dtype dtype, int ndim, const int64_t *sizes,
                              const int64_t *strides)
{
    if (!g)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_graph_input: the graph is NULL");
    size_t nbytes;
    if (!tensor_geometry_check("pith_graph_input", ndim, sizes, strides, dtype, PITH_META,
                               &nbytes))
        return NULL;
    if (!grow((void **)&g->inputs, &g->cap_inputs, g->ninputs + 1, sizeof *g->inputs))
        return NULL;
    pith_tensor *t = standin_new(g, ndim, sizes, strides, 0, dtype, nbytes, (int)g->nvalues);
    if (!t)
        return NULL;
    int id = value_add(g, GVAL_INPUT, t, -1);
    if (id < 0)
        return NULL;
    g->values[id].index = (int)g->ninputs;
    g->inputs[g->ninputs++] = id;
    pith_retain(t);
    return t;
}

pith_tensor *pith_graph_param(pith_graph *g, pith_tensor *t)
{
    if (!g)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_graph_param: the graph is NULL");
    if (!t)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_graph_param: the tensor is NULL");
    const graph_ident *ident;
    int root;
    if (standin_of(t, &ident, &root))
        return PITH_FAIL_NULL(PITH_ERR_VALUE,
                              "pith_graph_param: the tensor is a stand-in (a graph value), "
                              "not a tensor with data");
    if (t->device != PITH_CPU || !(t->keys & TENSOR_KEY_CPU))
        return PITH_FAIL_NULL(PITH_ERR_VALUE,
                              "pith_graph_param: a param must be a CPU tensor with data; "
                              "this one is on %s",
                              t->device == PITH_META ? "meta" : "another device");
    if (t->keys & TENSOR_KEY_PYTHON)
        return PITH_FAIL_NULL(PITH_ERR_VALUE,
                              "pith_graph_param: the tensor has the Python key (a subclass "
                              "that sees every op); a compiled graph would bypass its "
                              "__pith_dispatch__");
    pith_tensor *s = standin_new(g, t->ndim, t->sizes, t->strides, t->offset, t->dtype,
                                 t->storage->nbytes, (int)g->nvalues);
    if (!s)
        return NULL;
    int id = value_add(g, GVAL_PARAM, s, -1);
    if (id < 0)
        return NULL;
    pith_retain(t);
    g->values[id].held = t;
    g->values[id].index = g->nparams++;
    pith_retain(s);
    return s;
}

pith_status pith_graph_output(pith_graph *g, const pith_tensor *value)
{
    if (!g)
        return pith_set_error(PITH_ERR_VALUE, "pith_graph_output: the graph is NULL");
    if (!value)
        return pith_set_error(PITH_ERR_VALUE, "pith_graph_output: the value is NULL");
    const graph_ident *ident;
    int root;
    if (!standin_of(value, &ident, &root))
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_graph_output: the tensor is not a stand-in of this graph "
                              "(an output must be a value that pith_graph_input, "
                              "pith_graph_param or pith_graph_call returned)");
    if (ident != g->ident)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_graph_output: the tensor is a stand-in of %s graph #%" PRIu64
                              ", not of this one (#%" PRIu64 ")",
                              atomic_load(&ident->alive) ? "another" : "a freed",
                              ident->serial, g->ident->serial);
    int id = map_find(g, value);
    if (id < 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_graph_output: the tensor was made from a stand-in outside "
                              "the graph; make it with pith_graph_call");
    if (!grow((void **)&g->outputs, &g->cap_outputs, g->noutputs + 1, sizeof *g->outputs))
        return pith_last_status();
    g->outputs[g->noutputs++] = id;
    return PITH_OK;
}

/* ---- calls ---- */

/* The value of tensor argument `t` (entry `entry` of argument `arg`, -1 for none), making
 * a constant for a wrapped number. */
static int arg_value(pith_graph *g, const pith_op *op, size_t arg, long entry,
                     const pith_tensor *t)
{
    /* the argument, for messages: formatted on the error paths only (a recompile records
     * thousands of arguments) */
    const char *name = op->schema.args[arg].name;
    char where[96];
#define ARG_WHERE()                                                                          \
    (entry >= 0 ? snprintf(where, sizeof where, "'%s'[%ld]", name, entry)                   \
                : snprintf(where, sizeof where, "'%s'", name))
    const graph_ident *ident;
    int root;
    if (standin_of(t, &ident, &root)) {
        if (ident != g->ident)
            return ARG_WHERE(), pith_set_error(PITH_ERR_VALUE,
                                  "pith_graph_call: %s: argument %s is a stand-in of %s graph "
                                  "#%" PRIu64 ", not of this one (#%" PRIu64 ")",
                                  op_display_name(op), where,
                                  atomic_load(&ident->alive) ? "another" : "a freed",
                                  ident->serial, g->ident->serial),
                   -1;
        int id = map_find(g, t);
        if (id < 0)
            return ARG_WHERE(), pith_set_error(PITH_ERR_VALUE,
                                  "pith_graph_call: %s: argument %s was made from a stand-in "
                                  "outside the graph; make it with pith_graph_call",
                                  op_display_name(op), where),
                   -1;
        return id;
    }
    if ((t->flags & PITH_TENSOR_WRAPPED_NUMBER) && t->ndim == 0 && t->device == PITH_CPU &&
        !(t->keys & TENSOR_KEY_PYTHON)) {
        pith_tensor *c = tensor_new(0, NULL, t->dtype, PITH_CPU);
        if (!c)
            return -1;
        memcpy(tensor_data(c), tensor_data(t), dtype_itemsize(t->dtype));
        c->flags |= PITH_TENSOR_WRAPPED_NUMBER;
        return value_add(g, GVAL_CONST, c, -1);
    }
    ARG_WHERE();
#undef ARG_WHERE
    return pith_set_error(PITH_ERR_VALUE,
                          "pith_graph_call: %s: argument %s is a tensor that is not a stand-in "
                          "of this graph; hold tensors with data through pith_graph_param",
                          op_display_name(op), where),
           -1;
}

static bool refs_add(gnode *n, size_t *cap, int arg, int entry, int value, int64_t version)
{
    if (!grow((void **)&n->refs, cap, n->nrefs + 1, sizeof *n->refs))
        return false;
    n->refs[n->nrefs++] = (gref){arg, entry, value, version};
    return true;
}

/* The node's arguments: copies of the stack's values, with each tensor replaced by the
 * graph's tensor of its value (the stand-in, or the constant). */
static pith_status node_args(pith_graph *g, gnode *n, const pith_stack *stack)
{
    const pith_op *op = n->op;
    size_t cap = 0;
    n->nargs = stack->size;
    n->args = calloc(n->nargs ? n->nargs : 1, sizeof *n->args);
    if (!n->args)
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_call: out of memory");
    for (size_t i = 0; i < n->nargs; i++) {
        const pith_value *v = stack_at(stack, i);
        if (value_copy(v, &n->args[i]) != PITH_OK)
            return pith_last_status();
        pith_value *a = &n->args[i];
        if (a->kind == PITH_VALUE_TENSOR) {
            int id = arg_value(g, op, i, -1, a->u.t);
            if (id < 0)
                return pith_last_status();
            pith_release(a->u.t);
            a->u.t = g->values[id].t;
            pith_retain(a->u.t);
            if (!refs_add(n, &cap, (int)i, -1, id, g->root_version[g->values[id].root]))
                return pith_last_status();
        } else if (a->kind == PITH_VALUE_TENSOR_LIST) {
            for (size_t j = 0; j < a->u.tensors.n; j++) {
                if (!a->u.tensors.data[j])
                    continue;
                int id = arg_value(g, op, i, (long)j, a->u.tensors.data[j]);
                if (id < 0)
                    return pith_last_status();
                pith_release(a->u.tensors.data[j]);
                a->u.tensors.data[j] = g->values[id].t;
                pith_retain(a->u.tensors.data[j]);
                if (!refs_add(n, &cap, (int)i, (int)j, id,
                              g->root_version[g->values[id].root]))
                    return pith_last_status();
            }
        }
    }
    return PITH_OK;
}

static bool op_has_generator(const pith_op *op)
{
    for (size_t i = 0; i < op->schema.nargs; i++)
        if (op->schema.args[i].type == PITH_TYPE_OPT_GENERATOR)
            return true;
    return false;
}

/* The value of one result tensor `r` of node `n` (its index-th result): an argument's own
 * value when the op returned it (in place, out=, or a no-op such as contiguous of a
 * contiguous tensor), a view of an argument's root when it shares a stand-in storage, or
 * a new root. `r` is borrowed. */
static int result_value(pith_graph *g, int node, size_t index, pith_tensor *r)
{
    int id = map_find(g, r);
    if (id >= 0)
        return id;
    const graph_ident *ident;
    int root;
    if (standin_of(r, &ident, &root)) {
        if (ident != g->ident)
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "pith_graph_call: a Meta kernel returned a stand-in of "
                                  "another graph"),
                   -1;
        pith_retain(r);
        id = value_add(g, GVAL_RESULT, r, g->values[root].root);
    } else {
        if (r->device != PITH_META)
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "pith_graph_call: %s's Meta kernel returned a tensor with "
                                  "data",
                                  op_display_name(g->nodes[node].op)),
                   -1;
        pith_tensor *s = standin_new(g, r->ndim, r->sizes, r->strides, r->offset, r->dtype,
                                     r->storage->nbytes, (int)g->nvalues);
        if (!s)
            return -1;
        id = value_add(g, GVAL_RESULT, s, -1);
    }
    if (id >= 0) {
        g->values[id].node = node;
        g->values[id].index = (int)index;
    }
    return id;
}

/* Records node `n`'s results from the stack (which holds exactly them) and replaces each
 * tensor on it by its value's stand-in. */
static pith_status node_results(pith_graph *g, int node, pith_stack *stack)
{
    gnode *n = &g->nodes[node];
    size_t count = 0;
    for (size_t r = 0; r < stack->size; r++) {
        const pith_value *v = stack_at(stack, r);
        count += v->kind == PITH_VALUE_TENSOR_LIST ? v->u.tensors.n : 1;
    }
    n->results = malloc((count ? count : 1) * sizeof *n->results);
    if (!n->results)
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_call: out of memory");
    for (size_t r = 0; r < stack->size && r < PITH_MAX_RETURNS; r++) {
        pith_value *v = stack_at(stack, r);
        if (v->kind == PITH_VALUE_TENSOR) {
            n->nlist[r] = -1;
            int id = result_value(g, node, n->nresults, v->u.t);
            if (id < 0)
                return pith_last_status();
            n = &g->nodes[node];
            n->results[n->nresults++] = id;
            pith_release(v->u.t);
            v->u.t = g->values[id].t;
            pith_retain(v->u.t);
        } else if (v->kind == PITH_VALUE_TENSOR_LIST) {
            n->nlist[r] = (int)v->u.tensors.n;
            for (size_t j = 0; j < v->u.tensors.n; j++) {
                int id = result_value(g, node, n->nresults, v->u.tensors.data[j]);
                if (id < 0)
                    return pith_last_status();
                n = &g->nodes[node];
                n->results[n->nresults++] = id;
                pith_release(v->u.tensors.data[j]);
                v->u.tensors.data[j] = g->values[id].t;
                pith_retain(v->u.tensors.data[j]);
            }
        } else {
            return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                                  "pith_graph_call: %s returns a %s; graphs take ops that "
                                  "return tensors",
                                  op_display_name(n->op), value_kind_name(v->kind));
        }
    }
    return PITH_OK;
}

/* The effects of node `n` (See Note [Effects] in passes.c), and the values it mutates. */
static pith_status node_effects(pith_graph *g, gnode *n)
{
    const pith_schema *schema = &n->op->schema;
    if (op_has_generator(n->op))
        n->effects |= EFFECT_RANDOM;
    for (size_t k = 0; k < n->nrefs; k++) {
        const pith_schema_arg *a = &schema->args[n->refs[k].arg];
        if (!a->is_mutable)
            continue;
        const gvalue *v = &g->values[n->refs[k].value];
        if (v->kind == GVAL_CONST)
            return pith_set_error(PITH_ERR_VALUE,
                                  "pith_graph_call: %s would write argument '%s', a constant "
                                  "(wrapped number); write a graph value instead",
                                  op_display_name(n->op), a->name);
        n->effects |= EFFECT_MUTATES | (a->kwarg_only ? EFFECT_OUT : 0);
        int *m = realloc(n->mutated, (n->nmutated + 1) * sizeof *m);
        if (!m)
            return pith_set_error(PITH_ERR_NOMEM, "pith_graph_call: out of memory");
        n->mutated = m;
        n->mutated[n->nmutated++] = n->refs[k].value;
    }
    return PITH_OK;
}

/* Snapshot of the mutable arguments' geometry: an out= of the wrong size would be resized
 * by its Meta kernel, which a graph value cannot follow. */
typedef struct {
    const pith_tensor *t;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
} geometry_snapshot;

/* Fills `call`, the call's own stack, with the arguments on `stack` (copies) and the
 * defaults of the rest, and checks each against op's schema. */
static pith_status call_stack_build(const pith_op *op, const pith_stack *stack,
                                    pith_stack *call)
{
    const pith_schema *schema = &op->schema;
    pith_status status = PITH_OK;
    for (size_t i = 0; i < stack->size && status == PITH_OK; i++) {
        pith_value v;
        status = value_copy(stack_at(stack, i), &v);
        if (status == PITH_OK)
            status = stack_push_value(call, v);
    }
    for (size_t i = stack->size; i < schema->nargs && status == PITH_OK; i++) {
        if (!schema->args[i].has_default)
            status = pith_set_error(PITH_ERR_VALUE,
                                    "%s: missing argument '%s' (position %zu)",
                                    op_display_name(op), schema->args[i].name, i + 1);
        else
            status = pith_op_push_default(op, (int)i, call);
    }
    for (size_t i = 0; i < call->size && status == PITH_OK; i++)
        status = arg_check(op, i, stack_at(call, i));
    return status;
}

/* Replaces the arguments on `call` by node `n`'s, which hold the graph's own stand-ins. */
static pith_status call_args_standins(const gnode *n, pith_stack *call)
{
    for (size_t i = 0; i < call->size; i++) {
        value_clear(stack_at(call, i));
        if (value_copy(&n->args[i], stack_at(call, i)) != PITH_OK)
            return pith_last_status();
    }
    return PITH_OK;
}

/* Runs node `n`'s Meta kernel on `call`, and checks that it resized no tensor it writes. */
static pith_status node_meta_run(const pith_graph *g, const gnode *n, pith_stack *call)
{
    const pith_op *op = n->op;
    const pith_schema *schema = &op->schema;
    geometry_snapshot snap[PITH_MAX_RETURNS];
    size_t nsnap = 0;
    for (size_t k = 0; k < n->nrefs && nsnap < PITH_MAX_RETURNS; k++)
        if (schema->args[n->refs[k].arg].is_mutable) {
            const pith_tensor *t = g->values[n->refs[k].value].t;
            snap[nsnap].t = t;
            snap[nsnap].ndim = t->ndim;
            memcpy(snap[nsnap].sizes, t->sizes, sizeof t->sizes);
            memcpy(snap[nsnap].strides, t->strides, sizeof t->strides);
            nsnap++;
        }
    pith_tls_keys *tls = tls_keys();
    pith_tls_keys saved = *tls;
    tls->included |= PITH_KEYSET(PITH_KEY_META);
    tls->excluded |= PITH_KEYSET(PITH_KEY_PYTHON) | PITH_KEYSET(PITH_KEY_PYTHON_MODE);
    tls->excluded &= ~PITH_KEYSET(PITH_KEY_META);
    pith_status status = pith_call_boxed(op, call);
    *tls = saved;
    for (size_t k = 0; k < nsnap && status == PITH_OK; k++)
        if (!shape_equal(snap[k].t->ndim, snap[k].t->sizes, snap[k].ndim, snap[k].sizes) ||
            memcmp(snap[k].t->strides, snap[k].strides,
                   (size_t)snap[k].ndim * sizeof(int64_t)) != 0)
            status = pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                                    "pith_graph_call: %s resized a tensor it writes (an out= "
                                    "of the wrong shape); a graph value keeps its shape, so "
                                    "pass an out= of the result's shape",
                                    op_display_name(op));
    return status;
}

/* Hands the results on `call` back on `stack`, in place of the arguments. */
static pith_status call_results_return(pith_stack *stack, pith_stack *call)
{
    pith_status status = PITH_OK;
    pith_stack_drop(stack, stack->size);
    for (size_t i = 0; i < call->size && status == PITH_OK; i++) {
        status = stack_push_value(stack, *stack_at(call, i));
        stack_at(call, i)->kind = PITH_VALUE_NONE;
    }
    return status;
}

pith_status pith_graph_call(pith_graph *g, const pith_op *op, pith_stack *stack)
{
    if (!g)
        return pith_set_error(PITH_ERR_VALUE, "pith_graph_call: the graph is NULL");
    if (!op)
        return pith_set_error(PITH_ERR_VALUE, "pith_graph_call: the operator is NULL");
    if (!stack)
        return pith_set_error(PITH_ERR_VALUE, "pith_graph_call: the stack is NULL");
    if (stack->size > op->schema.nargs)
        return pith_set_error(PITH_ERR_VALUE, "%s: expected at most %zu arguments, got %zu",
                              op_display_name(op), op->schema.nargs, stack->size);
    pith_stack call = {0}; /* the arguments with their defaults */
    pith_status status = call_stack_build(op, stack, &call);
    if (status != PITH_OK)
        goto done;
    if (!grow((void **)&g->nodes, &g->cap_nodes, g->nnodes + 1, sizeof *g->nodes)) {
        status = pith_last_status();
        goto done;
    }
    int node = (int)g->nnodes;
    gnode *n = &g->nodes[node];
    memset(n, 0, sizeof *n);
    n->op = op;
    status = node_args(g, n, &call);
    if (status == PITH_OK)
        status = node_effects(g, n);
    if (status == PITH_OK)
        status = call_args_standins(n, &call);
    if (status == PITH_OK)
        status = node_meta_run(g, n, &call);
    if (status != PITH_OK) {
        node_clear(n);
        goto done;
    }
    g->nnodes++;
    status = node_results(g, node, &call);
    if (status != PITH_OK) {
        /* The node stays, with the results recorded so far: the graph remains valid. */
        goto done;
    }
    n = &g->nodes[node];
    for (size_t k = 0; k < n->nmutated; k++)
        g->root_version[g->values[n->mutated[k]].root]++;
    status = call_results_return(stack, &call);
done:
    pith_stack_drop(&call, call.size);
    free(call.values);
    return status;
}
