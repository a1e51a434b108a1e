/* passes.c — pith_graph_compile: CSE, DCE, lowering each node to a step, and the memory
 * plan.
 *
 * Note [Effects]
 * A node has effects when it writes a tensor argument (an in-place op, Tensor(a!) self,
 * or an out= op, a keyword-only Tensor(a!)) or draws from a generator (an op with a
 * Generator? argument). The schema says which, for built-in and custom ops alike; a
 * custom op whose schema declares no mutation is taken to be pure, as PyTorch does.
 *  - Effectful nodes are never removed (DCE keeps them and what they read) and never
 *    merged (CSE skips them), and no pass reorders anything: steps run in the order the
 *    nodes were added, so random ops draw from the generator in eager order and give
 *    eager's numbers for the same seed.
 *  - Every read of a tensor records the version of its root (the value that owns the
 *    storage) at that point; a write bumps it. CSE keys include these versions, so
 *    `x * 2` before and after `x.add_(1)` are different values.
 *  - CSE also leaves alone any node whose results live in a storage that some node
 *    writes: merging two such results would make one write visible through both.
 *  - Views stay views: a view node becomes a STEP_VIEW whose result shares its base's
 *    buffer, and an output that aliases an input comes back as a view of it.
 *
 * Note [Arenas]
 * Intermediates that no output aliases (ROOT_ARENA) live in one arena per run. Each gets
 * a buffer of its stand-in storage's bytes, rounded up to 64, live from the step that makes
 * it to the last step that reads or writes any value in its storage (views included),
 * both ends inclusive, so a step's output never shares bytes with its inputs. Buffers are
 * placed largest first at the lowest offset that overlaps no placed buffer live at the
 * same time (a greedy interval colouring); without plan_memory each gets its own bytes.
 *  - An arena is a storage with its tensors (one per arena value, and per view of one)
 *    made once. A compiled graph keeps `arena_pool` arenas (one made at compile time,
 *    the rest on demand); a run takes a free one with an atomic exchange, or makes its
 *    own when all are busy, and puts it back (or frees it, when the pool is full) after.
 *    So concurrent runs never share an arena, and a run in steady state allocates nothing
 *    but its outputs (and what kernels without a .out overload allocate: their steps are
 *    `call` steps in the dump).
 *  - Values reaching an output (ROOT_FRESH) are allocated by the run at their step, with
 *    the stand-in's strides, and handed out; views of them and of inputs rebind headers
 *    (See Note [Rebound view headers] in core/tensor.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compile/graph_internal.h"
#include "dispatch/keys.h"
#include "kernels/ops_internal.h"

void pith_compile_options_init(pith_compile_options *opts)
{
    if (!opts)
        return;
    opts->struct_size = sizeof *opts;
    opts->dce = true;
    opts->cse = true;
    opts->plan_memory = true;
    opts->arena_pool = 4;
    opts->fuse = true;
}

/* ---- the .out overload of a functional op ---- */

/* Per built-in op: -2 not looked up yet, -1 none, else the op index (pith_op_at). */
static _Atomic int out_overload_cache[PITH_NUM_BUILTIN_OPS];
static atomic_bool out_overload_cache_ready;

static bool is_out_overload_of(const pith_op *o, const pith_op *f)
{
    const pith_schema *fs = &f->schema, *os = &o->schema;
    if (o == f || os->nargs != fs->nargs + 1 || os->nreturns != 1)
        return false;
    const pith_schema_arg *last = &os->args[fs->nargs];
    if (last->type != PITH_TYPE_TENSOR || !last->is_mutable || !last->kwarg_only)
        return false;
    for (size_t i = 0; i < fs->nargs; i++)
        if (os->args[i].type != fs->args[i].type || os->args[i].is_mutable ||
            strcmp(os->args[i].name, fs->args[i].name) != 0)
            return false;
    return strcmp(pith_op_base_name(o), pith_op_base_name(f)) == 0 &&
           strcmp(pith_op_namespace(o), pith_op_namespace(f)) == 0;
}

