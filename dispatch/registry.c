/* registry.c — the operator registry (definitions, names, per-key kernels, per-key
 * fallbacks, fallthrough keys), kernel selection and boxed calls.
 *
 * All state is statically initialised: the built-in ops register from a load-time
 * constructor (ops/register.c), which may run before any other initialiser. See
 * Note [Registry concurrency] in registry.h for the locking rules. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dispatch/registry.h"
#include "pith/dispatch.h"

/* Ops live in chunks that are never moved or freed, so a `const pith_op *` stays valid
 * forever and readers need no lock. */
#define OP_CHUNK 256
#define OP_MAX_CHUNKS 1024

static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static pith_op *op_chunks[OP_MAX_CHUNKS];
static _Atomic size_t op_count;

/* Name index (under the mutex): "ns::name.overload" -> op, and "ns::name" -> the op with
 * an empty overload name, or else the first op registered under that name. */
typedef struct {
    char *key;
    size_t index;
} name_slot;
static name_slot *name_table;
static size_t name_capacity, name_used;

/* Kernel records made by pith_kernel_register, kept reachable after they are unregistered
 * (a reader may still be calling through one; see Note [Registry concurrency]). */
typedef struct record_node {
    pith_kernel_record record;
    struct record_node *next;
} record_node;
static record_node *records_made;

static _Atomic(const pith_kernel_record *) fallbacks[PITH_NUM_KEYS] = {
    [PITH_KEY_PYTHON] = &python_fallback_record,
    [PITH_KEY_PYTHON_MODE] = &python_mode_fallback_record,
};
static _Atomic pith_keyset fallthrough_keys = PITH_KEYSET(PITH_KEY_AUTOGRAD);

static pith_op *op_at(size_t i)
{
    return &op_chunks[i / OP_CHUNK][i % OP_CHUNK];
}

/* ---- the name index ---- */

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot holding `key`, or the empty slot where it would go. */
static name_slot *name_slot_find(const char *key)
{
    if (!name_capacity)
        return NULL;
    size_t mask = name_capacity - 1;
    for (size_t i = name_hash(key) & mask;; i = (i + 1) & mask)
        if (!name_table[i].key || strcmp(name_table[i].key, key) == 0)
            return &name_table[i];
}

static pith_status name_table_grow(void)
{
    size_t capacity = name_capacity ? name_capacity * 2 : 256;
    name_slot *old = name_table;
    size_t old_capacity = name_capacity;
    name_table = calloc(capacity, sizeof *name_table);
    if (!name_table) {
        name_table = old;
        return pith_set_error(PITH_ERR_NOMEM, "out of memory growing the operator index");
    }
    name_capacity = capacity;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].key)
            *name_slot_find(old[i].key) = old[i];
    free(old);
    return PITH_OK;
}

/* Makes room so that two more names can be added without failing half-way. */
static pith_status name_table_reserve(void)
{
    if ((name_used + 2) * 10 < name_capacity * 7)
        return PITH_OK;
    return name_table_grow();
}

/* Adds `key` (taking ownership) -> index, or points an existing key at `index` (freeing
 * `key`). Cannot fail: the table has room (name_table_reserve). */
static void name_set(char *key, size_t index)
{
    name_slot *slot = name_slot_find(key);
    if (slot->key) {
        free(key);
    } else {
        slot->key = key;
        name_used++;
    }
    slot->index = index;
}

/* Builds "ns::name" or "ns::name.overload"; NULL when out of memory. */
static char *name_join(const char *ns, const char *name, const char *overload)
{
    size_t len = strlen(ns) + 2 + strlen(name) + 1 + strlen(overload) + 1;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s::%s%s%s", ns, name, *overload ? "." : "", overload);
    return out;
}

/* Looks `name` up ("add", "add.Tensor", "ns::op", "pith::add.Tensor"); mutex held. */
static pith_op *name_lookup_locked(const char *name)
{
    const char *sep = strstr(name, "::");
    char *key = sep ? strdup(name) : name_join("pith", name, "");
    if (!key)
        return NULL;
    name_slot *slot = name_slot_find(key);
    free(key);
    return slot && slot->key ? op_at(slot->index) : NULL;
}

/* ---- definitions ---- */

