/* dump.c — pith_graph_dump and pith_compiled_dump: the nodes with their effects, the
 * steps, the buffers and the arena, as text for people and for tests. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/graph_internal.h"

void sb_printf(strbuf *sb, const char *fmt, ...)
{
    if (sb->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = sb->cap - sb->len;
        int n = vsnprintf(sb->data ? sb->data + sb->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            sb->failed = true;
            return;
        }
        if ((size_t)n < room) {
            sb->len += (size_t)n;
            return;
        }
        size_t cap = sb->cap ? sb->cap * 2 : 256;
        while (cap - sb->len <= (size_t)n)
            cap *= 2;
        char *p = realloc(sb->data, cap);
        if (!p) {
            sb->failed = true;
            return;
        }
        sb->data = p;
        sb->cap = cap;
    }
}

char *sb_finish(strbuf *sb)
{
    if (sb->failed) {
        free(sb->data);
        sb->data = NULL;
        return NULL;
    }
    if (!sb->data)
        sb_printf(sb, "%s", "");
    char *s = sb->data;
    sb->data = NULL;
    return s;
}

void sb_geometry(strbuf *sb, const pith_tensor *t)
{
    char sizes[256], strides[256];
    sb_printf(sb, "%s%s", pith_dtype_name(t->dtype),
              shape_format(t->ndim, t->sizes, sizes, sizeof sizes));
    if (!t->contiguous)
        sb_printf(sb, " strides %s", shape_format(t->ndim, t->strides, strides, sizeof strides));
    if (t->offset)
        sb_printf(sb, " offset %" PRId64, t->offset);
}

static void sb_ref(strbuf *sb, const gref *refs, size_t nrefs, size_t arg, long entry)
{
    for (size_t k = 0; k < nrefs; k++)
        if (refs[k].arg == (int)arg && refs[k].entry == entry) {
            sb_printf(sb, "%%%d", refs[k].value);
            return;
        }
    sb_printf(sb, "?");
}

void sb_value(strbuf *sb, const pith_value *v, const gref *refs, size_t nrefs, size_t arg)
{
    switch (v->kind) {
    case PITH_VALUE_TENSOR:
        sb_ref(sb, refs, nrefs, arg, -1);
        break;
    case PITH_VALUE_TENSOR_LIST:
        sb_printf(sb, "[");
        for (size_t j = 0; j < v->u.tensors.n; j++) {
            if (j)
                sb_printf(sb, ", ");
            bool none = true;
            for (size_t k = 0; k < nrefs; k++)
                none &= !(refs[k].arg == (int)arg && refs[k].entry == (int)j);
            if (none)
                sb_printf(sb, "None");
            else
                sb_ref(sb, refs, nrefs, arg, (long)j);
        }
        sb_printf(sb, "]");
        break;
    case PITH_VALUE_INT:
        sb_printf(sb, "%" PRId64, v->u.i);
        break;
    case PITH_VALUE_DOUBLE:
        sb_printf(sb, "%.17g", v->u.d);
        break;
    case PITH_VALUE_BOOL:
        sb_printf(sb, "%s", v->u.b ? "True" : "False");
        break;
    case PITH_VALUE_NONE:
        sb_printf(sb, "None");
        break;
    case PITH_VALUE_STRING:
        sb_printf(sb, "'%s'", v->u.s);
        break;
    case PITH_VALUE_DTYPE:
        sb_printf(sb, "%s", pith_dtype_name(v->u.dtype));
        break;
    case PITH_VALUE_DEVICE:
        sb_printf(sb, "%s", v->u.device == PITH_META ? "meta" : "cpu");
        break;
    case PITH_VALUE_INT_LIST:
        sb_printf(sb, "[");
        for (size_t j = 0; j < v->u.ints.n; j++)
            sb_printf(sb, "%s%" PRId64, j ? ", " : "", v->u.ints.data[j]);
        sb_printf(sb, "]");
        break;
    case PITH_VALUE_DOUBLE_LIST:
        sb_printf(sb, "[");
        for (size_t j = 0; j < v->u.doubles.n; j++)
            sb_printf(sb, "%s%.17g", j ? ", " : "", v->u.doubles.data[j]);
        sb_printf(sb, "]");
        break;
    default:
        sb_printf(sb, "<%s>", value_kind_name(v->kind));
        break;
    }
}

static void sb_effects(strbuf *sb, unsigned effects, const int *mutated, size_t nmutated)
{
    if (!effects) {
        sb_printf(sb, "  pure");
        return;
    }
    if (effects & EFFECT_MUTATES) {
        sb_printf(sb, "  %s", effects & EFFECT_OUT ? "writes out=" : "mutates");
        for (size_t k = 0; k < nmutated; k++)
            sb_printf(sb, " %%%d", mutated[k]);
    }
    if (effects & EFFECT_RANDOM)
        sb_printf(sb, "  random");
}

static void sb_const(strbuf *sb, const pith_tensor *t)
{
    double d = 0;
    const char *p = tensor_data(t);
    switch (t->dtype) {
    case PITH_BOOL:
        sb_printf(sb, "%s", *(const bool *)p ? "True" : "False");
        return;
    case PITH_INT64:
        sb_printf(sb, "%" PRId64, *(const int64_t *)p);
        return;
    case PITH_FLOAT64:
        d = *(const double *)p;
        break;
    case PITH_FLOAT32:
        d = *(const float *)p;
        break;
    default:
        sb_printf(sb, "<%s>", pith_dtype_name(t->dtype));
        return;
    }
    sb_printf(sb, "%.17g", d);
}

char *pith_graph_dump(const pith_graph *g)
{
    if (!g)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_graph_dump: the graph is NULL");
    strbuf sb = {0};
    sb_printf(&sb, "graph #%" PRIu64 ": %zu inputs, %d params, %zu nodes, %zu outputs\n",
              g->ident->serial, g->ninputs, g->nparams, g->nnodes, g->noutputs);
    for (size_t v = 0; v < g->nvalues; v++) {
        const gvalue *gv = &g->values[v];
        if (gv->kind == GVAL_RESULT)
            continue;
        sb_printf(&sb, "  %%%zu = %s", v, gvalue_kind_name(gv->kind));
        if (gv->kind == GVAL_CONST) {
            sb_printf(&sb, " %s ", pith_dtype_name(gv->t->dtype));
            sb_const(&sb, gv->t);
        } else {
            sb_printf(&sb, " %d: ", gv->index);
            sb_geometry(&sb, gv->t);
        }
        sb_printf(&sb, "\n");
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const gnode *n = &g->nodes[i];
        sb_printf(&sb, "  node %zu: ", i);
        for (size_t r = 0; r < n->nresults; r++)
            sb_printf(&sb, "%s%%%d", r ? ", " : "", n->results[r]);
        sb_printf(&sb, " = %s(", op_display_name(n->op));
        for (size_t a = 0; a < n->nargs; a++) {
            if (a)
                sb_printf(&sb, ", ");
            sb_value(&sb, &n->args[a], n->refs, n->nrefs, a);
        }
        sb_printf(&sb, ")");
        sb_effects(&sb, n->effects, n->mutated, n->nmutated);
        for (size_t r = 0; r < n->nresults; r++) {
            const gvalue *rv = &g->values[n->results[r]];
            if (rv->node != (int)i)
                continue;
            sb_printf(&sb, "\n      %%%d: ", n->results[r]);
            sb_geometry(&sb, rv->t);
            if (rv->root != n->results[r])
                sb_printf(&sb, " (view of %%%d)", rv->root);
        }
        sb_printf(&sb, "\n");
    }
    for (size_t o = 0; o < g->noutputs; o++)
        sb_printf(&sb, "  output %zu: %%%d\n", o, g->outputs[o]);
    char *s = sb_finish(&sb);
    if (!s)
        pith_set_error(PITH_ERR_NOMEM, "pith_graph_dump: out of memory");
    return s;
}

static const char *step_kind_name(step_kind k)
{
    switch (k) {
    case STEP_VIEW:
        return "view";
    case STEP_ALLOC:
        return "alloc";
    case STEP_OUT:
        return "out";
    case STEP_GROUP:
        return "group";
    case STEP_CALL:
        break;
    }
    return "call";
}

static const char *slot_name(const cvalue *cv)
{
    switch (cv->slot) {
    case SLOT_INPUT:
        return "input";
    case SLOT_EXTERNAL:
        return cv->rk == ROOT_PARAM ? "param" : "const";
    case SLOT_STATIC:
        return cv->rk == ROOT_ARENA ? "arena" : "view of param";
    case SLOT_REBOUND:
        return "view (rebound per run)";
    case SLOT_RUN:
        return cv->from_call ? "allocated by its kernel" : "allocated by the run (output)";
    case SLOT_NONE:
        break;
    }
    return "unused";
}

char *pith_compiled_dump(const pith_compiled *c)
{
    if (!c)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_compiled_dump: the compiled graph is NULL");
    strbuf sb = {0};
    sb_printf(&sb,
              "compiled graph #%" PRIu64 ": %zu inputs, %zu outputs, %zu steps, %zu buffers, "
              "arena %zu bytes (intermediates %zu bytes)\n",
              c->serial, c->ninputs, c->noutputs, c->nsteps, c->nbuffers, c->arena_bytes,
              c->intermediate_bytes);
    for (size_t b = 0; b < c->nbuffers; b++) {
        const cbuffer *buf = &c->buffers[b];
        sb_printf(&sb, "  buffer %zu: %zu bytes at offset %zu, steps %d-%d, %%%d\n", b,
                  buf->bytes, buf->offset, buf->first, buf->last, buf->root);
    }
    for (size_t s = 0; s < c->nsteps; s++) {
        const cstep *st = &c->steps[s];
        if (st->kind == STEP_GROUP) {
            sb_printf(&sb, "  step %zu (nodes %d-%d): ", s, st->group->members[0].node,
                      st->group->members[st->group->nmembers - 1].node);
            sb_group(&sb, c, st->group);
            continue;
        }
        sb_printf(&sb, "  step %zu (node %d): %s %s(", s, st->node, step_kind_name(st->kind),
                  op_display_name(st->op));
        for (size_t a = 0; a < st->nargs; a++) {
            if (a)
                sb_printf(&sb, ", ");
            sb_value(&sb, &st->args[a], st->refs, st->nrefs, a);
        }
        sb_printf(&sb, ") ->");
        for (size_t r = 0; r < st->nresults; r++) {
            const cvalue *cv = &c->values[st->results[r]];
            sb_printf(&sb, " %%%d", st->results[r]);
            if (cv->def == (int)s && cv->meta) {
                sb_printf(&sb, " [");
                sb_geometry(&sb, cv->meta);
                sb_printf(&sb, ", %s", slot_name(cv));
                if (cv->slot == SLOT_STATIC && cv->rk == ROOT_ARENA && cv->root == st->results[r])
                    sb_printf(&sb, " buffer %d", cv->buffer);
                sb_printf(&sb, "]");
            }
        }
        if (st->kind == STEP_CALL && !st->invoke)
            sb_printf(&sb, "  boxed");
        if (st->effects)
            sb_effects(&sb, st->effects, NULL, 0);
        sb_printf(&sb, "\n");
    }
    for (size_t o = 0; o < c->noutputs; o++)
        sb_printf(&sb, "  output %zu: %%%d (%s)\n", o, c->outputs[o],
                  slot_name(&c->values[c->outputs[o]]));
    if (c->removed && c->removed[0])
        sb_printf(&sb, "removed:\n%s", c->removed);
    char *s = sb_finish(&sb);
    if (!s)
        pith_set_error(PITH_ERR_NOMEM, "pith_compiled_dump: out of memory");
    return s;
}

static void sb_operand(strbuf *sb, const cgroup *grp, int o)
{
    if (o < 0) {
        sb_printf(sb, "None");
        return;
    }
    const goperand *op = &grp->operands[o];
    sb_printf(sb, "%%%d", op->value);
    if (op->kind == OPERAND_CONST)
        sb_printf(sb, " (const)");
    if (op->kind == OPERAND_CAST)
        sb_printf(sb, " (as %s, tile buffer %d)", pith_dtype_name(op->to), op->scratch);
}

/* A group: its shape, tile and tile buffers, then one line per member. */
void sb_group(strbuf *sb, const pith_compiled *c, const cgroup *grp)
{
    char sizes[256];
    sb_printf(sb, "group of %zu%s, over %s (coalesced), tile %" PRId64 ", %d tile buffer%s\n",
              grp->nmembers, grp->gemm ? " (a GEMM and its epilogue)" : "", shape_format(grp->ndim, grp->sizes, sizes, sizeof sizes),
              grp->tile, grp->nscratch, grp->nscratch == 1 ? "" : "s");
    for (size_t k = 0; k < grp->nmembers; k++) {
        const gmember *m = &grp->members[k];
        const goperand *out = &grp->operands[m->out];
        const cvalue *cv = &c->values[m->result];
        sb_printf(sb, "      %%%d = %s(", m->result, op_display_name(m->op));
        for (int i = 0; i < m->f.nin; i++) {
            if (i)
                sb_printf(sb, ", ");
            sb_operand(sb, grp, m->in[i]);
        }
        if ((m->reduce || m->row) && m->row_dims > 1)
            sb_printf(sb, ", the last %d dims", m->row_dims);
        else if (m->reduce || m->row)
            sb_printf(sb, ", the last dim");
        if (m->gemm) { /* the panels at this moment's thread count: See Note [GEMM panels] */
            int panels = m->mm.panelable ? linalg_panels(m->mm.dtype, &m->mm.flat) : 1;
            sb_printf(sb, "; GEMM %" PRId64 "x%" PRId64 "x%" PRId64 ", ", m->mm.flat.n,
                      m->mm.flat.m, m->mm.flat.k);
            if (panels > 1)
                sb_printf(sb, "%d column panels, each with its epilogue", panels);
            else
                sb_printf(sb, "one call, then the epilogue");
        }
        if (out->value != m->result) { /* an aliased head: See Note [GEMM epilogues] */
            sb_printf(sb, ") [%s, in %%%d's buffer]\n", pith_dtype_name(m->f.out_dtype),
                      out->value);
        } else if (out->kind == OPERAND_SCRATCH) {
            sb_printf(sb, ") [%s, tile buffer %d]\n", pith_dtype_name(m->f.out_dtype),
                      out->scratch);
        } else {
            sb_printf(sb, ") [");
            if (cv->meta)
                sb_geometry(sb, cv->meta);
            sb_printf(sb, ", %s", slot_name(cv));
            if (cv->slot == SLOT_STATIC && cv->rk == ROOT_ARENA)
                sb_printf(sb, " buffer %d", cv->buffer);
            sb_printf(sb, "]\n");
        }
    }
}

void pith_string_free(char *s)
{
    free(s);
}
