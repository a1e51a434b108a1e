/* executor.c — running a compiled graph: arenas (See Note [Arenas] in passes.c), input
 * checks, and the steps, each a typed kernel called directly (compile/invoke.c) or, for
 * a kernel with no typed entry (a custom op's C or Python kernel), called boxed. A Python
 * kernel takes its interpreter's GIL itself, through the interpreter table. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compile/graph_internal.h"
#include "core/parallel.h"
#include "dispatch/keys.h"

struct arena_ctx {
    pith_storage *arena;       /* NULL when no intermediate lives in the arena */
    pith_storage *placeholder; /* what rebound headers point at between runs */
    pith_tensor **slot;        /* per value */
    pith_value **args;         /* per step: its arguments, tensors borrowed from slot */
    pith_stack stack;          /* for boxed calls */
    unsigned char *scratch;    /* tile buffers of fused groups: scratch_bytes per thread */
    int scratch_threads;
};

static void ctx_free(const pith_compiled *c, arena_ctx *x)
{
    if (!x)
        return;
    if (x->slot)
        for (size_t v = 0; v < c->nvalues; v++)
            if (c->values[v].slot == SLOT_STATIC || c->values[v].slot == SLOT_REBOUND)
                pith_release(x->slot[v]);
    if (x->args)
        for (size_t s = 0; s < c->nsteps; s++) {
            if (!x->args[s])
                continue;
            for (size_t i = 0; i < c->steps[s].nargs; i++)
                if (x->args[s][i].kind == PITH_VALUE_TENSOR_LIST)
                    free(x->args[s][i].u.tensors.data);
            free(x->args[s]);
        }
    pith_stack_drop(&x->stack, x->stack.size);
    free(x->stack.values);
    free(x->args);
    free(x->slot);
    storage_release(x->arena);
    storage_release(x->placeholder);
    free(x->scratch);
    free(x);
}

static arena_ctx *ctx_new(const pith_compiled *c)
{
    arena_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "pith_compiled_run: out of memory");
    x->slot = calloc(c->nvalues ? c->nvalues : 1, sizeof *x->slot);
    x->args = calloc(c->nsteps ? c->nsteps : 1, sizeof *x->args);
    if (!x->slot || !x->args)
        goto nomem;
    if (c->arena_bytes && !(x->arena = storage_new(c->arena_bytes, PITH_CPU)))
        goto fail;
    if (!(x->placeholder = storage_from_blob(NULL, (size_t)INT64_MAX, NULL, NULL)))
        goto fail;
    if (c->scratch_bytes) {
        /* One set of tile buffers per thread that a group's region may use (See Note
         * [Fusion tiles] in fusion.c); a region never has more threads than this. */
        x->scratch_threads = parallel_threads_for(INT64_MAX / 2);
        if (x->scratch_threads < 1)
            x->scratch_threads = 1;
        x->scratch = aligned_alloc(64, c->scratch_bytes * (size_t)x->scratch_threads);
        if (!x->scratch)
            goto nomem;
    }
    /* Value ids grow in the order values were made, so a root comes before its views. */
    for (size_t v = 0; v < c->nvalues; v++) {
        const cvalue *cv = &c->values[v];
        const pith_tensor *m = cv->meta;
        if (cv->slot == SLOT_EXTERNAL) {
            x->slot[v] = cv->ext;
        } else if (cv->slot == SLOT_STATIC && cv->root == (int)v) {
            int64_t offset = (int64_t)(c->buffers[cv->buffer].offset / dtype_itemsize(m->dtype)) +
                             m->offset;
            x->slot[v] = tensor_from_storage(x->arena, m->ndim, m->sizes, m->strides, offset,
                                             m->dtype, PITH_CPU);
            if (!x->slot[v])
                goto fail;
        } else if (cv->slot == SLOT_STATIC) {
            const pith_tensor *base = x->slot[cv->root];
            x->slot[v] = tensor_from_storage(base->storage, m->ndim, m->sizes, m->strides,
                                             base->offset + cv->delta, m->dtype, PITH_CPU);
            if (!x->slot[v])
                goto fail;
        } else if (cv->slot == SLOT_REBOUND) {
            x->slot[v] = tensor_from_storage(x->placeholder, m->ndim, m->sizes, m->strides, 0,
                                             m->dtype, PITH_CPU);
            if (!x->slot[v])
                goto fail;
        }
    }
    for (size_t s = 0; s < c->nsteps; s++) {
        const cstep *st = &c->steps[s];
        x->args[s] = calloc(st->nargs ? st->nargs : 1, sizeof **x->args);
        if (!x->args[s])
            goto nomem;
        for (size_t i = 0; i < st->nargs; i++) {
            x->args[s][i] = st->args[i];
            if (st->args[i].kind == PITH_VALUE_TENSOR_LIST) {
                size_t n = st->args[i].u.tensors.n;
                x->args[s][i].u.tensors.data = calloc(n ? n : 1, sizeof(pith_tensor *));
                if (!x->args[s][i].u.tensors.data) {
                    x->args[s][i].kind = PITH_VALUE_NONE;
                    goto nomem;
                }
            }
        }
    }
    return x;
