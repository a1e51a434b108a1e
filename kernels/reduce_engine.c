/* reduce_engine.c — the strided driver of every reduction: it simplifies the iteration
 * space, picks a loop order and splits the work across threads. The loops it runs come
 * from reduce_loops.c (see Note [Reduction accumulators] in reduce.h).
 *
 * Note [Reduction loop order]
 * The input's dims are split into output dims (kept, in row-major order, since the output
 * is contiguous in that order) and reduced dims. Dims of size 1 are dropped, and adjacent
 * dims of one kind whose strides chain are merged. Unless the op is ordered (argmax and
 * friends, whose index is a row-major position), the reduced dims are sorted so that the
 * smallest stride is innermost, and broadcast (stride 0) dims outermost. The outputs are
 * then cut into items, the units of parallel work:
 *   - when the innermost reduced dim moves fastest in memory, an item is a run of outputs,
 *     each folding its strided runs with `inner`;
 *   - when an output dim moves fastest, an item is a block of outputs along it, folding
 *     whole rows with `outer` (vectorisable).
 * With few items (a full reduction, or a handful of outputs) the reduced space is also cut
 * into fixed chunks; the chunks run in parallel and their accumulators are combined in
 * chunk order. Items and chunks depend on the shape only, so results never depend on the
 * thread count.
 * Everything that can fail happens before the parallel regions. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels/reduce.h"

/* Outputs per block of the `outer` order, and the most of the `inner` order. */
#define OUTER_BLOCK 256
#define INNER_BLOCK 64
/* Fewer items than this also split the reduced space into chunks. */
#define MIN_ITEMS 16
/* An output dim shorter than this is not worth the `outer` order. */
#define OUTER_MIN_WIDTH 8
/* Elements per chunk of the reduced space (per output: divided by the outputs of an item). */
#define FULL_CHUNK PITH_GRAIN_SIZE

typedef struct {
    int n_out, n_red;
    int64_t out_sizes[PITH_MAX_DIMS], out_strides[PITH_MAX_DIMS]; /* input strides, bytes */
    int64_t red_sizes[PITH_MAX_DIMS], red_strides[PITH_MAX_DIMS]; /* innermost last */
    int64_t numel_out, numel_red;
} reduce_plan;

/* Accumulator storage: double-aligned, for up to `n` accumulators. */
#define ACC_WORDS(n) ((n) * REDUCE_MAX_ACC / sizeof(double))

/* Merges adjacent dims (outer first) whose strides chain; returns the new count. */
static int dims_coalesce(int n, int64_t *sizes, int64_t *strides)
{
    if (n == 0)
        return 0;
    int m = 0;
    for (int d = 1; d < n; d++) {
        if (strides[m] == strides[d] * sizes[d]) {
            sizes[m] *= sizes[d];
            strides[m] = strides[d];
        } else {
            m++;
            sizes[m] = sizes[d];
            strides[m] = strides[d];
        }
    }
    return m + 1;
}

/* Sort key of a reduced dim: larger goes outer; broadcast dims go outermost. */
static uint64_t red_order_key(int64_t stride)
{
    return stride == 0 ? UINT64_MAX : (uint64_t)stride;
}