static const pith_op *out_overload(const pith_op *f)
{
    const pith_schema *fs = &f->schema;
    if (fs->nreturns != 1 || fs->returns[0].type != PITH_TYPE_TENSOR ||
        fs->returns[0].alias_set)
        return NULL;
    int id = f->builtin_id;
    if (id >= 0 && id < PITH_NUM_BUILTIN_OPS) {
        if (!atomic_load_explicit(&out_overload_cache_ready, memory_order_acquire)) {
            for (int i = 0; i < PITH_NUM_BUILTIN_OPS; i++)
                atomic_store_explicit(&out_overload_cache[i], -2, memory_order_relaxed);
            atomic_store_explicit(&out_overload_cache_ready, true, memory_order_release);
        }
        int cached = atomic_load_explicit(&out_overload_cache[id], memory_order_relaxed);
        if (cached >= 0)
            return pith_op_at((size_t)cached);
        if (cached == -1)
            return NULL;
    }
    /* Built-in ops come first in the registry, so a built-in's .out is found quickly. */
    size_t n = pith_op_count();
    int found = -1;
    for (size_t i = 0; i < n; i++) {
        const pith_op *o = pith_op_at(i);
        if (is_out_overload_of(o, f)) {
            found = (int)i;
            break;
        }
    }
    if (id >= 0 && id < PITH_NUM_BUILTIN_OPS)
        atomic_store_explicit(&out_overload_cache[id], found, memory_order_relaxed);
    return found >= 0 ? pith_op_at((size_t)found) : NULL;
}

/* ---- CSE ---- */

static bool const_equal(const pith_tensor *a, const pith_tensor *b)
{
    return a->dtype == b->dtype && (a->flags & PITH_TENSOR_WRAPPED_NUMBER) ==
                                       (b->flags & PITH_TENSOR_WRAPPED_NUMBER) &&
           memcmp(tensor_data(a), tensor_data(b), dtype_itemsize(a->dtype)) == 0;
}

/* Whether two argument values (not tensors) are the same. */
static bool plain_value_equal(const pith_value *a, const pith_value *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case PITH_VALUE_NONE:
        return true;
    case PITH_VALUE_INT:
        return a->u.i == b->u.i;
    case PITH_VALUE_DOUBLE:
        return memcmp(&a->u.d, &b->u.d, sizeof a->u.d) == 0;
    case PITH_VALUE_BOOL:
        return a->u.b == b->u.b;
    case PITH_VALUE_STRING:
        return strcmp(a->u.s, b->u.s) == 0;
    case PITH_VALUE_DTYPE:
        return a->u.dtype == b->u.dtype;
    case PITH_VALUE_DEVICE:
        return a->u.device == b->u.device;
    case PITH_VALUE_INT_LIST:
        return a->u.ints.n == b->u.ints.n &&
               (a->u.ints.n == 0 ||
                memcmp(a->u.ints.data, b->u.ints.data, a->u.ints.n * sizeof(int64_t)) == 0);
    case PITH_VALUE_DOUBLE_LIST:
        return a->u.doubles.n == b->u.doubles.n &&
               (a->u.doubles.n == 0 || memcmp(a->u.doubles.data, b->u.doubles.data,
                                              a->u.doubles.n * sizeof(double)) == 0);
    case PITH_VALUE_TENSOR_LIST:
        return a->u.tensors.n == b->u.tensors.n; /* entries compared through the refs */
    default:
        return false; /* generators: never merged (random ops have effects anyway) */
    }
}

static int resolve(const int *repl, int v)
{
    while (repl[v] != v)
        v = repl[v];
    return v;
}

static bool ref_equal(const pith_graph *g, const int *repl, const gref *a, const gref *b)
{
    if (a->arg != b->arg || a->entry != b->entry)
        return false;
    int va = resolve(repl, a->value), vb = resolve(repl, b->value);
    if (va == vb)
        return a->version == b->version;
    const gvalue *x = &g->values[va], *y = &g->values[vb];
    return x->kind == GVAL_CONST && y->kind == GVAL_CONST && const_equal(x->t, y->t);
}

static bool node_equal(const pith_graph *g, const int *repl, const gnode *a, const gnode *b)
{
    if (a->op != b->op || a->nargs != b->nargs || a->nrefs != b->nrefs ||
        a->nresults != b->nresults)
        return false;
    for (size_t i = 0; i < a->nargs; i++)
        if (a->args[i].kind != PITH_VALUE_TENSOR && !plain_value_equal(&a->args[i], &b->args[i]))
            return false;
    for (size_t k = 0; k < a->nrefs; k++)
        if (!ref_equal(g, repl, &a->refs[k], &b->refs[k]))
            return false;
    for (int r = 0; r < PITH_MAX_RETURNS; r++)
        if (a->nlist[r] != b->nlist[r])
            return false;
    return true;
}

