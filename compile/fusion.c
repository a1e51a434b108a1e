/* fusion.c — fused groups: fuse_steps forms them from runs of consecutive steps
 * after lowering (before the memory plan), group_run runs one, tile by tile. Which calls
 * may join a group, and with which loop, is decided by kernels/ (See Note [Fused
 * elementwise calls] in kernels/elementwise_ops.c), so a group computes what eager does.
 *
 * Note [Fusion legality]
 * A group is a run of consecutive steps, each a pure functional elementwise call that
 * elementwise_fusable_of accepts, whose results all have one shape and are contiguous and
 * non-empty. Nothing is reordered: on each tile the members run in step order, and the
 * tiles cover the shape once. That is eager's computation, element for element, because
 *  - a member writes only its own result: effects end a group (in-place, out= and random
 *    calls are never members), so their order with everything else holds;
 *  - an element of a member's result depends only on the same element of the members'
 *    results it reads (one shape, read without broadcasting), so a tile's chain needs
 *    nothing from another tile;
 *  - an input from outside the group is complete before the group starts (an earlier step
 *    makes it) and no member writes it; an input that is a view of a member's result
 *    would need a view step between members, which ends the run;
 *  - a result that anything after the group reads (a later step, a view, an output) is
 *    materialised: written to its own tensor, as an out step would. The others live only
 *    in a tile buffer and get no buffer in the arena;
 *  - for the memory plan the group is one step, so every buffer that it reads or writes is
 *    live for the whole group and shares no bytes with another: tile k of one member's
 *    result is written while other buffers are still read at tiles after k.
 * Casts are members too (to.dtype and clone, whose call steps have no .out). An input
 * from outside the group of another dtype than its loop reads (type promotion) is
 * converted as eager converts it, with cast_loop: a constant once, a tensor tile by tile
 * into a tile buffer that it holds for the whole group (OPERAND_CAST; at most
 * GROUP_MAX_CASTS per group, and only for elementwise members).
 * Left to the unfused path: integer and bool compute dtypes, a member's result read as
 * another dtype, results that are not contiguous, a group of one member (it stays an out
 * step), and fusion off (pith_compile_options.fuse).
 * A member that would need more than GROUP_MAX_SCRATCH tile buffers at once is
 * materialised instead.
 * A softmax or log_softmax over the last dim, or a layer_norm over the innermost dims, of a
 * member's result (when softmax_fusable_of or layer_norm_fusable_of accepts it;
 * layer_norm's weight and bias are contiguous rows from outside the group) is a member too,
 * run on whole rows with eager's row kernel; then, as for a root below, a tile is a row.
 * A reduction over the innermost dims of a member's result (sum, mean, amax, amin, when
 * reduce_fusable_of accepts it: See Note [Fused reductions]) may end a group as its root.
 * Then a tile is one whole row (at most TILE_MAX elements), the chain is computed into the
 * row's tile buffers and the root folds the row there with eager's `inner` call and writes
 * the row's output; the row stays the innermost dim when dims are coalesced (the root's
 * output steps 0 along it). A row of several dims is first made one dim for every operand,
 * which needs each to step through them as through one (contiguous there, or broadcast
 * along the whole row); an input broadcast along part of a row leaves the group unformed.
 * Every row member and the root of a group have rows of the same dims. The bits are
 * eager's: no tolerance is needed.
 * A product may start a group as its head: See Note [GEMM epilogues].
 *
 * Note [GEMM epilogues]
 * A matmul, mm, addmm or linear of float32 or float64 (matmul_fusable_of: one product, or a
 * batch whose rows stack, with a contiguous result) may start a group as its head, and the
 * elementwise members after it (no row ops and no root: a panel holds parts of rows) are its
 * epilogue: a bias, an activation, a residual add. The head's result is always
 * materialised, since the BLAS writes it, and its inputs are read whole by the product
 * (OPERAND_HEAD: no strides, not coalesced). Run:
 *  - when linalg_panels splits the product at the run's thread count (few rows, many
 *    columns: See Note [GEMM panels] in kernels/linalg_gemm.c), each thread of one region
 *    takes a column panel, copies the addend into it and computes it with a single-threaded
 *    BLAS call, then runs the epilogue on the panel's columns of every row (the innermost
 *    dim is kept apart when coalescing, so it is the product's columns) while they are in
 *    cache;
 *  - otherwise the product runs as its kernel runs it (matmul_fusable_run), then the
 *    epilogue runs over tiles as any group does.
 * Eager's linalg_run splits the product into the same panels, so the head's bits are
 * eager's; the epilogue is elementwise, so a panel's members need only that panel's
 * elements, and its loops give eager's bits for any split (See Note [Fused elementwise
 * calls]). The result is bitwise equal to eager: no tolerance is needed.
 *
 * Note [Fusion tiles]
 * A tile is `tile` consecutive elements of the innermost dim, after the group's dims are
 * coalesced over all of its operands. Each member runs its own loop over the tile, reading
 * its inputs' tiles and writing its result's, so a stream (a tile buffer, or the tile of an
 * input or a materialised result) is touched once by each member that uses it and should
 * still be in cache for the next. The tile is the largest power of two for which one tile
 * of every stream fits in a quarter of the L1 data cache (sysconf's size, else 32 KiB),
 * between 256 and 8192 elements: large enough that a loop call's fixed cost is small beside
 * its work, small enough that the chain stays in L1 and that the hardware prefetcher, which
 * runs a few KiB ahead of each input stream, has the next tile's inputs fetched while the
 * members compute. Measured (2026-12-04, EPYC with 48 KiB L1d and 1 MiB L2, 2 threads) on
 * gelu(x * w + b) * 0.5 + x over 4M float32, 6 streams: tiles of 512 elements ran at
 * 0.79-0.82x the speed of a hand-written one-pass loop, tiles of 1024 at 0.64-0.76x and of
 * 8192 (the earlier rule, half of L2) at 0.64-0.73x; 128 and 256 were as fast as 512.
 * Above PITH_GRAIN_SIZE
 * elements OpenMP splits the tiles among threads, in one region per group run (below it
 * there is no region: See Note [No OpenMP region for one thread]); each thread has its own
 * tile buffers, in the arena, so a run allocates none. The loops give the same bits for any
 * split of an array (See Note [Fused elementwise calls]), so the tile size and the thread
 * count never change results.
 * A group pays one loop call per member per tile, where eager pays one per member for the
 * whole array; so a group whose tiles are short is slower than no group. A group of more
 * than one tile needs tiles of GROUP_MIN_TILE elements or more: measured at 2 threads,
 * x * k then softmax over rows of 64 (256 rows) took 35 us fused and 30 us eager, over
 * rows of 16 89 us and 61 us, over rows of 1024 39 us and 40 us; a chain over a (5000, 3)
 * shape whose inner dim stays 3 (a broadcast or transposed input) 400 us fused and 124-169
 * us eager. A row member or a root on rows shorter than that is left unfused, and so is a
 * group whose innermost coalesced dim is. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/graph_internal.h"
#include "core/parallel.h"
#include "kernels/elementwise.h"

/* GROUP_MIN_TILE: the shortest tile (a row, or the innermost coalesced dim) worth a group
 * of several tiles. See Note [Fusion tiles]. */