static void plan_build(reduce_plan *pl, const pith_tensor *x, uint32_t mask, bool ordered)
{
    int64_t elem = (int64_t)pith_dtype_size(x->dtype);
    pl->n_out = pl->n_red = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (x->sizes[d] == 1)
            continue;
        if (mask & (1u << d)) {
            pl->red_sizes[pl->n_red] = x->sizes[d];
            pl->red_strides[pl->n_red++] = x->strides[d] * elem;
        } else {
            pl->out_sizes[pl->n_out] = x->sizes[d];
            pl->out_strides[pl->n_out++] = x->strides[d] * elem;
        }
    }
    if (!ordered) { /* insertion sort, stable, by descending key */
        for (int i = 1; i < pl->n_red; i++) {
            int64_t size = pl->red_sizes[i], stride = pl->red_strides[i];
            int j = i;
            for (; j > 0 && red_order_key(pl->red_strides[j - 1]) < red_order_key(stride); j--) {
                pl->red_sizes[j] = pl->red_sizes[j - 1];
                pl->red_strides[j] = pl->red_strides[j - 1];
            }
            pl->red_sizes[j] = size;
            pl->red_strides[j] = stride;
        }
    }
    pl->n_out = dims_coalesce(pl->n_out, pl->out_sizes, pl->out_strides);
    pl->n_red = dims_coalesce(pl->n_red, pl->red_sizes, pl->red_strides);
    if (pl->n_red == 0) { /* nothing to reduce: each output is one element */
        pl->red_sizes[0] = 1;
        pl->red_strides[0] = 0;
        pl->n_red = 1;
    }
    pl->numel_out = pl->numel_red = 1;
    for (int d = 0; d < pl->n_out; d++)
        pl->numel_out *= pl->out_sizes[d];
    for (int d = 0; d < pl->n_red; d++)
        pl->numel_red *= pl->red_sizes[d];
}

/* The byte offset of flat position `pos` of a row-major index space, with its index. */
static int64_t index_from_flat(int n, const int64_t *sizes, const int64_t *strides,
                               int64_t pos, int64_t *idx)
{
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        idx[d] = pos % sizes[d];
        pos /= sizes[d];
        off += idx[d] * strides[d];
    }
    return off;
}

/* Steps a row-major index over dims [0, n) by one, returning the new byte offset. */
static int64_t index_next(int n, const int64_t *sizes, const int64_t *strides, int64_t *idx,
                          int64_t off)
{
    for (int d = n - 1; d >= 0; d--) {
        off += strides[d];
        if (++idx[d] < sizes[d])
            return off;
        off -= idx[d] * strides[d];
        idx[d] = 0;
    }
    return off;
}

/* Folds reduced positions [a, b) at `base` into `acc` with `inner`, one run of the
 * innermost reduced dim at a time. */
static void span_fold(const reduce_kernel *k, void *acc, const char *base,
                      const reduce_plan *pl, int64_t a, int64_t b)
{
    int rows = pl->n_red - 1;
    int64_t len = pl->red_sizes[rows], stride = pl->red_strides[rows];
    int64_t idx[PITH_MAX_DIMS];
    int64_t col = a % len;
    int64_t off = index_from_flat(rows, pl->red_sizes, pl->red_strides, a / len, idx);
    for (int64_t pos = a; pos < b;) {
        int64_t take = len - col < b - pos ? len - col : b - pos;
        k->inner(acc, base + off + col * stride, take, stride, pos);
        pos += take;
        col = 0;
        off = index_next(rows, pl->red_sizes, pl->red_strides, idx, off);
    }
}

/* Folds reduced positions [a, b) into the `n` accumulators of a block of outputs that are
 * `step` bytes apart in the input, one reduced position at a time. */
static void span_fold_outer(const reduce_kernel *k, void *accs, int64_t n, int64_t step,
                            const char *base, const reduce_plan *pl, int64_t a, int64_t b)
{
    int rows = pl->n_red - 1;
    int64_t len = pl->red_sizes[rows], stride = pl->red_strides[rows];
    int64_t idx[PITH_MAX_DIMS];
    int64_t col = a % len;
    int64_t off = index_from_flat(rows, pl->red_sizes, pl->red_strides, a / len, idx);
    for (int64_t pos = a; pos < b;) {
        int64_t end = len - col < b - pos ? len : col + (b - pos);
        for (int64_t c = col; c < end; c++)
            k->outer(accs, base + off + c * stride, n, step, pos + c - col);
        pos += end - col;
        col = 0;
        off = index_next(rows, pl->red_sizes, pl->red_strides, idx, off);
    }
}

/* How the work is cut: outputs into items, and (when there are few items) the reduced space
 * into chunks, whose accumulators are combined in chunk order afterwards. Both depend on
 * the shape only, never on the thread count. See Note [Reduction loop order]. */