static uint64_t node_hash(const pith_graph *g, const int *repl, const gnode *n)
{
    uint64_t h = (uint64_t)(uintptr_t)n->op * 0x9E3779B97F4A7C15ull;
    for (size_t k = 0; k < n->nrefs; k++) {
        int v = resolve(repl, n->refs[k].value);
        uint64_t x = g->values[v].kind == GVAL_CONST ? 0x5bd1e995u : (uint64_t)v << 20 |
                                                                        (uint64_t)n->refs[k].version;
        h = (h ^ x) * 0x100000001B3ull;
    }
    return h;
}

/* ---- the plan ---- */

typedef struct {
    const pith_graph *g;
    pith_compiled *c;
    int *repl;         /* value -> the value it was merged into (CSE) */
    char *removed;     /* per node: 0 kept, 'c' CSE, 'd' DCE */
    int *merged_into;  /* per node: the node it was merged into */
    bool *mutated_root;
    bool *live_value;
    strbuf report;
} planner;

/* The root of value `v` after CSE: a view's base may have been merged into an earlier,
 * identical value (same op, same arguments, so the same geometry). */
static int root_of(const planner *p, int v)
{
    return resolve(p->repl, p->g->values[v].root);
}

static pith_status run_cse(planner *p)
{
    const pith_graph *g = p->g;
    size_t cap = 1;
    while (cap < g->nnodes * 2)
        cap *= 2;
    int *table = malloc(cap * sizeof *table);
    uint64_t *hashes = malloc((g->nnodes ? g->nnodes : 1) * sizeof *hashes);
    if (!table || !hashes) {
        free(table);
        free(hashes);
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    }
    for (size_t i = 0; i < cap; i++)
        table[i] = -1;
    for (size_t i = 0; i < g->nnodes; i++) {
        const gnode *n = &g->nodes[i];
        if (n->effects || n->nresults == 0)
            continue;
        bool eligible = true;
        for (size_t r = 0; r < n->nresults && eligible; r++) {
            const gvalue *v = &g->values[n->results[r]];
            /* a result that is an argument (contiguous of a contiguous tensor) */
            if (v->node != (int)i || p->mutated_root[v->root])
                eligible = false;
        }
        if (!eligible)
            continue;
        uint64_t h = node_hash(g, p->repl, n);
        hashes[i] = h;
        size_t slot = (size_t)h & (cap - 1);
        for (;; slot = (slot + 1) & (cap - 1)) {
            int j = table[slot];
            if (j < 0) {
                table[slot] = (int)i;
                break;
            }
            if (hashes[j] == h && node_equal(g, p->repl, &g->nodes[j], n)) {
                for (size_t r = 0; r < n->nresults; r++)
                    p->repl[n->results[r]] = resolve(p->repl, g->nodes[j].results[r]);
                p->removed[i] = 'c';
                p->merged_into[i] = j;
                break;
            }
        }
    }
    free(table);
    free(hashes);
    return PITH_OK;
}

static void run_dce(planner *p, bool dce)
{
    const pith_graph *g = p->g;
    bool *live_node = calloc(g->nnodes ? g->nnodes : 1, sizeof *live_node);
    for (size_t o = 0; o < g->noutputs; o++)
        p->live_value[resolve(p->repl, g->outputs[o])] = true;
    for (size_t i = g->nnodes; i-- > 0;) {
        const gnode *n = &g->nodes[i];
        if (p->removed[i])
            continue;
        bool live = !dce || n->effects || !live_node;
        for (size_t r = 0; r < n->nresults && !live; r++)
            live = p->live_value[n->results[r]];
        if (!live) {
            p->removed[i] = 'd';
            continue;
        }
        if (live_node)
            live_node[i] = true;
        for (size_t k = 0; k < n->nrefs; k++)
            p->live_value[resolve(p->repl, n->refs[k].value)] = true;
        for (size_t r = 0; r < n->nresults; r++)
            p->live_value[n->results[r]] = true;
    }
    /* A live value keeps its root's producer live: views read their base. */
    for (size_t v = 0; v < g->nvalues; v++)
        if (p->live_value[v])
            p->live_value[root_of(p, (int)v)] = true;
    free(live_node);
}