enum { TILE_MIN = 256, TILE_MAX = 8192, GROUP_MIN_TILE = 256 };

static int resolve_value(const int *repl, int v)
{
    while (repl[v] != v)
        v = repl[v];
    return v;
}

static int value_root(const pith_graph *g, const int *repl, int v)
{
    return resolve_value(repl, g->values[v].root);
}

/* The inputs and result of a member that is not an elementwise call: `nin` of `dtype`. */
static elementwise_fusable member_f(int nin, pith_dtype dtype)
{
    return (elementwise_fusable){.nin = nin, .in_dtypes = {dtype, dtype, dtype},
                                 .out_dtype = dtype};
}

typedef enum {
    MEMBER_CHAIN, /* an elementwise call or a row op (softmax, log_softmax, layer_norm) */
    MEMBER_ROOT,  /* a reduction that can end a group */
    MEMBER_HEAD,  /* a product that can start one (See Note [GEMM epilogues]) */
} member_kind;

/* Step `st` as a member of kind `kind`: an out step of a call that kernels/ can fuse, with a
 * contiguous, non-empty result of the dtype it writes. Its inputs go in in[]. See Note
 * [Fused elementwise calls] and Note [Fused reductions]. */
/* Note [Fusion classes]
 * Which built-in ops may join a fused group, and as what, is a fact of the op file: the
 * `fusion` key of each functional overload (ops/ops.toml), written into
 * compile_fusion_classes[] (compile/generated/fusion_classes.c). A GEMM head is of class
 * FUSION_GEMM, a root of FUSION_REDUCTION, a chain member of FUSION_ELEMENTWISE or
 * FUSION_ROW; an op with no class never joins. Whether one call of such an op may (its
 * dtypes, dims and arguments, so that the group computes eager's bits) is the class's
 * *_fusable_of function in kernels/, which decodes the call (See Note [Fused elementwise
 * calls], Note [Fused reductions], Note [GEMM panels]); each of those accepts only ops of
 * its class. */
static fusion_class fusion_class_of(const pith_op *op)
{
    int id = op->builtin_id;
    return id >= 0 && id < PITH_NUM_BUILTIN_OPS ? (fusion_class)compile_fusion_classes[id]
                                                : FUSION_NONE;
}

static bool member_of_step(const pith_graph *g, const cstep *st, gmember *m, member_kind kind)
{
    bool root = kind == MEMBER_ROOT;
    /* A call step joins only as an elementwise call with a fresh result (to.dtype, clone:
     * composites without a .out). */
    bool call = st->kind == STEP_CALL;
    if ((st->kind != STEP_OUT && !call) || st->nresults != 1 || st->effects ||
        (call && (kind != MEMBER_CHAIN || g->values[st->results[0]].root != st->results[0])))
        return false;
    const gnode *n = &g->nodes[st->node];
    const pith_tensor *r = g->values[st->results[0]].t;
    if (!r->contiguous || r->numel == 0)
        return false;
    m->reduce = root;
    m->row = m->lnorm = m->gemm = false;
    m->row_dims = 0;
    m->row_len = 0;
    fusion_class class = fusion_class_of(n->op);
    if (kind == MEMBER_HEAD) {
        if (class != FUSION_GEMM || !matmul_fusable_of(n->op, n->args, n->nargs, &m->mm) ||
            r->dtype != m->mm.dtype)
            return false;
        m->gemm = true;
        m->f = member_f(m->mm.addend >= 0 ? 3 : 2, r->dtype);
    } else if (root) {
        if (class != FUSION_REDUCTION || !reduce_fusable_of(n->op, n->args, n->nargs, &m->r) ||
            m->r.row > TILE_MAX)
            return false;
        if (m->r.row < GROUP_MIN_TILE && r->numel > 1)
            return false; /* short rows, and more than one: See Note [Fusion tiles] */
        m->f = member_f(1, r->dtype);
        m->row_dims = m->r.dims;
        m->row_len = m->r.row;
    } else if (class == FUSION_ELEMENTWISE) {
        if (!elementwise_fusable_of(n->op, n->args, n->nargs, &m->f) ||
            r->dtype != m->f.out_dtype)
            return false;
    } else if (call || class != FUSION_ROW) {
        return false;
    } else if (softmax_fusable_of(n->op, n->args, n->nargs, &m->sm)) {
        m->row = true;
        m->f = member_f(1, r->dtype);
        m->row_dims = 1;
        m->row_len = m->sm.row;
    } else if (layer_norm_fusable_of(n->op, n->args, n->nargs, &m->ln)) {
        m->row = m->lnorm = true;
        m->f = member_f(3, r->dtype);
        m->row_dims = m->ln.dims;
        m->row_len = m->ln.row;
    } else {
        return false;
    }
    /* A row op on short rows, or on several of them: See Note [Fusion tiles]. */
    if (m->row && (m->row_len > TILE_MAX || (m->row_len < GROUP_MIN_TILE &&
                                             r->numel > m->row_len)))
        return false;
    m->op = n->op;
    m->node = st->node;
    m->result = st->results[0];
    /* Which input each tensor argument is: the first ones in order, for layer_norm input,
     * weight and bias (arguments 0, 2 and 3; None leaves -1), for a product A, B and the
     * addend (an addend that is not added is not read). */
    m->in[0] = m->in[1] = m->in[2] = -1;
    int found = 0;
    for (size_t k = 0; k < st->nrefs; k++) {
        const gref *ref = &st->refs[k];
        if (ref->arg < 0 || (size_t)ref->arg >= n->nargs)
            continue; /* the out= argument: the result itself */
        int i = m->lnorm ? (ref->arg == 0 ? 0 : ref->arg == 2 ? 1 : ref->arg == 3 ? 2 : -1)
                : m->gemm ? (ref->arg == m->mm.a ? 0 : ref->arg == m->mm.b ? 1
                             : ref->arg == m->mm.addend ? 2 : -1)
                          : ref->arg;
        if (m->gemm && i < 0 && ref->entry < 0)
            continue;
        if (ref->entry >= 0 || i < 0 || i >= m->f.nin)
            return false;
        m->in[i] = ref->value;
        found++;
    }
    if (m->gemm)
        return m->in[0] >= 0 && m->in[1] >= 0 && (m->mm.addend < 0 || m->in[2] >= 0);
    return m->lnorm ? m->in[0] >= 0 : found == m->f.nin;
}