static pith_status op_slot_new_locked(size_t *index)
{
    size_t i = atomic_load_explicit(&op_count, memory_order_relaxed);
    if (i / OP_CHUNK >= OP_MAX_CHUNKS)
        return pith_set_error(PITH_ERR_NOMEM, "too many operators (%zu)", i);
    if (!op_chunks[i / OP_CHUNK]) {
        op_chunks[i / OP_CHUNK] = calloc(OP_CHUNK, sizeof(pith_op));
        if (!op_chunks[i / OP_CHUNK])
            return pith_set_error(PITH_ERR_NOMEM, "out of memory defining an operator");
    }
    *index = i;
    return PITH_OK;
}

static pith_status define_locked(pith_schema *schema, char *qualified, char *text,
                                 int builtin_id, pith_op **out)
{
    char *bare = name_join(schema->ns, schema->name, "");
    if (!bare)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory defining an operator");
    pith_status status = PITH_OK;
    name_slot *exact = name_slot_find(qualified), *by_name;
    /* "ns::name" may be the default of a named overload, which an op with an empty
     * overload name takes over; anything else already there is a duplicate. */
    if (exact && exact->key && (*schema->overload || !*op_at(exact->index)->schema.overload)) {
        status = pith_set_error(PITH_ERR_VALUE, "operator '%s' is already defined", qualified);
        goto done;
    }
    size_t index;
    if ((status = name_table_reserve()) != PITH_OK || (status = op_slot_new_locked(&index)))
        goto done;
    pith_op *op = op_at(index);
    op->qualified_name = qualified;
    op->schema_text = text;
    op->schema = *schema;
    op->builtin_id = builtin_id;
    for (int k = 0; k < PITH_NUM_KEYS; k++)
        atomic_init(&op->kernels[k], NULL);
    /* An empty overload name makes qualified == bare, and takes the bare name over. A
     * named overload becomes the bare name's default when it is the first. */
    by_name = name_slot_find(bare);
    bool set_bare = *schema->overload && !by_name->key;
    char *qualified_key = strdup(qualified), *bare_key = set_bare ? strdup(bare) : NULL;
    if (!qualified_key || (set_bare && !bare_key)) {
        free(qualified_key);
        free(bare_key);
        memset(op, 0, sizeof *op);
        status = pith_set_error(PITH_ERR_NOMEM, "out of memory adding an operator name");
        goto done;
    }
    name_set(qualified_key, index);
    if (set_bare)
        name_set(bare_key, index);
    atomic_store_explicit(&op_count, index + 1, memory_order_release);
    *out = op;
done:
    free(bare);
    return status;
}

pith_status registry_define(const char *schema_text, int builtin_id, pith_op **out)
{
    pith_schema schema;
    if (schema_parse(schema_text, &schema) != PITH_OK)
        return pith_last_status();
    char *qualified = name_join(schema.ns, schema.name, schema.overload);
    char *text = strdup(schema_text);
    pith_status status;
    if (!qualified || !text) {
        status = pith_set_error(PITH_ERR_NOMEM, "out of memory defining an operator");
    } else {
        pthread_mutex_lock(&registry_mutex);
        status = define_locked(&schema, qualified, text, builtin_id, out);
        pthread_mutex_unlock(&registry_mutex);
    }
    if (status != PITH_OK) {
        schema_free(&schema);
        free(qualified);
        free(text);
    }
    return status;
}

pith_op *registry_find_mutable(const char *name)
{
    if (!name)
        return NULL;
    pthread_mutex_lock(&registry_mutex);
    pith_op *op = name_lookup_locked(name);
    pthread_mutex_unlock(&registry_mutex);
    return op;
}

/* ---- kernels ---- */

static pith_status kernel_install_locked(pith_op *op, int key, const pith_kernel_record *record)
{
    if (atomic_load_explicit(&op->kernels[key], memory_order_relaxed))
        return pith_set_error(PITH_ERR_VALUE, "%s: a kernel for dispatch key %s is already "
                                              "registered",
                              op_display_name(op), key_name(key));
    atomic_store_explicit(&op->kernels[key], record, memory_order_release);
    return PITH_OK;
}