/* Copies node `n`'s arguments into a step template, with tensors left NULL (patched by
 * each run), and its refs with CSE applied. `extra` adds a slot for an out= tensor. */
static pith_status step_args(planner *p, cstep *s, const gnode *n, bool extra)
{
    s->nargs = n->nargs + (extra ? 1 : 0);
    s->args = calloc(s->nargs ? s->nargs : 1, sizeof *s->args);
    s->refs = malloc((n->nrefs + 1) * sizeof *s->refs);
    if (!s->args || !s->refs)
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    for (size_t i = 0; i < n->nargs; i++) {
        if (value_copy(&n->args[i], &s->args[i]) != PITH_OK)
            return pith_last_status();
        pith_value *a = &s->args[i];
        if (a->kind == PITH_VALUE_TENSOR) {
            pith_release(a->u.t);
            a->u.t = NULL;
        } else if (a->kind == PITH_VALUE_TENSOR_LIST) {
            for (size_t j = 0; j < a->u.tensors.n; j++) {
                pith_release(a->u.tensors.data[j]);
                a->u.tensors.data[j] = NULL;
            }
        }
    }
    for (size_t k = 0; k < n->nrefs; k++) {
        s->refs[k] = n->refs[k];
        s->refs[k].value = resolve(p->repl, n->refs[k].value);
    }
    s->nrefs = n->nrefs;
    if (extra) {
        s->args[n->nargs].kind = PITH_VALUE_TENSOR;
        s->args[n->nargs].u.t = NULL;
        s->refs[s->nrefs++] = (gref){(int)n->nargs, -1, n->results[0], 0};
    }
    s->results = malloc((n->nresults ? n->nresults : 1) * sizeof *s->results);
    if (!s->results)
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    memcpy(s->results, n->results, n->nresults * sizeof *s->results);
    s->nresults = n->nresults;
    return PITH_OK;
}

static bool node_makes_views(const pith_graph *g, const gnode *n, int node)
{
    if (n->effects || n->nresults == 0)
        return false;
    for (size_t r = 0; r < n->nresults; r++) {
        const gvalue *v = &g->values[n->results[r]];
        if (v->node != node || v->root == n->results[r])
            return false;
    }
    return true;
}

static bool node_is_noop(const pith_graph *g, const gnode *n, int node)
{
    if (n->effects)
        return false;
    for (size_t r = 0; r < n->nresults; r++)
        if (g->values[n->results[r]].node == node)
            return false;
    return true;
}

static pith_status lower(planner *p)
{
    const pith_graph *g = p->g;
    pith_compiled *c = p->c;
    c->steps = calloc(g->nnodes ? g->nnodes : 1, sizeof *c->steps);
    if (!c->steps)
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    for (size_t i = 0; i < g->nnodes; i++) {
        const gnode *n = &g->nodes[i];
        if (p->removed[i])
            continue;
        if (node_is_noop(g, n, (int)i)) {
            sb_printf(&p->report, "  node %zu: %s returns its argument (no step)\n", i,
                      op_display_name(n->op));
            continue;
        }
        cstep *s = &c->steps[c->nsteps];
        s->node = (int)i;
        s->op = n->op;
        s->effects = n->effects;
        const pith_op *out = NULL;
        int id = n->op->builtin_id;
        if (node_makes_views(g, n, (int)i)) {
            s->kind = STEP_VIEW;
        } else if (!n->effects && (id == PITH_OPID_empty || id == PITH_OPID_empty_strided)) {
            s->kind = STEP_ALLOC;
        } else if (!n->effects && n->nresults == 1 &&
                   g->values[n->results[0]].root == n->results[0] &&
                   (out = out_overload(n->op)) != NULL &&
                   atomic_load(&out->kernels[PITH_KEY_CPU]) &&
                   atomic_load(&out->kernels[PITH_KEY_CPU])->unboxed &&
                   compile_invoker_of(out)) {
            s->kind = STEP_OUT;
            s->op = out;
        } else {
            s->kind = STEP_CALL;
        }
        c->nsteps++;
        if (step_args(p, s, n, s->kind == STEP_OUT) != PITH_OK)
            return pith_last_status();
        if (s->kind == STEP_OUT || s->kind == STEP_CALL) {
            const pith_kernel_record *record;
            int key;
            if (dispatch_pick(s->op, PITH_KEYSET(PITH_KEY_CPU), &record, &key) != PITH_OK)
                return error_prefix("pith_graph_compile: node %zu (%s)", i,
                                    op_display_name(n->op));
            s->record = record;
            if (record->unboxed && compile_invoker_of(s->op)) {
                s->fn = record->unboxed;
                s->invoke = compile_invoker_of(s->op);
            }
        }
    }
    return PITH_OK;
}

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Which step makes each value (def_step) and which kind of step it is (maker: STEP_VIEW when
 * none), and the last step that reads or writes each root (last_step). */