/* The inputs of a run that its group converts tile by tile (OPERAND_CAST). */
typedef struct {
    int n;
    int value[GROUP_MAX_CASTS];
    pith_dtype to[GROUP_MAX_CASTS];
} run_casts;

/* Whether member `m` may join a run whose members' results are marked in `in_run`, and
 * whose casts are `casts` (updated when it may). An input from outside the group of
 * another dtype than the loop reads is converted by the group, as eager converts it (See
 * Note [Fused elementwise calls]), at most GROUP_MAX_CASTS of them per group, and only for
 * elementwise members. */
static bool inputs_fit(const pith_graph *g, const int *repl, const gmember *m,
                       const bool *in_run, run_casts *casts)
{
    run_casts after = *casts;
    for (int i = 0; i < m->f.nin; i++) {
        int v = m->in[i];
        if (v < 0)
            continue;
        const gvalue *gv = &g->values[v];
        pith_dtype want = m->f.in_dtypes[i];
        if (in_run[v]) {
            if (gv->t->dtype != want)
                return false;
            continue;
        }
        if (in_run[value_root(g, repl, v)])
            return false; /* a view of a member's result */
        if (gv->t->dtype == want || (gv->kind == GVAL_CONST && gv->t->numel == 1))
            continue;
        if (m->row || m->reduce || m->gemm || !cast_loop(want, gv->t->dtype))
            return false;
        int c = 0;
        while (c < after.n && !(after.value[c] == v && after.to[c] == want))
            c++;
        if (c == after.n) {
            if (after.n == GROUP_MAX_CASTS)
                return false;
            after.value[after.n] = v;
            after.to[after.n++] = want;
        }
    }
    *casts = after;
    return true;
}

static size_t l1_bytes(void)
{
    long n = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return n > 0 ? (size_t)n : 32 * 1024;
}

/* The operand of value `v` of kind `kind` (for a constant, read as `dtype`), or -1. */
static int operand_find(const cgroup *grp, operand_kind kind, int v, pith_dtype dtype,
                        const pith_dtype *operand_dtype)
{
    for (size_t o = 0; o < grp->noperands; o++)
        if (grp->operands[o].kind == kind && grp->operands[o].value == v &&
            ((kind != OPERAND_CONST && kind != OPERAND_CAST) || operand_dtype[o] == dtype))
            return (int)o;
    return -1;
}

/* The strides in bytes of `t` broadcast to (ndim, sizes): 0 on broadcast and size-1 dims. */
static void broadcast_strides(const pith_tensor *t, int ndim, const int64_t *sizes,
                              int64_t *strides)
{
    int shift = ndim - t->ndim;
    int64_t itemsize = (int64_t)dtype_itemsize(t->dtype);
    for (int d = 0; d < ndim; d++) {
        int td = d - shift;
        strides[d] = td >= 0 && t->sizes[td] != 1 && sizes[d] != 1 ? t->strides[td] * itemsize
                                                                    : 0;
    }
}

/* The state of group_build while it lays out one group's operands. */
typedef struct {
    const pith_graph *g;
    cgroup *grp;
    const bool *materialised; /* per value: something after the group reads it */
    pith_dtype operand_dtype[GROUP_MAX_OPERANDS];
    int last_use[GROUP_MAX_MEMBERS]; /* per member: the last member that reads its result */
    int scratch_owner[GROUP_MAX_SCRATCH]; /* per tile buffer: its member; -1 free, -2 a cast */
    int alias;       /* the member computed in place in the head's result (head_alias), or -1 */
    int next_cast;   /* the tile buffer of the next OPERAND_CAST */
    size_t itemsize; /* bytes per element of a tile buffer: the widest that one holds */
    bool rows;       /* a tile is a whole row: the innermost row_dims dims */
    int row_dims;
    int ndim; /* the group's shape (rows_flatten makes a row one dim) */
    int64_t sizes[PITH_MAX_DIMS];
} group_layout;

/* A group with room for `nm` members and every operand, or NULL when out of memory. */
static cgroup *group_alloc(size_t nm)
{
    cgroup *grp = calloc(1, sizeof *grp);
    if (!grp || !(grp->members = calloc(nm, sizeof *grp->members)) ||
        !(grp->operands = calloc(GROUP_MAX_OPERANDS, sizeof *grp->operands))) {
        if (grp)
            free(grp->members);
        free(grp);
        return NULL;
    }
    return grp;
}

/* Reads steps [start, start + nmembers) as the group's members, and notes the last member
 * that reads each member's result and whether (over how many dims) a tile is a row. */
static void members_read(group_layout *b, const pith_compiled *c, size_t start, bool head,
                         bool root)
{
    cgroup *grp = b->grp;
    size_t nm = grp->nmembers;
    for (size_t k = 0; k < nm; k++) {
        member_of_step(b->g, &c->steps[start + k], &grp->members[k],
                       k == 0 && head      ? MEMBER_HEAD
                       : k + 1 == nm && root ? MEMBER_ROOT
                                             : MEMBER_CHAIN);
        b->rows |= grp->members[k].row;
        if (grp->members[k].row_dims)
            b->row_dims = grp->members[k].row_dims;
        b->last_use[k] = -1;
        for (size_t j = 0; j < k; j++)
            for (int i = 0; i < grp->members[k].f.nin; i++)
                if (grp->members[k].in[i] >= 0 &&
                    grp->members[k].in[i] == grp->members[j].result)
                    b->last_use[j] = (int)k;
    }
}