typedef struct {
    bool outer;
    int64_t block;   /* outputs per item (at most) */
    int64_t per_row; /* outer: items per row of the last output dim */
    int64_t nitems;
    int64_t chunk;   /* reduced positions per chunk */
    int64_t nchunks;
} reduce_split;

static void split_make(const reduce_plan *pl, bool outer, reduce_split *s)
{
    s->outer = outer;
    if (outer) {
        int64_t width = pl->out_sizes[pl->n_out - 1];
        s->block = width < OUTER_BLOCK ? width : OUTER_BLOCK;
        s->per_row = (width + OUTER_BLOCK - 1) / OUTER_BLOCK;
        s->nitems = pl->numel_out / width * s->per_row;
    } else {
        int64_t block = pl->numel_out / MIN_ITEMS;
        s->block = block < 1 ? 1 : block > INNER_BLOCK ? INNER_BLOCK : block;
        s->per_row = 0;
        s->nitems = (pl->numel_out + s->block - 1) / s->block;
    }
    s->chunk = FULL_CHUNK / s->block > 0 ? FULL_CHUNK / s->block : 1;
    s->nchunks = 1;
    if (s->nitems < MIN_ITEMS && pl->numel_red >= 2 * s->chunk)
        s->nchunks = (pl->numel_red + s->chunk - 1) / s->chunk;
}

/* The outputs of `item`: returns the first one and sets their count. */
static int64_t item_outputs(const reduce_plan *pl, const reduce_split *s, int64_t item,
                            int64_t *n)
{
    int64_t first, limit;
    if (s->outer) {
        int64_t width = pl->out_sizes[pl->n_out - 1];
        int64_t j0 = (item % s->per_row) * OUTER_BLOCK;
        first = (item / s->per_row) * width + j0;
        limit = width - j0;
    } else {
        first = item * s->block;
        limit = pl->numel_out - first;
    }
    *n = limit < s->block ? limit : s->block;
    return first;
}

/* Folds reduced positions [a, b) of every output of `item` into its `n` accumulators. */
static void item_fold(const reduce_kernel *k, const reduce_plan *pl, const reduce_split *s,
                      const char *base, int64_t item, int64_t n, void *accs, int64_t a,
                      int64_t b)
{
    int64_t idx[PITH_MAX_DIMS];
    if (s->outer) {
        int last = pl->n_out - 1;
        int64_t step = pl->out_strides[last];
        int64_t off = index_from_flat(last, pl->out_sizes, pl->out_strides, item / s->per_row,
                                      idx);
        off += (item % s->per_row) * OUTER_BLOCK * step;
        span_fold_outer(k, accs, n, step, base + off, pl, a, b);
        return;
    }
    int64_t off = index_from_flat(pl->n_out, pl->out_sizes, pl->out_strides, item * s->block,
                                  idx);
    for (int64_t j = 0; j < n; j++) {
        span_fold(k, (char *)accs + j * (int64_t)k->acc_size, base + off, pl, a, b);
        off = index_next(pl->n_out, pl->out_sizes, pl->out_strides, idx, off);
    }
}

/* One item, over the whole reduced space. */
static void run_item(const reduce_kernel *k, const reduce_ctx *ctx, const char *base,
                     const reduce_plan *pl, const reduce_split *s, int64_t item)
{
    double accs[ACC_WORDS(OUTER_BLOCK)];
    int64_t n, first = item_outputs(pl, s, item, &n);
    k->init(accs, n);
    item_fold(k, pl, s, base, item, n, accs, 0, pl->numel_red);
    k->finish(ctx, first, accs, n);
}

