/* reduce_engine.c — the strided driver of every reduction: it simplifies the iteration
 * space, picks a loop order and splits the work across threads. The loops it runs come
 * from reduce_loops.c (see Note [Reduction accumulators] in reduce.h).
 *
 * Note [Reduction loop order]
 * The input's dims are split into output dims (kept, in row-major order, since the output
 * is contiguous in that order) and reduced dims. Dims of size 1 are dropped, and adjacent
 * dims of one kind whose strides chain are merged. Unless the op is ordered (argmax and
 * friends, whose index is a row-major position), the reduced dims are sorted so that the
 * smallest stride is innermost, and broadcast (stride 0) dims outermost. Then:
 *   - one output: a full reduction, cut into fixed chunks of the reduced space; the chunks
 *     run in parallel and their accumulators are combined in chunk order, so the result
 *     does not depend on the thread count;
 *   - the innermost reduced dim moves fastest in memory: each output folds its strided
 *     runs with `inner`, outputs split across threads;
 *   - an output dim moves fastest: blocks of outputs along it fold whole rows with `outer`
 *     (vectorisable), blocks split across threads.
 * Everything that can fail happens before the parallel regions. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels/reduce.h"

/* Outputs per block of the `outer` order, and the most of the `inner` order. */
#define OUTER_BLOCK 256
#define INNER_BLOCK 64
/* An output dim shorter than this is not worth the `outer` order. */
#define OUTER_MIN_WIDTH 8
/* Elements per chunk of a full reduction. */
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

/* Folds every reduced position into the `n` accumulators of a block of outputs that are
 * `step` bytes apart in the input. */
static void span_fold_outer(const reduce_kernel *k, void *accs, int64_t n, int64_t step,
                            const char *base, const reduce_plan *pl)
{
    int rows = pl->n_red - 1;
    int64_t len = pl->red_sizes[rows], stride = pl->red_strides[rows];
    int64_t idx[PITH_MAX_DIMS] = {0};
    int64_t off = 0;
    for (int64_t pos = 0; pos < pl->numel_red;) {
        for (int64_t c = 0; c < len; c++)
            k->outer(accs, base + off + c * stride, n, step, pos + c);
        pos += len;
        off = index_next(rows, pl->red_sizes, pl->red_strides, idx, off);
    }
}

static pith_status run_full(const reduce_kernel *k, const reduce_ctx *ctx, const char *base,
                            const reduce_plan *pl, int nthreads)
{
    double acc[ACC_WORDS(1)];
    int64_t nchunks = (pl->numel_red + FULL_CHUNK - 1) / FULL_CHUNK;
    k->init(acc, 1);
    if (nchunks <= 1) {
        span_fold(k, acc, base, pl, 0, pl->numel_red);
        k->finish(ctx, 0, acc, 1);
        return PITH_OK;
    }
    char *partials = malloc((size_t)nchunks * k->acc_size);
    if (!partials)
        return pith_set_error(PITH_ERR_NOMEM, "reduction: out of memory for %lld partials",
                              (long long)nchunks);
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static)
    for (int64_t c = 0; c < nchunks; c++) {
        void *part = partials + c * (int64_t)k->acc_size;
        int64_t end = (c + 1) * FULL_CHUNK;
        k->init(part, 1);
        span_fold(k, part, base, pl, c * FULL_CHUNK, end < pl->numel_red ? end : pl->numel_red);
    }
    for (int64_t c = 0; c < nchunks; c++)
        k->combine(acc, partials + c * (int64_t)k->acc_size);
    free(partials);
    k->finish(ctx, 0, acc, 1);
    return PITH_OK;
}

static void run_inner(const reduce_kernel *k, const reduce_ctx *ctx, const char *base,
                      const reduce_plan *pl, int nthreads)
{
    int64_t block = pl->numel_out / (4 * (int64_t)nthreads);
    block = block < 1 ? 1 : block > INNER_BLOCK ? INNER_BLOCK : block;
    int64_t nblocks = (pl->numel_out + block - 1) / block;
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static)
    for (int64_t b = 0; b < nblocks; b++) {
        double accs[ACC_WORDS(INNER_BLOCK)];
        int64_t o0 = b * block;
        int64_t n = pl->numel_out - o0 < block ? pl->numel_out - o0 : block;
        int64_t idx[PITH_MAX_DIMS];
        int64_t off = index_from_flat(pl->n_out, pl->out_sizes, pl->out_strides, o0, idx);
        k->init(accs, n);
        for (int64_t j = 0; j < n; j++) {
            span_fold(k, (char *)accs + j * (int64_t)k->acc_size, base + off, pl, 0,
                      pl->numel_red);
            off = index_next(pl->n_out, pl->out_sizes, pl->out_strides, idx, off);
        }
        k->finish(ctx, o0, accs, n);
    }
}

static void run_outer(const reduce_kernel *k, const reduce_ctx *ctx, const char *base,
                      const reduce_plan *pl, int nthreads)
{
    int last = pl->n_out - 1;
    int64_t width = pl->out_sizes[last], step = pl->out_strides[last];
    int64_t per_row = (width + OUTER_BLOCK - 1) / OUTER_BLOCK;
    int64_t nitems = (pl->numel_out / width) * per_row;
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static)
    for (int64_t item = 0; item < nitems; item++) {
        double accs[ACC_WORDS(OUTER_BLOCK)];
        int64_t row = item / per_row, j0 = (item % per_row) * OUTER_BLOCK;
        int64_t n = width - j0 < OUTER_BLOCK ? width - j0 : OUTER_BLOCK;
        int64_t idx[PITH_MAX_DIMS];
        int64_t off = index_from_flat(last, pl->out_sizes, pl->out_strides, row, idx);
        k->init(accs, n);
        span_fold_outer(k, accs, n, step, base + off + j0 * step, pl);
        k->finish(ctx, row * width + j0, accs, n);
    }
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
    plan_build(&pl, x, mask, k->ordered);
    const char *base = tensor_data(x);
    int nthreads = parallel_threads_for(x->numel);
    if (pl.numel_out == 1)
        return run_full(k, ctx, base, &pl, nthreads);
    int64_t out_step = pl.out_strides[pl.n_out - 1];
    int64_t red_step = pl.red_strides[pl.n_red - 1];
    bool outer = pl.out_sizes[pl.n_out - 1] >= OUTER_MIN_WIDTH && pl.numel_red > 1 &&
                 (red_step == 0 || out_step < red_step);
    if (outer)
        run_outer(k, ctx, base, &pl, nthreads);
    else
        run_inner(k, ctx, base, &pl, nthreads);
    return PITH_OK;
}