/* A head's result that only one member reads, and nothing after the group, is written
 * into that member's result, which the member then computes in place (See Note [GEMM
 * epilogues]): that member, or -1. */
static int head_alias(const group_layout *b, bool head)
{
    const cgroup *grp = b->grp;
    if (!head || b->materialised[grp->members[0].result] || b->last_use[0] <= 0)
        return -1;
    int readers = 0;
    for (size_t k = 1; k < grp->nmembers; k++)
        for (int i = 0; i < grp->members[k].f.nin; i++)
            if (grp->members[k].in[i] == grp->members[0].result) {
                readers++;
                break;
            }
    if (readers == 1 &&
        grp->members[b->last_use[0]].f.out_dtype == grp->members[0].f.out_dtype)
        return b->last_use[0];
    return -1;
}

/* Tile buffers 0 .. ncasts-1 hold the converted inputs for the whole group (-2). */
static void casts_reserve(group_layout *b)
{
    cgroup *grp = b->grp;
    const pith_graph *g = b->g;
    run_casts casts = {0};
    for (size_t k = 0; k < grp->nmembers; k++) {
        const gmember *m = &grp->members[k];
        for (int i = 0; i < m->f.nin && !m->gemm; i++) {
            int v = m->in[i];
            pith_dtype want = m->f.in_dtypes[i];
            bool skip = v < 0 || g->values[v].kind == GVAL_CONST ||
                        g->values[v].t->dtype == want;
            for (size_t j = 0; j < k && !skip; j++)
                skip = grp->members[j].result == v;
            for (int c = 0; c < casts.n && !skip; c++)
                skip = casts.value[c] == v && casts.to[c] == want;
            if (skip || casts.n == GROUP_MAX_CASTS) /* at most that many: inputs_fit */
                continue;
            casts.value[casts.n] = v;
            casts.to[casts.n] = want;
            b->scratch_owner[casts.n++] = -2;
            if (dtype_itemsize(want) > b->itemsize)
                b->itemsize = dtype_itemsize(want);
        }
    }
    if (casts.n > grp->nscratch)
        grp->nscratch = casts.n;
}

/* The operand of input `i` of member `m`, value `v` from outside the group: read whole by
 * a product, a constant converted once, a tensor converted per tile, or a tensor read as
 * it is. Members that read `v` alike share it. */
static int input_operand(group_layout *b, const gmember *m, int i, int v)
{
    cgroup *grp = b->grp;
    const gvalue *gv = &b->g->values[v];
    operand_kind kind = m->gemm                             ? OPERAND_HEAD
                        : gv->kind == GVAL_CONST            ? OPERAND_CONST
                        : gv->t->dtype != m->f.in_dtypes[i] ? OPERAND_CAST
                                                            : OPERAND_VALUE;
    pith_dtype read_as = kind == OPERAND_CONST || kind == OPERAND_CAST ? m->f.in_dtypes[i]
                                                                        : gv->t->dtype;
    int o = operand_find(grp, kind, v, read_as, b->operand_dtype);
    if (o >= 0)
        return o;
    o = (int)grp->noperands++;
    goperand *op = &grp->operands[o];
    op->kind = kind;
    op->value = v;
    b->operand_dtype[o] = read_as;
    if (kind == OPERAND_CONST) {
        /* the conversion eager makes (elementwise_apply), made once */
        char *args[2] = {(char *)op->constant, tensor_data(gv->t)};
        int64_t one = 1, strides[2] = {0, 0};
        cast_loop(read_as, gv->t->dtype)(args, &one, strides, NULL);
    } else if (kind != OPERAND_HEAD) {
        broadcast_strides(gv->t, b->ndim, b->sizes, op->strides);
    }
    if (kind == OPERAND_CAST) {
        op->to = read_as;
        op->cast = cast_loop(read_as, gv->t->dtype);
        op->scratch = b->next_cast++;
    }
    return o;
}

/* Points member k's inputs at their operands: an earlier member's result, or a value from
 * outside. Inputs that are the aliased head's result wait in `pending` (member_output). */
static void member_inputs(group_layout *b, size_t k, bool *pending)
{
    gmember *m = &b->grp->members[k];
    for (int i = 0; i < m->f.nin; i++) {
        int v = m->in[i];
        int o = -1;
        if (v < 0)
            continue; /* None: stays -1 */
        if ((int)k == b->alias && v == b->grp->members[0].result) {
            pending[i] = true;
            continue;
        }
        for (size_t j = 0; j < k && o < 0; j++)
            if (b->grp->members[j].result == v)
                o = b->grp->members[j].out;
        m->in[i] = o >= 0 ? o : input_operand(b, m, i, v); /* a member's result, or outside */
    }
}

/* The strides of a root's output: one output per row, contiguous over the dims before the
 * row's, 0 along them. */
static void row_output_strides(const group_layout *b, const pith_tensor *r, int64_t *strides)
{
    int ndim = b->ndim;
    int64_t stride = (int64_t)dtype_itemsize(r->dtype);
    for (int d = ndim - 1; d >= ndim - b->row_dims; d--)
        strides[d] = 0;
    for (int d = ndim - b->row_dims - 1; d >= 0; d--) {
        strides[d] = b->sizes[d] == 1 ? 0 : stride;
        stride *= b->sizes[d];
    }
}

/* Gives member k's result its operand `o`: a root's output, a tile buffer when only later
 * members read it and one is free, else its own tensor. For the aliased member, the head's
 * result is that tensor too, and the `pending` inputs read it. */