static void steps_scan(const planner *p, int *def_step, int *last_step, step_kind *maker)
{
    const pith_graph *g = p->g;
    const pith_compiled *c = p->c;
    for (size_t v = 0; v < g->nvalues; v++)
        maker[v] = STEP_VIEW;
    for (size_t s = 0; s < c->nsteps; s++) {
        const cstep *st = &c->steps[s];
        for (size_t r = 0; r < st->nresults; r++) {
            int v = st->results[r];
            /* a group's results are made by several of its nodes */
            if ((st->kind == STEP_GROUP || g->values[v].node == st->node) && def_step[v] < 0) {
                def_step[v] = (int)s;
                maker[v] = st->kind;
            }
        }
        for (size_t k = 0; k < st->nrefs; k++)
            last_step[root_of(p, st->refs[k].value)] = (int)s;
        for (size_t r = 0; r < st->nresults; r++)
            last_step[root_of(p, st->results[r])] = (int)s;
    }
}

/* The kind of a root: where its storage comes from. `maker` is the kind of step that makes
 * it, `reaches_output` whether an output lives in it. */
static root_kind root_kind_of(const gvalue *root, step_kind maker, bool reaches_output)
{
    switch (root->kind) {
    case GVAL_INPUT:
        return ROOT_INPUT;
    case GVAL_PARAM:
        return ROOT_PARAM;
    case GVAL_CONST:
        return ROOT_CONST;
    case GVAL_RESULT:
        break;
    }
    if (maker == STEP_CALL)
        return ROOT_DYN;
    return reaches_output ? ROOT_FRESH : ROOT_ARENA;
}

/* How a run gets value `gv`'s tensor (cv->rk set), made by a step of kind `maker`. */
static void value_slot(cvalue *cv, const gvalue *gv, step_kind maker, bool is_root)
{
    if (gv->kind == GVAL_INPUT) {
        cv->slot = SLOT_INPUT;
        cv->input = gv->index;
    } else if (gv->kind == GVAL_PARAM || gv->kind == GVAL_CONST) {
        cv->slot = SLOT_EXTERNAL;
        cv->ext = gv->kind == GVAL_PARAM ? gv->held : gv->t;
        pith_retain(cv->ext);
    } else if (maker == STEP_CALL) {
        cv->slot = SLOT_RUN;
        cv->from_call = true;
    } else if (is_root) {
        cv->slot = cv->rk == ROOT_ARENA ? SLOT_STATIC : SLOT_RUN;
    } else {
        cv->slot = cv->rk == ROOT_ARENA || cv->rk == ROOT_PARAM || cv->rk == ROOT_CONST
                       ? SLOT_STATIC
                       : SLOT_REBOUND;
    }
}

/* Fills c->values (root, def, slot and root kinds), and gives each arena root a buffer with
 * its live range; returns the number of buffers. */