pith_status registry_set_kernel(pith_op *op, int key, const pith_kernel_record *record)
{
    if (!op || key < 0 || key >= PITH_NUM_KEYS || !record)
        return pith_set_error(PITH_ERR_VALUE, "registry_set_kernel: bad arguments");
    pthread_mutex_lock(&registry_mutex);
    pith_status status = kernel_install_locked(op, key, record);
    pthread_mutex_unlock(&registry_mutex);
    return status;
}

/* Resolves the op and key names of the public registration functions. */
static pith_status names_resolve(const char *fn, const char *op_name, const char *key_text,
                                 pith_op **op, int *key)
{
    if (!op_name)
        return pith_set_error(PITH_ERR_VALUE, "%s: the operator name is NULL", fn);
    *key = key_from_name(key_text);
    if (*key < 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: unknown dispatch key '%s' (expected CPU, Meta, Python, "
                              "Autograd or PythonMode)",
                              fn, key_text ? key_text : "(null)");
    *op = registry_find_mutable(op_name);
    if (!*op)
        return pith_set_error(PITH_ERR_VALUE, "%s: unknown operator '%s'", fn, op_name);
    return PITH_OK;
}

pith_status pith_kernel_register(const char *op_name, const char *dispatch_key,
                                 pith_boxed_kernel fn, void *ctx)
{
    pith_op *op;
    int key;
    if (names_resolve(__func__, op_name, dispatch_key, &op, &key) != PITH_OK)
        return PITH_ERR_VALUE;
    if (!fn)
        return pith_set_error(PITH_ERR_VALUE, "%s: the kernel is NULL", __func__);
    record_node *node = malloc(sizeof *node);
    if (!node)
        return pith_set_error(PITH_ERR_NOMEM, "%s: out of memory", __func__);
    node->record = (pith_kernel_record){NULL, fn, ctx};
    pthread_mutex_lock(&registry_mutex);
    pith_status status = kernel_install_locked(op, key, &node->record);
    if (status == PITH_OK) {
        node->next = records_made;
        records_made = node;
    }
    pthread_mutex_unlock(&registry_mutex);
    if (status != PITH_OK)
        free(node);
    return status;
}

pith_status pith_kernel_unregister(const char *op_name, const char *dispatch_key)
{
    pith_op *op;
    int key;
    if (names_resolve(__func__, op_name, dispatch_key, &op, &key) != PITH_OK)
        return PITH_ERR_VALUE;
    pith_status status = PITH_OK;
    pthread_mutex_lock(&registry_mutex);
    if (!atomic_load_explicit(&op->kernels[key], memory_order_relaxed))
        status = pith_set_error(PITH_ERR_VALUE, "%s: %s has no kernel for dispatch key %s",
                                __func__, op_display_name(op), key_name(key));
    else
        atomic_store_explicit(&op->kernels[key], NULL, memory_order_release);
    pthread_mutex_unlock(&registry_mutex);
    return status;
}

/* ---- fallbacks and fallthrough ---- */

pith_status pith_fallback_register(const char *dispatch_key, pith_boxed_kernel fn, void *ctx)
{
    int key = key_from_name(dispatch_key);
    if (key < 0)
        return pith_set_error(PITH_ERR_VALUE, "%s: unknown dispatch key '%s'", __func__,
                              dispatch_key ? dispatch_key : "(null)");
    if (!fn)
        return pith_set_error(PITH_ERR_VALUE, "%s: the kernel is NULL", __func__);
    record_node *node = malloc(sizeof *node);
    if (!node)
        return pith_set_error(PITH_ERR_NOMEM, "%s: out of memory", __func__);
    node->record = (pith_kernel_record){NULL, fn, ctx};
    pith_status status = PITH_OK;
    pthread_mutex_lock(&registry_mutex);
    if (atomic_load_explicit(&fallbacks[key], memory_order_relaxed)) {
        status = pith_set_error(PITH_ERR_VALUE, "%s: dispatch key %s already has a fallback",
                                __func__, key_name(key));
    } else {
        atomic_store_explicit(&fallbacks[key], &node->record, memory_order_release);
        node->next = records_made;
        records_made = node;
    }
    pthread_mutex_unlock(&registry_mutex);
    if (status != PITH_OK)
        free(node);
    return status;
}

pith_status pith_fallback_unregister(const char *dispatch_key)
{
    int key = key_from_name(dispatch_key);
    if (key < 0)
        return pith_set_error(PITH_ERR_VALUE, "%s: unknown dispatch key '%s'", __func__,
                              dispatch_key ? dispatch_key : "(null)");
    pith_status status = PITH_OK;
    pthread_mutex_lock(&registry_mutex);
    if (!atomic_load_explicit(&fallbacks[key], memory_order_relaxed))
        status = pith_set_error(PITH_ERR_VALUE, "%s: dispatch key %s has no fallback", __func__,
                                key_name(key));
    else
        atomic_store_explicit(&fallbacks[key], NULL, memory_order_release);
    pthread_mutex_unlock(&registry_mutex);
    return status;
}

pith_status pith_fallthrough_register(const char *dispatch_key)
{
    int key = key_from_name(dispatch_key);
    if (key < 0)
        return pith_set_error(PITH_ERR_VALUE, "%s: unknown dispatch key '%s'", __func__,
                              dispatch_key ? dispatch_key : "(null)");
    atomic_fetch_or_explicit(&fallthrough_keys, PITH_KEYSET(key), memory_order_release);
    return PITH_OK;
}

void registry_fallthrough_remove(int key)
{
    if (key >= 0 && key < PITH_NUM_KEYS)
        atomic_fetch_and_explicit(&fallthrough_keys, ~PITH_KEYSET(key), memory_order_release);
}

/* ---- selection ---- */

/* "PythonMode, Python, CPU" (highest first), or "none". */
static const char *keyset_format(pith_keyset ks, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int k = PITH_NUM_KEYS - 1; k >= 0; k--)
        if (ks & PITH_KEYSET(k))
            len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s",
                                    len ? ", " : "", key_name(k));
    return len ? buf : "none";
}