static void member_output(group_layout *b, size_t k, const bool *pending)
{
    cgroup *grp = b->grp;
    gmember *m = &grp->members[k];
    /* Tile buffers of results whose last reader is before this member are free. */
    for (int s = 0; s < GROUP_MAX_SCRATCH; s++)
        if (b->scratch_owner[s] >= 0 && b->last_use[b->scratch_owner[s]] < (int)k)
            b->scratch_owner[s] = -1;
    const pith_tensor *r = b->g->values[m->result].t;
    int o = (int)grp->noperands++;
    goperand *op = &grp->operands[o];
    op->value = m->result;
    b->operand_dtype[o] = r->dtype;
    m->out = o;
    int free_slot = -1;
    for (int s = 0; s < GROUP_MAX_SCRATCH && free_slot < 0; s++)
        if (b->scratch_owner[s] == -1)
            free_slot = s;
    if (m->reduce) {
        op->kind = OPERAND_VALUE;
        row_output_strides(b, r, op->strides);
    } else if (!m->gemm && !b->materialised[m->result] && free_slot >= 0 &&
               b->last_use[k] >= 0) {
        op->kind = OPERAND_SCRATCH;
        op->scratch = free_slot;
        b->scratch_owner[free_slot] = (int)k;
        if (free_slot + 1 > grp->nscratch)
            grp->nscratch = free_slot + 1;
        if (dtype_itemsize(r->dtype) > b->itemsize)
            b->itemsize = dtype_itemsize(r->dtype);
    } else {
        op->kind = OPERAND_VALUE;
        broadcast_strides(r, b->ndim, b->sizes, op->strides);
    }
    if ((int)k != b->alias)
        return;
    if (op->kind != OPERAND_VALUE) { /* in a tile buffer: the head gets its own */
        o = (int)grp->noperands++;
        goperand *h = &grp->operands[o];
        h->kind = OPERAND_VALUE;
        h->value = grp->members[0].result;
        b->operand_dtype[o] = grp->members[0].f.out_dtype;
        broadcast_strides(b->g->values[h->value].t, b->ndim, b->sizes, h->strides);
    }
    grp->members[0].out = o;
    for (int i = 0; i < m->f.nin; i++)
        if (pending[i])
            m->in[i] = o;
}

/* Gives every member's inputs and result their operands, in step order. */
static void operands_place(group_layout *b)
{
    for (size_t k = 0; k < b->grp->nmembers; k++) {
        bool pending[3] = {false, false, false}; /* inputs that are the aliased head's result */
        member_inputs(b, k, pending);
        if (k == 0 && b->alias >= 0) {
            b->grp->members[k].out = -1; /* set with member `alias`'s result */
            continue;
        }
        member_output(b, k, pending);
    }
}

/* A row of several dims is one dim for every operand: each steps through them as
 * through one (contiguous, or broadcast along the whole row), else no group (false). */
static bool rows_flatten(group_layout *b)
{
    cgroup *grp = b->grp;
    int ndim = b->ndim, row_dims = b->row_dims;
    int64_t *sizes = b->sizes;
    if (!b->rows || row_dims <= 1)
        return true;
    for (size_t o = 0; o < grp->noperands; o++) {
        const goperand *op = &grp->operands[o];
        for (int d = ndim - row_dims; d < ndim - 1 &&
                                      (op->kind == OPERAND_VALUE || op->kind == OPERAND_CAST);
             d++)
            if (sizes[d] != 1 && op->strides[d] != op->strides[d + 1] * sizes[d + 1])
                return false;
    }
    for (int d = ndim - row_dims; d < ndim - 1; d++)
        sizes[ndim - 1] *= sizes[d];
    for (size_t o = 0; o < grp->noperands; o++)
        grp->operands[o].strides[ndim - row_dims] = grp->operands[o].strides[ndim - 1];
    sizes[ndim - row_dims] = sizes[ndim - 1];
    b->ndim = ndim - (row_dims - 1);
    return true;
}

/* Coalesce: drop size-1 dims, then merge each dim into the one inside it when every
 * tensor operand steps through both as through one. Sets the group's ndim and sizes. */
static void dims_coalesce(const group_layout *b)
{
    cgroup *grp = b->grp;
    int nd = 0;
    int64_t csizes[PITH_MAX_DIMS];
    int keep[PITH_MAX_DIMS];
    for (int d = 0; d < b->ndim; d++)
        if (b->sizes[d] != 1)
            keep[nd++] = d;
    for (size_t o = 0; o < grp->noperands; o++) {
        int64_t s[PITH_MAX_DIMS] = {0};
        for (int i = 0; i < nd; i++)
            s[i] = grp->operands[o].strides[keep[i]];
        memcpy(grp->operands[o].strides, s, sizeof s);
    }
    for (int i = 0; i < nd; i++)
        csizes[i] = b->sizes[keep[i]];
    int out_nd = 0;
    for (int i = nd - 1; i >= 0; i--) {
        /* Rows, and the panels of a product, keep the innermost dim apart. */
        bool merge = out_nd > 0 && !((b->rows || grp->gemm) && out_nd == 1);
        int inner = PITH_MAX_DIMS - out_nd; /* built from the end of the arrays */
        for (size_t o = 0; o < grp->noperands && merge; o++) {
            const goperand *op = &grp->operands[o];
            if ((op->kind == OPERAND_VALUE || op->kind == OPERAND_CAST) &&
                op->strides[i] != op->strides[inner] * csizes[inner])
                merge = false;
        }
        if (merge) {
            csizes[inner] *= csizes[i];
            continue;
        }
        int slot = PITH_MAX_DIMS - 1 - out_nd;
        csizes[slot] = csizes[i];
        for (size_t o = 0; o < grp->noperands; o++)
            grp->operands[o].strides[slot] = grp->operands[o].strides[i];
        out_nd++;
    }
    if (out_nd == 0) { /* one element */
        out_nd = 1;
        csizes[PITH_MAX_DIMS - 1] = 1;
        for (size_t o = 0; o < grp->noperands; o++)
            grp->operands[o].strides[PITH_MAX_DIMS - 1] = 0;
    }
    grp->ndim = out_nd;
    memmove(grp->sizes, csizes + PITH_MAX_DIMS - out_nd, (size_t)out_nd * sizeof *csizes);
    for (size_t o = 0; o < grp->noperands; o++)
        memmove(grp->operands[o].strides, grp->operands[o].strides + PITH_MAX_DIMS - out_nd,
                (size_t)out_nd * sizeof(int64_t));
}

/* The group's tile and the bytes of its tile buffers, per thread. See Note [Fusion tiles]. */
static void tile_choose(pith_compiled *c, const group_layout *b)
{
    cgroup *grp = b->grp;
    size_t itemsize = b->itemsize;
    size_t streams = (size_t)grp->nscratch;
    for (size_t o = 0; o < grp->noperands; o++)
        streams += grp->operands[o].kind == OPERAND_VALUE || grp->operands[o].kind == OPERAND_CAST;
    size_t budget = l1_bytes() / 4 / (itemsize > 4 ? itemsize : 4) / (streams ? streams : 1);
    int64_t tile = TILE_MIN;
    while (tile * 2 <= TILE_MAX && (size_t)(tile * 2) <= budget)
        tile *= 2;
    int64_t inner = grp->sizes[grp->ndim - 1];
    while (tile / 2 >= inner && tile > 64)
        tile /= 2;
    if (b->rows) /* a tile is a row: the innermost dim, kept apart when coalescing */
        tile = b->sizes[b->ndim - 1];
    grp->tile = tile;
    grp->scratch_itemsize = itemsize;
    size_t bytes = ((size_t)tile * itemsize * (size_t)grp->nscratch + 63) & ~(size_t)63;
    if (bytes > c->scratch_bytes)
        c->scratch_bytes = bytes;
}