nomem:
    pith_set_error(PITH_ERR_NOMEM, "pith_compiled_run: out of memory");
fail:
    ctx_free(c, x);
    return NULL;
}

pith_status compiled_prepare_pool(pith_compiled *c)
{
    c->npool = c->opts.arena_pool;
    c->pool = calloc((size_t)c->npool, sizeof *c->pool);
    if (!c->pool)
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    arena_ctx *x = ctx_new(c);
    if (!x)
        return error_prefix("pith_graph_compile");
    atomic_store(&c->pool[0], x);
    return PITH_OK;
}

static arena_ctx *pool_take(pith_compiled *c)
{
    for (int i = 0; i < c->npool; i++) {
        arena_ctx *x = atomic_exchange_explicit(&c->pool[i], NULL, memory_order_acquire);
        if (x)
            return x;
    }
    return ctx_new(c);
}

static void pool_put(pith_compiled *c, arena_ctx *x)
{
    for (int i = 0; i < c->npool; i++) {
        arena_ctx *expected = NULL;
        if (atomic_compare_exchange_strong_explicit(&c->pool[i], &expected, x,
                                                    memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
    ctx_free(c, x);
}

void cstep_clear(cstep *st)
{
    if (st->args)
        for (size_t i = 0; i < st->nargs; i++)
            value_clear(&st->args[i]);
    free(st->args);
    free(st->refs);
    free(st->results);
    cgroup_free(st->group);
    memset(st, 0, sizeof *st);
}

void compiled_destroy(pith_compiled *c)
{
    if (!c)
        return;
    if (c->pool)
        for (int i = 0; i < c->npool; i++)
            ctx_free(c, atomic_load(&c->pool[i]));
    free(c->pool);
    if (c->steps)
        for (size_t s = 0; s < c->nsteps; s++)
            cstep_clear(&c->steps[s]);
    free(c->steps);
    if (c->values)
        for (size_t v = 0; v < c->nvalues; v++) {
            pith_release(c->values[v].meta);
            pith_release(c->values[v].ext);
        }
    free(c->values);
    free(c->buffers);
    free(c->inputs);
    free(c->outputs);
    free(c->removed);
    free(c);
}

void pith_compiled_free(pith_compiled *c)
{
    compiled_destroy(c);
}

int pith_compiled_num_inputs(const pith_compiled *c)
{
    if (!c)
        return pith_set_error(PITH_ERR_VALUE, "pith_compiled_num_inputs: NULL"), -1;
    return (int)c->ninputs;
}

int pith_compiled_num_outputs(const pith_compiled *c)
{
    if (!c)
        return pith_set_error(PITH_ERR_VALUE, "pith_compiled_num_outputs: NULL"), -1;
    return (int)c->noutputs;
}

size_t pith_compiled_arena_bytes(const pith_compiled *c)
{
    return c ? c->arena_bytes : 0;
}

size_t pith_compiled_intermediate_bytes(const pith_compiled *c)
{
    return c ? c->intermediate_bytes : 0;
}

/* ---- a run ---- */

static pith_status check_input(const pith_compiled *c, int i, const pith_tensor *t)
{
    const pith_tensor *m = c->values[c->inputs[i]].meta;
    char have[256], want[256];
    const graph_ident *ident;
    int root;
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_compiled_run: input %d is NULL", i);
    if (standin_of(t, &ident, &root))
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: input %d is a stand-in (a graph value), "
                              "which has no data",
                              i);
    if (t->device != PITH_CPU)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: input %d is a Meta tensor, which has no data",
                              i);
    if (t->keys & TENSOR_KEY_PYTHON)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: input %d has the Python key (a subclass that "
                              "sees every op); a compiled graph would bypass its "
                              "__pith_dispatch__",
                              i);
    if (t->dtype != m->dtype)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: input %d has dtype %s, but the graph was "
                              "built for %s",
                              i, pith_dtype_name(t->dtype), pith_dtype_name(m->dtype));
    if (!shape_equal(t->ndim, t->sizes, m->ndim, m->sizes))
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: input %d has sizes %s, but the graph was "
                              "built for %s",
                              i, shape_format(t->ndim, t->sizes, have, sizeof have),
                              shape_format(m->ndim, m->sizes, want, sizeof want));
    for (int d = 0; d < m->ndim; d++)
        if (m->sizes[d] > 1 && t->strides[d] != m->strides[d])
            return pith_set_error(PITH_ERR_VALUE,
                                  "pith_compiled_run: input %d has strides %s, but the graph "
                                  "was built for %s (strides must match where a size is above 1)",
                                  i, shape_format(t->ndim, t->strides, have, sizeof have),
                                  shape_format(m->ndim, m->strides, want, sizeof want));
    return PITH_OK;
}