pith_status dispatch_pick_general(const pith_op *op, pith_keyset ks,
                                  const pith_kernel_record **out, int *key)
{
    pith_keyset remaining = ks;
    pith_keyset fallthrough = atomic_load_explicit(&fallthrough_keys, memory_order_acquire);
    for (int k = keyset_highest(remaining); k >= 0; k = keyset_highest(remaining)) {
        const pith_kernel_record *record =
            atomic_load_explicit(&op->kernels[k], memory_order_acquire);
        if (!record)
            record = atomic_load_explicit(&fallbacks[k], memory_order_acquire);
        if (record) {
            *out = record;
            if (key)
                *key = k;
            return PITH_OK;
        }
        if (!(fallthrough & PITH_KEYSET(k))) {
            char buf[96];
            return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                                  "%s: no kernel for dispatch key %s (keys: %s)",
                                  op_display_name(op), key_name(k),
                                  keyset_format(ks, buf, sizeof buf));
        }
        remaining &= ~PITH_KEYSET(k);
    }
    char buf[96];
    return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                          "%s: no kernel to run for the dispatch keys (keys: %s)",
                          op_display_name(op), keyset_format(ks, buf, sizeof buf));
}

pith_keyset stack_keyset(const pith_stack *stack, size_t nargs)
{
    pith_keyset ks = 0;
    for (size_t i = stack->size - nargs; i < stack->size; i++) {
        const pith_value *v = stack_at(stack, i);
        if (v->kind == PITH_VALUE_TENSOR)
            ks |= v->u.t->keys;
        else if (v->kind == PITH_VALUE_TENSOR_LIST)
            for (size_t j = 0; j < v->u.tensors.n; j++)
                ks |= v->u.tensors.data[j] ? v->u.tensors.data[j]->keys : 0;
        else if (v->kind == PITH_VALUE_DEVICE)
            ks |= keyset_for_device(v->u.device);
    }
    return ks;
}

/* ---- boxed calls ---- */

/* Makes the stack hold exactly the op's arguments: fills the defaults of trailing
 * arguments left out, then checks every value's type. On failure the stack is as given. */