/* Part `w` (item w / nchunks, chunk w % nchunks) into its partial accumulators. */
static void run_part(const reduce_kernel *k, const char *base, const reduce_plan *pl,
                     const reduce_split *s, char *parts, size_t per_part, int64_t w)
{
    int64_t item = w / s->nchunks, a = (w % s->nchunks) * s->chunk;
    int64_t b = a + s->chunk < pl->numel_red ? a + s->chunk : pl->numel_red, n;
    char *accs = parts + w * (int64_t)per_part;
    item_outputs(pl, s, item, &n);
    k->init(accs, n);
    item_fold(k, pl, s, base, item, n, accs, a, b);
}

static pith_status run_split(const reduce_kernel *k, const reduce_ctx *ctx, const char *base,
                             const reduce_plan *pl, const reduce_split *s, int nthreads)
{
    if (s->nchunks == 1) {
        PITH_PARALLEL_FOR(item, s->nitems, nthreads, run_item(k, ctx, base, pl, s, item););
        return PITH_OK;
    }
    size_t per_part = (size_t)s->block * k->acc_size;
    int64_t nparts = s->nitems * s->nchunks;
    char *parts = malloc((size_t)nparts * per_part);
    if (!parts)
        return pith_set_error(PITH_ERR_NOMEM, "reduction: out of memory for %lld partials",
                              (long long)nparts);
    PITH_PARALLEL_FOR(w, nparts, nthreads, run_part(k, base, pl, s, parts, per_part, w););
    for (int64_t item = 0; item < s->nitems; item++) {
        int64_t n, first = item_outputs(pl, s, item, &n);
        char *acc = parts + item * s->nchunks * (int64_t)per_part;
        for (int64_t c = 1; c < s->nchunks; c++)
            for (int64_t j = 0; j < n; j++)
                k->combine(acc + j * (int64_t)k->acc_size,
                           acc + c * (int64_t)per_part + j * (int64_t)k->acc_size);
        k->finish(ctx, first, acc, n);
    }
    free(parts);
    return PITH_OK;
}

/* Outputs of an empty reduction: the finished identity (0 for sum, nan for mean, ...). */
static void run_empty(const reduce_kernel *k, const reduce_ctx *ctx, int64_t numel_out)
{
    double accs[ACC_WORDS(INNER_BLOCK)];
    for (int64_t o = 0; o < numel_out; o += INNER_BLOCK) {
        int64_t n = numel_out - o < INNER_BLOCK ? numel_out - o : INNER_BLOCK;
        k->init(accs, n);
        k->finish(ctx, o, accs, n);
    }
}

/* The `outer` order of Note [Reduction loop order]: whether an output dim moves fastest. */
static bool plan_outer(const reduce_plan *pl)
{
    if (pl->numel_out <= 1)
        return false;
    int64_t out_step = pl->out_strides[pl->n_out - 1];
    int64_t red_step = pl->red_strides[pl->n_red - 1];
    return pl->out_sizes[pl->n_out - 1] >= OUTER_MIN_WIDTH && pl->numel_red > 1 &&
           (red_step == 0 || out_step < red_step);
}

bool reduce_one_run_per_output(const pith_tensor *x, uint32_t mask, bool ordered)
{
    if (x->numel == 0)
        return false;
    reduce_plan pl;
    reduce_split split;
    plan_build(&pl, x, mask, ordered);
    bool outer = plan_outer(&pl);
    split_make(&pl, outer, &split);
    return !outer && pl.n_red == 1 && split.nchunks == 1;
}

pith_status reduce_run(const reduce_kernel *k, const reduce_ctx *ctx, const pith_tensor *x,
                       uint32_t mask)
{
    int64_t numel_out = 1, numel_red = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (mask & (1u << d))
            numel_red *= x->sizes[d];
        else
            numel_out *= x->sizes[d];
    }
    if (numel_out == 0)
        return PITH_OK;
    if (numel_red == 0) {
        run_empty(k, ctx, numel_out);
        return PITH_OK;
    }
    reduce_plan pl;
    reduce_split split;
    plan_build(&pl, x, mask, k->ordered);
    bool outer = plan_outer(&pl);
    split_make(&pl, outer, &split);
    return run_split(k, ctx, tensor_data(x), &pl, &split, parallel_threads_for(x->numel));
}