/* Builds the group of steps [start, end) of c->steps; `materialised` says which results
 * something after the group reads. A row that is not one dim for every operand leaves
 * *out NULL. */
static pith_status group_build(pith_compiled *c, const pith_graph *g, const int *repl,
                               size_t start, size_t end, bool head, bool root,
                               const bool *materialised, cgroup **out)
{
    group_layout b; /* not zeroed: each field is set before it is read */
    b.grp = group_alloc(end - start);
    if (!b.grp)
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    cgroup *grp = b.grp;
    grp->nmembers = end - start;
    grp->gemm = head;
    b.g = g;
    b.materialised = materialised;
    b.rows = root;
    b.row_dims = 1;
    const pith_tensor *shape = g->values[c->steps[start].results[0]].t;
    b.ndim = shape->ndim;
    memcpy(b.sizes, shape->sizes, (size_t)b.ndim * sizeof *b.sizes);
    members_read(&b, c, start, head, root);
    for (int s = 0; s < GROUP_MAX_SCRATCH; s++)
        b.scratch_owner[s] = -1;
    b.alias = head_alias(&b, head);
    b.itemsize = 1;
    casts_reserve(&b);
    b.next_cast = 0;
    operands_place(&b);
    if (!rows_flatten(&b)) {
        cgroup_free(grp);
        *out = NULL;
        return PITH_OK;
    }
    dims_coalesce(&b);
    grp->numel = shape->numel;
    tile_choose(c, &b);
    *out = grp;
    return PITH_OK;
}

void cgroup_free(cgroup *grp)
{
    if (!grp)
        return;
    free(grp->members);
    free(grp->operands);
    free(grp);
}

/* Replaces steps [start, end) with one group step. */
static pith_status group_step(pith_compiled *c, const pith_graph *g, const int *repl,
                              size_t start, size_t end, bool head, bool root,
                              const bool *materialised, bool *formed)
{
    cgroup *grp;
    size_t scratch_before = c->scratch_bytes;
    if (group_build(c, g, repl, start, end, head, root, materialised, &grp) != PITH_OK)
        return pith_last_status();
    if (!grp) { /* a row that is not one dim for every operand */
        c->scratch_bytes = scratch_before;
        *formed = false;
        return PITH_OK;
    }
    int64_t inner = grp->sizes[grp->ndim - 1];
    if (inner < GROUP_MIN_TILE && grp->numel > inner) { /* See Note [Fusion tiles] */
        cgroup_free(grp);
        c->scratch_bytes = scratch_before;
        *formed = false;
        return PITH_OK;
    }
    *formed = true;
    cstep st = {0};
    st.kind = STEP_GROUP;
    st.node = grp->members[0].node;
    st.op = grp->members[0].op;
    st.group = grp;
    st.results = malloc(grp->nmembers * sizeof *st.results);
    st.refs = malloc((grp->noperands ? grp->noperands : 1) * sizeof *st.refs);
    if (!st.results || !st.refs) {
        cstep_clear(&st);
        return pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
    }
    for (size_t k = 0; k < grp->nmembers; k++) {
        const gmember *m = &grp->members[k];
        const goperand *out = &grp->operands[m->out];
        if (out->kind == OPERAND_VALUE && out->value == m->result) /* not an aliased head */
            st.results[st.nresults++] = m->result;
    }
    for (size_t o = 0; o < grp->noperands; o++) {
        const goperand *op = &grp->operands[o];
        bool known = false; /* made here, or already read */
        for (size_t r = 0; r < st.nresults; r++)
            known |= st.results[r] == op->value;
        for (size_t r = 0; r < st.nrefs; r++)
            known |= st.refs[r].value == op->value;
        if ((op->kind == OPERAND_VALUE || op->kind == OPERAND_HEAD ||
             op->kind == OPERAND_CAST) &&
            !known)
            st.refs[st.nrefs++] = (gref){-1, -1, op->value, 0};
    }
    for (size_t s = start; s < end; s++)
        cstep_clear(&c->steps[s]);
    c->steps[start] = st;
    memmove(&c->steps[start + 1], &c->steps[end], (c->nsteps - end) * sizeof *c->steps);
    c->nsteps -= end - start - 1;
    return PITH_OK;
}