static pith_status boxed_prepare(const pith_op *op, pith_stack *stack)
{
    const pith_schema *schema = &op->schema;
    size_t given = stack->size;
    if (given > schema->nargs)
        return pith_set_error(PITH_ERR_VALUE, "%s: expected at most %zu arguments, got %zu",
                              op_display_name(op), schema->nargs, given);
    for (size_t i = given; i < schema->nargs; i++) {
        const pith_schema_arg *arg = &schema->args[i];
        pith_value v;
        if (!arg->has_default) {
            size_t required = i + 1;
            while (required < schema->nargs && !schema->args[required].has_default)
                required++;
            pith_set_error(PITH_ERR_VALUE,
                           "%s: missing argument '%s' (position %zu): expected at least %zu "
                           "arguments, got %zu",
                           op_display_name(op), arg->name, i + 1, required, given);
            goto fail;
        }
        if (value_copy(&arg->default_value, &v) != PITH_OK ||
            stack_push_value(stack, v) != PITH_OK)
            goto fail;
    }
    for (size_t i = 0; i < schema->nargs; i++) {
        const pith_value *v = stack_at(stack, i);
        /* Tensor arguments are the common case: checked inline. */
        if (schema->args[i].type == PITH_TYPE_TENSOR && v->kind == PITH_VALUE_TENSOR)
            continue;
        if (arg_check(op, i, v) != PITH_OK)
            goto fail;
    }
    return PITH_OK;
fail:
    pith_stack_drop(stack, stack->size - given);
    return pith_last_status();
}

static pith_status boxed_run(const pith_op *op, pith_stack *stack, pith_keyset ks)
{
    const pith_kernel_record *record;
    int key;
    if (dispatch_pick(op, ks, &record, &key) != PITH_OK)
        return pith_last_status();
    pith_status status = record->boxed(op, stack, record->ctx);
    if (status == PITH_OK && stack->size != op->schema.nreturns)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: the kernel for dispatch key %s left %zu values on the "
                              "stack, expected %zu",
                              op_display_name(op), key_name(key), stack->size,
                              op->schema.nreturns);
    return status;
}

static pith_status boxed_args_check(const char *fn, const pith_op *op, const pith_stack *stack)
{
    if (!op)
        return pith_set_error(PITH_ERR_VALUE, "%s: the operator is NULL", fn);
    if (!stack)
        return pith_set_error(PITH_ERR_VALUE, "%s: the stack is NULL", fn);
    return PITH_OK;
}

pith_status pith_call_boxed(const pith_op *op, pith_stack *stack)
{
    if (boxed_args_check(__func__, op, stack) != PITH_OK || boxed_prepare(op, stack) != PITH_OK)
        return pith_last_status();
    return boxed_run(op, stack, keyset_effective(stack_keyset(stack, stack->size)));
}

pith_status pith_call_boxed_below(const pith_op *op, pith_stack *stack, const char *dispatch_key)
{
    int key = key_from_name(dispatch_key);
    if (key < 0)
        return pith_set_error(PITH_ERR_VALUE, "%s: unknown dispatch key '%s'", __func__,
                              dispatch_key ? dispatch_key : "(null)");
    if (boxed_args_check(__func__, op, stack) != PITH_OK || boxed_prepare(op, stack) != PITH_OK)
        return pith_last_status();
    pith_keyset ks = keyset_effective(stack_keyset(stack, stack->size)) & keyset_below(key);
    return boxed_run(op, stack, ks);
}

/* ---- public lookup ---- */

const pith_op *pith_op_find(const char *name)
{
    if (!name)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_op_find: the name is NULL");
    const pith_op *op = registry_find_mutable(name);
    if (!op)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "unknown operator '%s'", name);
    return op;
}

const char *pith_op_schema(const pith_op *op)
{
    if (!op)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_op_schema: the operator is NULL");
    return op->schema_text;
}

const char *pith_op_name(const pith_op *op)
{
    if (!op)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_op_name: the operator is NULL");
    return op->qualified_name;
}

size_t pith_op_count(void)
{
    return atomic_load_explicit(&op_count, memory_order_acquire);
}

const pith_op *pith_op_at(size_t i)
{
    size_t n = pith_op_count();
    if (i >= n)
        return PITH_FAIL_NULL(PITH_ERR_INDEX, "pith_op_at: index %zu is out of range for %zu "
                                              "operators",
                              i, n);
    return op_at(i);
}

pith_status pith_op_define(const char *schema)
{
    pith_op *op;
    if (!schema)
        return pith_set_error(PITH_ERR_VALUE, "pith_op_define: the schema is NULL");
    return registry_define(schema, -1, &op);
}