static void patch(const cstep *st, pith_value *args, pith_tensor *const *slot)
{
    for (size_t k = 0; k < st->nrefs; k++) {
        const gref *r = &st->refs[k];
        if (r->entry < 0)
            args[r->arg].u.t = slot[r->value];
        else
            args[r->arg].u.tensors.data[r->entry] = slot[r->value];
    }
}

/* Takes result tensor `t` of step `s` (an owned reference) for value `v`. */
static void take_result(const pith_compiled *c, arena_ctx *x, int s, int v, pith_tensor *t)
{
    const cvalue *cv = &c->values[v];
    if (cv->def == s && cv->slot == SLOT_RUN && !x->slot[v])
        x->slot[v] = t;
    else
        pith_release(t);
}

/* Distributes the returned values of step `s` (owned) to its result values. */
static pith_status take_results(const pith_compiled *c, arena_ctx *x, int s, pith_value *ret,
                                size_t nret)
{
    const cstep *st = &c->steps[s];
    size_t k = 0;
    for (size_t r = 0; r < nret; r++) {
        pith_value *v = &ret[r];
        if (v->kind == PITH_VALUE_TENSOR) {
            if (k < st->nresults)
                take_result(c, x, s, st->results[k], v->u.t);
            else
                pith_release(v->u.t);
            k++;
            v->kind = PITH_VALUE_NONE;
        } else if (v->kind == PITH_VALUE_TENSOR_LIST) {
            for (size_t j = 0; j < v->u.tensors.n; j++, k++) {
                if (k < st->nresults)
                    take_result(c, x, s, st->results[k], v->u.tensors.data[j]);
                else
                    pith_release(v->u.tensors.data[j]);
                v->u.tensors.data[j] = NULL;
            }
            value_clear(v);
        } else {
            value_clear(v);
        }
    }
    if (k != st->nresults)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "pith_compiled_run: step %d (%s) returned %zu tensors; the graph "
                              "has %zu",
                              s, op_display_name(st->op), k, st->nresults);
    return PITH_OK;
}