pith_status fuse_steps(pith_compiled *c, const pith_graph *g, const int *repl)
{
    size_t nv = g->nvalues ? g->nvalues : 1;
    bool *in_run = calloc(nv, sizeof *in_run);
    bool *materialised = calloc(nv, sizeof *materialised);
    int *last_ref = malloc(nv * sizeof *last_ref);
    pith_status status = PITH_OK;
    if (!in_run || !materialised || !last_ref) {
        status = pith_set_error(PITH_ERR_NOMEM, "pith_graph_compile: out of memory");
        goto done;
    }
    /* The last step that reads each value, or any value in its storage. */
    for (size_t v = 0; v < g->nvalues; v++)
        last_ref[v] = -1;
    for (size_t s = 0; s < c->nsteps; s++)
        for (size_t k = 0; k < c->steps[s].nrefs; k++) {
            int v = c->steps[s].refs[k].value;
            last_ref[v] = (int)s;
            last_ref[value_root(g, repl, v)] = (int)s;
        }
    for (size_t o = 0; o < c->noutputs; o++) {
        materialised[c->outputs[o]] = true;
        materialised[value_root(g, repl, c->outputs[o])] = true;
    }
    size_t s = 0;
    while (s < c->nsteps) {
        gmember m;
        bool head = false;
        run_casts casts = {0};
        if (!member_of_step(g, &c->steps[s], &m, MEMBER_CHAIN) || m.row ||
            !inputs_fit(g, repl, &m, in_run, &casts)) {
            if (!member_of_step(g, &c->steps[s], &m, MEMBER_HEAD)) {
                s++;
                continue;
            }
            head = true; /* See Note [GEMM epilogues] */
        }
        const pith_tensor *shape = g->values[m.result].t;
        size_t end = s + 1;
        in_run[m.result] = true;
        int row_dims = 0; /* of the run's row members: all alike, since a tile is a row */
        while (end < c->nsteps && end - s < GROUP_MAX_MEMBERS) {
            gmember next;
            if (!member_of_step(g, &c->steps[end], &next, MEMBER_CHAIN) ||
                !sizes_equal(g->values[next.result].t->ndim, g->values[next.result].t->sizes,
                             shape->ndim, shape->sizes) ||
                (next.row && (head || !in_run[next.in[0]] ||
                              (row_dims && next.row_dims != row_dims))) ||
                !inputs_fit(g, repl, &next, in_run, &casts))
                break;
            if (next.row)
                row_dims = next.row_dims;
            in_run[next.result] = true;
            end++;
        }
        /* A reduction of a member's result over its innermost dims ends the group as its
         * root. */
        gmember last;
        bool root = !head && end < c->nsteps && end - s < GROUP_MAX_MEMBERS &&
                    member_of_step(g, &c->steps[end], &last, MEMBER_ROOT) &&
                    (!row_dims || last.row_dims == row_dims) && in_run[last.in[0]] &&
                    sizes_equal(g->values[last.in[0]].t->ndim, g->values[last.in[0]].t->sizes,
                                shape->ndim, shape->sizes) &&
                    inputs_fit(g, repl, &last, in_run, &casts);
        if (root)
            end++;
        for (size_t k = s; k < end; k++) {
            int v = c->steps[k].results[0];
            in_run[v] = false;
            if (last_ref[v] >= (int)end)
                materialised[v] = true;
        }
        bool formed = false;
        if (end - s >= 2 &&
            (status = group_step(c, g, repl, s, end, head, root, materialised, &formed)) !=
                PITH_OK)
            goto done;
        if (formed) {
            /* Steps after the group moved down: their last_ref entries too. */
            for (size_t v = 0; v < g->nvalues; v++)
                if (last_ref[v] >= (int)end)
                    last_ref[v] -= (int)(end - s - 1);
                else if (last_ref[v] >= (int)s)
                    last_ref[v] = (int)s;
            s++;
        } else {
            s = end;
        }
    }
done:
    free(in_run);
    free(materialised);
    free(last_ref);
    return status;
}

/* ---- running a group ---- */

static bool param_unchanged(const pith_tensor *t, const pith_tensor *meta)
{
    if (t->dtype != meta->dtype || !shape_equal(t->ndim, t->sizes, meta->ndim, meta->sizes))
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] > 1 && t->strides[d] != meta->strides[d])
            return false;
    return true;
}

/* Runs tiles [lo, hi) of the group, over columns [col_lo, col_hi) of its innermost dim;
 * returns the OR of the loops' results. A GEMM head is not run here. */
static int group_tiles(const cgroup *grp, char *const *base, unsigned char *scratch,
                       int64_t lo, int64_t hi, int64_t col_lo, int64_t col_hi)
{
    const int nd = grp->ndim;
    const int64_t tile = grp->tile, inner = col_hi;
    const int64_t chunks = (col_hi - col_lo + tile - 1) / tile;
    const size_t nops = grp->noperands;
    char *ptr[GROUP_MAX_OPERANDS];
    int64_t step[GROUP_MAX_OPERANDS];
    int result = 0;
    for (size_t o = 0; o < nops; o++) {
        const goperand *op = &grp->operands[o];
        step[o] = op->kind == OPERAND_VALUE ? op->strides[nd - 1]
                  : op->kind == OPERAND_CAST ? (int64_t)dtype_itemsize(op->to)
                                             : 0;
        if (op->kind == OPERAND_SCRATCH || op->kind == OPERAND_CAST)
            ptr[o] = (char *)scratch + (size_t)op->scratch * (size_t)tile * grp->scratch_itemsize;
    }
    for (size_t k = 0; k < grp->nmembers; k++) /* a tile buffer steps by its own dtype */
        if (grp->operands[grp->members[k].out].kind == OPERAND_SCRATCH)
            step[grp->members[k].out] = (int64_t)dtype_itemsize(grp->members[k].f.out_dtype);
    /* Items run row by row: the coordinates of the row (over the dims before the innermost)
     * and each operand's offset at its start advance as an odometer, with no division. */
    int64_t chunk = lo % chunks, idx[PITH_MAX_DIMS], row_off[GROUP_MAX_OPERANDS];
    int64_t rest = lo / chunks;
    for (int d = nd - 2; d >= 0; d--) {
        idx[d] = rest % grp->sizes[d];
        rest /= grp->sizes[d];
    }
    for (size_t o = 0; o < nops; o++) {
        row_off[o] = 0;
        for (int d = nd - 2; d >= 0; d--)
            row_off[o] += idx[d] * grp->operands[o].strides[d];
    }
    for (int64_t item = lo; item < hi; item++) {
        int64_t start = col_lo + chunk * tile;
        int64_t n = inner - start < tile ? inner - start : tile;
        for (size_t o = 0; o < nops; o++) {
            const goperand *op = &grp->operands[o];
            if (op->kind != OPERAND_VALUE && op->kind != OPERAND_CAST) {
                if (op->kind == OPERAND_CONST)
                    ptr[o] = base[o];
                continue;
            }
            int64_t offset = row_off[o] + start * op->strides[nd - 1];
            if (op->kind == OPERAND_VALUE) {
                ptr[o] = base[o] + offset;
                continue;
            }
            /* the tile converted into its buffer, as eager converts the whole input */
            char *args[2] = {ptr[o], base[o] + offset};
            int64_t strides[2] = {step[o], op->strides[nd - 1]}, count = n;
            result |= op->cast(args, &count, strides, NULL);
        }
        for (size_t k = grp->gemm; k < grp->nmembers; k++) {
            const gmember *m = &grp->members[k];
            if (m->lnorm) { /* the whole row, as layer_norm_fill runs it */
                layer_norm_fusable_row(&m->ln, ptr[m->out], ptr[m->in[0]],
                                       m->in[1] >= 0 ? ptr[m->in[1]] : NULL,
                                       m->in[2] >= 0 ? ptr[m->in[2]] : NULL);
                continue;
            }
            if (m->row) { /* the whole row, as softmax_fill runs it */
                softmax_fusable_row(&m->sm, ptr[m->out], ptr[m->in[0]]);
                continue;
            }
            if (m->reduce) { /* the root: the whole row, as reduce_run folds it */
                double acc[REDUCE_MAX_ACC / sizeof(double)];
                reduce_ctx ctx = m->r.ctx;
                ctx.out = ptr[m->out];
                m->r.k.init(acc, 1);
                m->r.k.inner(acc, ptr[m->in[0]], n, step[m->in[0]], 0);
                m->r.k.finish(&ctx, 0, acc, 1);
                continue;
            }
            char *args[4] = {ptr[m->out], NULL, NULL, NULL};
            int64_t strides[4] = {step[m->out], 0, 0, 0};
            for (int i = 0; i < m->f.nin; i++) {
                args[1 + i] = ptr[m->in[i]];
                strides[1 + i] = step[m->in[i]];
            }
            elementwise_ctx ctx = m->f.ctx;
            int64_t count = n;
            result |= m->f.loop(args, &count, strides, &ctx);
        }
        if (++chunk < chunks)
            continue;
        chunk = 0;
        for (int d = nd - 2; d >= 0; d--) { /* the next row */
            if (++idx[d] < grp->sizes[d]) {
                for (size_t o = 0; o < nops; o++)
                    row_off[o] += grp->operands[o].strides[d];
                break;
            }
            idx[d] = 0;
            for (size_t o = 0; o < nops; o++)
                row_off[o] -= (grp->sizes[d] - 1) * grp->operands[o].strides[d];
        }
    }
    return result;
}