static size_t values_plan(const planner *p, const bool *reaches_output, const int *def_step,
                          const int *last_step, const step_kind *maker)
{
    const pith_graph *g = p->g;
    pith_compiled *c = p->c;
    size_t nbuf = 0;
    for (size_t v = 0; v < g->nvalues; v++) {
        const gvalue *gv = &g->values[v];
        cvalue *cv = &c->values[v];
        int rid = root_of(p, (int)v);
        cv->root = rid;
        cv->def = def_step[v];
        if (!p->live_value[v] || (gv->kind == GVAL_RESULT && def_step[v] < 0 &&
                                  def_step[rid] < 0))
            continue;
        cv->meta = gv->t;
        pith_retain(gv->t);
        const gvalue *root = &g->values[rid];
        cv->delta = gv->t->offset - root->t->offset;
        cv->rk = root_kind_of(root, maker[rid], reaches_output[rid]);
        bool is_root = rid == (int)v;
        value_slot(cv, gv, maker[v], is_root);
        if (is_root && cv->rk == ROOT_ARENA) {
            cbuffer *b = &c->buffers[nbuf];
            b->bytes = round64(gv->t->storage->nbytes ? gv->t->storage->nbytes : 1);
            b->first = def_step[v];
            b->last = last_step[v] < b->first ? b->first : last_step[v];
            b->root = (int)v;
            cv->buffer = (int)nbuf++;
            c->intermediate_bytes += b->bytes;
        }
    }
    return nbuf;
}