static pith_status run_boxed(const pith_compiled *c, arena_ctx *x, int s, const pith_value *args)
{
    const cstep *st = &c->steps[s];
    pith_stack *stack = &x->stack;
    pith_stack_drop(stack, stack->size);
    for (size_t i = 0; i < st->nargs; i++) {
        pith_value v;
        if (value_copy(&args[i], &v) != PITH_OK || stack_push_value(stack, v) != PITH_OK)
            return pith_last_status();
    }
    pith_status status = st->record->boxed(st->op, stack, st->record->ctx);
    if (status != PITH_OK)
        return status;
    size_t n = stack->size < PITH_MAX_RETURNS ? stack->size : PITH_MAX_RETURNS;
    pith_value ret[PITH_MAX_RETURNS];
    for (size_t r = 0; r < n; r++) {
        ret[r] = *stack_at(stack, r);
        stack_at(stack, r)->kind = PITH_VALUE_NONE;
    }
    pith_stack_drop(stack, stack->size);
    return take_results(c, x, s, ret, n);
}

static pith_tensor *alloc_like(const pith_tensor *m)
{
    return tensor_new_strided(m->ndim, m->sizes, m->strides, m->dtype, PITH_CPU);
}

static pith_status run_step(const pith_compiled *c, arena_ctx *x, int s)
{
    const cstep *st = &c->steps[s];
    pith_value *args = x->args[s];
    switch (st->kind) {
    case STEP_VIEW:
        for (size_t r = 0; r < st->nresults; r++) {
            int v = st->results[r];
            const cvalue *cv = &c->values[v];
            if (cv->slot == SLOT_REBOUND) {
                const pith_tensor *base = x->slot[cv->root];
                tensor_rebind_storage(x->slot[v], base->storage, base->offset + cv->delta, base);
            }
        }
        return PITH_OK;
    case STEP_ALLOC:
        for (size_t r = 0; r < st->nresults; r++) {
            int v = st->results[r];
            if (c->values[v].slot == SLOT_RUN && !(x->slot[v] = alloc_like(c->values[v].meta)))
                return pith_last_status();
        }
        return PITH_OK;
    case STEP_OUT: {
        int v = st->results[0];
        if (c->values[v].slot == SLOT_RUN && !(x->slot[v] = alloc_like(c->values[v].meta)))
            return pith_last_status();
        patch(st, args, x->slot);
        pith_value ret[PITH_MAX_RETURNS];
        for (int r = 0; r < PITH_MAX_RETURNS; r++)
            ret[r].kind = PITH_VALUE_NONE;
        pith_status status = st->invoke(st->op, st->fn, PITH_KEYSET(PITH_KEY_CPU), args, ret);
        for (int r = 0; r < PITH_MAX_RETURNS; r++)
            value_clear(&ret[r]);
        return status;
    }
    case STEP_GROUP:
        for (size_t r = 0; r < st->nresults; r++) {
            int v = st->results[r];
            if (c->values[v].slot == SLOT_RUN && !(x->slot[v] = alloc_like(c->values[v].meta)))
                return pith_last_status();
        }
        return group_run(c, st->group, x->slot, x->scratch, x->scratch_threads);
    case STEP_CALL: {
        patch(st, args, x->slot);
        if (!st->invoke)
            return run_boxed(c, x, s, args);
        pith_value ret[PITH_MAX_RETURNS];
        for (int r = 0; r < PITH_MAX_RETURNS; r++)
            ret[r].kind = PITH_VALUE_NONE;
        pith_status status = st->invoke(st->op, st->fn, PITH_KEYSET(PITH_KEY_CPU), args, ret);
        if (status != PITH_OK) {
            for (int r = 0; r < PITH_MAX_RETURNS; r++)
                value_clear(&ret[r]);
            return status;
        }
        return take_results(c, x, s, ret, st->op->schema.nreturns);
    }
    }
    return PITH_OK;
}