static pith_status loops_result(int result)
{
    if (result)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "a fused loop reported failure %d (fused loops cannot fail: a "
                              "defect of the fusion pass)",
                              result);
    return PITH_OK;
}

/* The group of a GEMM head in `panels` column panels: each thread computes a panel, then
 * runs the epilogue on it. See Note [GEMM epilogues]. */
static pith_status gemm_panels_run(const pith_compiled *c, const cgroup *grp,
                                   char *const *base, int panels, unsigned char *scratch,
                                   int scratch_threads)
{
    const gmember *h = &grp->members[0];
    const int64_t rows = grp->numel / grp->sizes[grp->ndim - 1];
    int nthreads = scratch && scratch_threads < panels ? scratch_threads : panels;
    int result = 0;
    PITH_PARALLEL_REGION(nthreads, {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        unsigned char *mine = scratch ? scratch + (size_t)t * c->scratch_bytes : NULL;
        for (int p = t; p < panels; p += nt) { /* a thread may get several: the same bits */
            int64_t lo, hi;
            linalg_panel_cols(&h->mm.flat, p, panels, &lo, &hi);
            if (hi <= lo)
                continue;
            matmul_fusable_panel(&h->mm, base[h->in[0]], base[h->in[1]],
                                 h->in[2] >= 0 ? base[h->in[2]] : NULL, base[h->out], lo, hi);
            int64_t chunks = (hi - lo + grp->tile - 1) / grp->tile;
            int r = group_tiles(grp, base, mine, 0, rows * chunks, lo, hi);
            if (r)
                __atomic_fetch_or(&result, r, __ATOMIC_RELAXED);
        }
    });
    return loops_result(result);
}

pith_status group_run(const pith_compiled *c, const cgroup *grp, pith_tensor *const *slot,
                      unsigned char *scratch, int scratch_threads)
{
    char *base[GROUP_MAX_OPERANDS];
    for (size_t o = 0; o < grp->noperands; o++) {
        const goperand *op = &grp->operands[o];
        base[o] = NULL;
        if (op->kind == OPERAND_CONST) {
            base[o] = (char *)op->constant;
        } else if (op->kind == OPERAND_VALUE || op->kind == OPERAND_HEAD ||
                   op->kind == OPERAND_CAST) {
            const pith_tensor *t = slot[op->value];
            const cvalue *cv = &c->values[op->value];
            char have[256], want[256];
            if (!t)
                return pith_set_error(PITH_ERR_RUNTIME,
                                      "value %%%d has no tensor (a defect of the plan)",
                                      op->value);
            if (cv->slot == SLOT_EXTERNAL && !param_unchanged(t, cv->meta))
                return pith_set_error(PITH_ERR_VALUE,
                                      "param %%%d is now %s%s, but the graph was compiled for "
                                      "%s%s",
                                      op->value, pith_dtype_name(t->dtype),
                                      shape_format(t->ndim, t->sizes, have, sizeof have),
                                      pith_dtype_name(cv->meta->dtype),
                                      shape_format(cv->meta->ndim, cv->meta->sizes, want,
                                                   sizeof want));
            base[o] = tensor_data(t);
        }
    }
    const int64_t inner = grp->sizes[grp->ndim - 1];
    if (grp->gemm) {
        const gmember *h = &grp->members[0];
        int panels = h->mm.panelable ? linalg_panels(h->mm.dtype, &h->mm.flat) : 1;
        if (panels > 1)
            return gemm_panels_run(c, grp, base, panels, scratch, scratch_threads);
        const int *in = h->in;
        pith_status st = matmul_fusable_run(&h->mm, slot[grp->operands[in[0]].value],
                                            slot[grp->operands[in[1]].value],
                                            in[2] >= 0 ? slot[grp->operands[in[2]].value]
                                                       : NULL,
                                            slot[grp->operands[h->out].value]);
        if (st != PITH_OK)
            return st;
    }
    const int64_t items = grp->numel / inner * ((inner + grp->tile - 1) / grp->tile);
    int nthreads = parallel_threads_for(grp->numel);
    if (scratch && nthreads > scratch_threads) /* no tile buffers: any count */
        nthreads = scratch_threads;
    if (nthreads > items)
        nthreads = (int)items;
    int result = 0;
    PITH_PARALLEL_REGION(nthreads, {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t share = items / nt, extra = items % nt;
        int64_t lo = t * share + (t < extra ? t : extra);
        int64_t hi = lo + share + (t < extra);
        unsigned char *mine = scratch ? scratch + (size_t)t * c->scratch_bytes : NULL;
        int r = group_tiles(grp, base, mine, lo, hi, 0, inner);
        if (r)
            __atomic_fetch_or(&result, r, __ATOMIC_RELAXED);
    });
    return loops_result(result);
}