/* The buffers' indices by size, largest first (an insertion sort: stable). */
static void buffers_order(const pith_compiled *c, int *order)
{
    size_t nbuf = c->nbuffers;
    for (size_t i = 0; i < nbuf; i++)
        order[i] = (int)i;
    for (size_t i = 1; i < nbuf; i++) {
        int x = order[i];
        size_t j = i;
        while (j > 0 && c->buffers[order[j - 1]].bytes < c->buffers[x].bytes) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
}

/* The lowest offset at which buffer `b` overlaps no `placed` buffer live at the same time. */
static size_t buffer_offset(const pith_compiled *c, const bool *placed, const cbuffer *b)
{
    size_t offset = 0;
    bool moved = true;
    while (moved) {
        moved = false;
        for (size_t j = 0; j < c->nbuffers; j++) {
            const cbuffer *o = &c->buffers[j];
            if (!placed[j] || o->last < b->first || b->last < o->first)
                continue;
            if (offset < o->offset + o->bytes && o->offset < offset + b->bytes) {
                offset = o->offset + o->bytes;
                moved = true;
            }
        }
    }
    return offset;
}

/* Place the buffers: largest first, lowest offset free over the live range (or one after
 * the other, without plan_memory). */
static pith_status buffers_place(pith_compiled *c)
{
    size_t nbuf = c->nbuffers;
    int *order = malloc((nbuf ? nbuf : 1) * sizeof *order);
    bool *placed = calloc(nbuf ? nbuf : 1, sizeof *placed);
    if (!order || !placed) {
        free(order);
        free(placed);
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    }
    buffers_order(c, order);
    size_t arena = 0;
    for (size_t i = 0; i < nbuf; i++) {
        cbuffer *b = &c->buffers[order[i]];
        size_t offset = c->opts.plan_memory ? buffer_offset(c, placed, b) : arena;
        b->offset = offset;
        placed[order[i]] = true;
        if (offset + b->bytes > arena)
            arena = offset + b->bytes;
    }
    c->arena_bytes = arena;
    free(order);
    free(placed);
    return PITH_OK;
}

/* Slot and root kinds, buffers with their live ranges, and the arena's layout. */
static pith_status plan(planner *p)
{
    const pith_graph *g = p->g;
    pith_compiled *c = p->c;
    bool *reaches_output = calloc(g->nvalues ? g->nvalues : 1, sizeof *reaches_output);
    int *def_step = malloc((g->nvalues ? g->nvalues : 1) * sizeof *def_step);
    int *last_step = malloc((g->nvalues ? g->nvalues : 1) * sizeof *last_step);
    c->buffers = calloc(g->nvalues ? g->nvalues : 1, sizeof *c->buffers);
    if (!reaches_output || !def_step || !last_step || !c->buffers) {
        free(reaches_output);
        free(def_step);
        free(last_step);
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    }
    for (size_t v = 0; v < g->nvalues; v++)
        def_step[v] = last_step[v] = -1;
    for (size_t o = 0; o < c->noutputs; o++)
        reaches_output[root_of(p, c->outputs[o])] = true;
    step_kind *maker = malloc((g->nvalues ? g->nvalues : 1) * sizeof *maker);
    if (!maker) {
        free(reaches_output);
        free(def_step);
        free(last_step);
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    }
    steps_scan(p, def_step, last_step, maker);
    c->nbuffers = values_plan(p, reaches_output, def_step, last_step, maker);
    free(reaches_output);
    free(def_step);
    free(last_step);
    free(maker);
    return buffers_place(c);
}

pith_compiled *pith_graph_compile(const pith_graph *g, const pith_compile_options *opts)
{
    if (!g)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_graph_compile: the graph is NULL");
    pith_compile_options o;
    pith_compile_options_init(&o);
    if (opts) {
        if (opts->struct_size < offsetof(pith_compile_options, arena_pool) + sizeof(int) ||
            opts->struct_size > sizeof o)
            return PITH_FAIL_NULL(PITH_ERR_VALUE,
                                  "pith_graph_compile: options.struct_size is %zu; fill the "
                                  "options with pith_compile_options_init first",
                                  opts->struct_size);
        /* A caller built against an older header has a shorter struct: the fields it
         * lacks keep their defaults. */
        memcpy(&o, opts, opts->struct_size);
        o.struct_size = sizeof o;
        if (o.arena_pool < 1)
            return PITH_FAIL_NULL(PITH_ERR_VALUE,
                                  "pith_graph_compile: options.arena_pool is %d; it must be "
                                  "at least 1",
                                  o.arena_pool);
    }
    pith_compiled *c = calloc(1, sizeof *c);
    planner p = {g, c, NULL, NULL, NULL, NULL, NULL, {0}};
    size_t nv = g->nvalues ? g->nvalues : 1, nn = g->nnodes ? g->nnodes : 1;
    if (c) {
        c->values = calloc(nv, sizeof *c->values);
        c->inputs = malloc((g->ninputs ? g->ninputs : 1) * sizeof *c->inputs);
        c->outputs = malloc((g->noutputs ? g->noutputs : 1) * sizeof *c->outputs);
    }
    p.repl = malloc(nv * sizeof *p.repl);
    p.removed = calloc(nn, 1);
    p.merged_into = malloc(nn * sizeof *p.merged_into);
    p.mutated_root = calloc(nv, sizeof *p.mutated_root);
    p.live_value = calloc(nv, sizeof *p.live_value);
    if (!c || !c->values || !c->inputs || !c->outputs || !p.repl || !p.removed ||
        !p.merged_into || !p.mutated_root || !p.live_value) {
        pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
        goto fail;
    }
    c->serial = g->ident->serial;
    c->opts = o;
    c->nvalues = g->nvalues;
    for (size_t v = 0; v < g->nvalues; v++)
        p.repl[v] = (int)v;
    for (size_t i = 0; i < g->nnodes; i++)
        for (size_t k = 0; k < g->nodes[i].nmutated; k++)
            p.mutated_root[g->values[g->nodes[i].mutated[k]].root] = true;
    if (o.cse && run_cse(&p) != PITH_OK)
        goto fail;
    run_dce(&p, o.dce);
    for (size_t i = 0; i < g->ninputs; i++) {
        c->inputs[i] = g->inputs[i];
        p.live_value[g->inputs[i]] = true;
    }
    c->ninputs = g->ninputs;
    for (size_t i = 0; i < g->noutputs; i++)
        c->outputs[i] = resolve(p.repl, g->outputs[i]);
    c->noutputs = g->noutputs;
    if (lower(&p) != PITH_OK || (o.fuse && fuse_steps(c, g, p.repl) != PITH_OK) ||
        plan(&p) != PITH_OK)
        goto fail;
    for (size_t i = 0; i < g->nnodes; i++) {
        if (p.removed[i] == 'c')
            sb_printf(&p.report, "  node %zu: %s merged into node %d (cse)\n", i,
                      op_display_name(g->nodes[i].op), p.merged_into[i]);
        else if (p.removed[i] == 'd')
            sb_printf(&p.report, "  node %zu: %s removed (dce)\n", i,
                      op_display_name(g->nodes[i].op));
    }
    c->removed = sb_finish(&p.report);
    if (!c->removed && p.report.failed) {
        pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
        goto fail;
    }
    if (compiled_prepare_pool(c) != PITH_OK)
        goto fail;
    free(p.repl);
    free(p.removed);
    free(p.merged_into);
    free(p.mutated_root);
    free(p.live_value);
    return c;
fail:
    free(sb_finish(&p.report));
    free(p.repl);
    free(p.removed);
    free(p.merged_into);
    free(p.mutated_root);
    free(p.live_value);
    compiled_destroy(c);
    return NULL;
}