/* Puts the arena back as the run found it: per-run tensors released, headers unbound. */
static void run_cleanup(const pith_compiled *c, arena_ctx *x)
{
    for (size_t v = 0; v < c->nvalues; v++) {
        const cvalue *cv = &c->values[v];
        if (cv->slot == SLOT_RUN || cv->slot == SLOT_INPUT) {
            if (cv->slot == SLOT_RUN)
                pith_release(x->slot[v]);
            x->slot[v] = NULL;
        } else if (cv->slot == SLOT_REBOUND && x->slot[v]->storage != x->placeholder) {
            tensor_rebind_storage(x->slot[v], x->placeholder, 0, NULL);
        }
    }
}

pith_status pith_compiled_run(pith_compiled *c, pith_tensor *const *inputs, int ninputs,
                              pith_tensor **outputs, int noutputs)
{
    if (!c)
        return pith_set_error(PITH_ERR_VALUE, "pith_compiled_run: the compiled graph is NULL");
    if (ninputs != (int)c->ninputs)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: the graph takes %zu inputs, got %d",
                              c->ninputs, ninputs);
    if (noutputs != (int)c->noutputs)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: the graph has %zu outputs, room given for %d",
                              c->noutputs, noutputs);
    if ((ninputs && !inputs) || (noutputs && !outputs))
        return pith_set_error(PITH_ERR_VALUE, "pith_compiled_run: the %s array is NULL",
                              ninputs && !inputs ? "inputs" : "outputs");
    for (int i = 0; i < noutputs; i++)
        outputs[i] = NULL;
    for (int i = 0; i < ninputs; i++)
        if (check_input(c, i, inputs[i]) != PITH_OK)
            return pith_last_status();
    pith_tls_keys *tls = tls_keys();
    if ((tls->included & ~tls->excluded) & PITH_KEYSET(PITH_KEY_PYTHON_MODE))
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_compiled_run: a dispatch mode is active on this thread; a "
                              "compiled graph would bypass it");
    arena_ctx *x = pool_take(c);
    if (!x)
        return pith_last_status();
    for (int i = 0; i < ninputs; i++)
        x->slot[c->inputs[i]] = inputs[i];
    pith_tls_keys saved = *tls;
    tls->included = 0;
    tls->excluded |= PITH_KEYSET(PITH_KEY_PYTHON) | PITH_KEYSET(PITH_KEY_PYTHON_MODE);
    pith_status status = PITH_OK;
    for (size_t s = 0; s < c->nsteps && status == PITH_OK; s++) {
        status = run_step(c, x, (int)s);
        if (status != PITH_OK)
            error_prefix("pith_compiled_run: step %zu (%s)", s, op_display_name(c->steps[s].op));
    }
    *tls = saved;
    for (size_t o = 0; o < c->noutputs && status == PITH_OK; o++) {
        int v = c->outputs[o];
        pith_tensor *t = x->slot[v];
        slot_kind k = c->values[v].slot;
        if (!t) {
            status = pith_set_error(PITH_ERR_RUNTIME,
                                    "pith_compiled_run: output %zu has no tensor (a defect of "
                                    "the plan)",
                                    o);
        } else if (k == SLOT_REBOUND || k == SLOT_STATIC) {
            outputs[o] = tensor_view(t, t->ndim, t->sizes, t->strides, t->offset);
            if (!outputs[o])
                status = pith_last_status();
        } else {
            pith_retain(t);
            outputs[o] = t;
        }
    }
    if (status != PITH_OK)
        for (int i = 0; i < noutputs; i++) {
            pith_release(outputs[i]);
            outputs[i] = NULL;
        }
    run_cleanup(c, x);
    pool_put(c, x);
    return status;
}
