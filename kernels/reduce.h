/* reduce.h — the reduction engine shared by kernels/reduce*.c: the per-(op, dtype) loops,
 * the finishing step that writes outputs, and the strided driver that runs them.
 *
 * The ops themselves (validation, result dtypes, output shapes) live in reduce_ops.c and
 * reduce_arg.c; the loops in reduce_loops.c; the driver in reduce_engine.c. */
#ifndef PITH_KERNELS_REDUCE_H
#define PITH_KERNELS_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/parallel.h"
#include "core/tensor.h"

/* What a reduction computes. MEAN shares SUM's loops, STD shares VAR's, MAX_DIM/MIN_DIM
 * share ARGMAX/ARGMIN's; they differ in how the accumulators are finished. */
typedef enum {
    REDUCE_SUM,
    REDUCE_MEAN,
    REDUCE_PROD,
    REDUCE_AMAX,
    REDUCE_AMIN,
    REDUCE_ALL,
    REDUCE_ANY,
    REDUCE_VAR,
    REDUCE_STD,
    REDUCE_ARGMAX,
    REDUCE_ARGMIN,
    REDUCE_MAX_DIM,
    REDUCE_MIN_DIM
} reduce_op;

/* Where and how the results go. Outputs are contiguous; output element o is at index o. */
typedef struct reduce_ctx {
    char *out;
    char *out_index;  /* int64 indices for MAX_DIM/MIN_DIM, else NULL */
    pith_dtype out_dtype;
    int64_t count;    /* elements reduced into each output (MEAN divides by it) */
    double correction; /* VAR/STD */
} reduce_ctx;

/* Note [Reduction accumulators]
 * A reduction folds elements into accumulators whose type belongs to the (op, dtype) pair
 * (uint64 for integer sums, so that they wrap; double for float32 sums, so that 16M-element
 * sums stay accurate, with contiguous runs of 32 or more summed in float32 blocks first, by
 * Note [Sums of float32 arrays] in vecmath.h; a Welford triple for var). The driver never looks inside them: it
 * only knows their size. `inner` folds a strided run of `n` elements into one accumulator;
 * `outer` folds element j of a strided run into accumulator j (the vectorisable form when
 * the reduced dim is not the fastest-moving one); `combine` merges an accumulator that
 * covers later elements into one that covers earlier ones (for the chunks of a parallel
 * full reduction, always combined in chunk order, so results never depend on the thread
 * count). `index` is the position of the run's first element in the reduced space, in
 * row-major order: only ordered reductions (argmax and friends) use it. */
typedef struct {
    size_t acc_size;
    bool ordered; /* visit reduced dims in row-major order (the index matters) */
    void (*init)(void *accs, int64_t n);
    void (*inner)(void *acc, const char *p, int64_t n, int64_t stride, int64_t index);
    void (*outer)(void *accs, const char *p, int64_t n, int64_t stride, int64_t index);
    void (*combine)(void *acc, const void *later);
    /* Writes outputs o .. o+n-1 from n accumulators. */
    void (*finish)(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n);
} reduce_kernel;

/* The largest accumulator, in bytes. */
#define REDUCE_MAX_ACC 24

/* The loops of `op` for input elements of `dtype`; false when the pair has none (the op
 * validated the dtype first, so that is a defect). */
bool reduce_kernel_get(reduce_op op, pith_dtype dtype, reduce_kernel *out);

/* Reduces `x` over the dims in `mask` (bit d = dim d) into ctx->out. Only fails for
 * PITH_ERR_NOMEM, before any parallel region. */
pith_status reduce_run(const reduce_kernel *k, const reduce_ctx *ctx, const pith_tensor *x,
                       uint32_t mask);

/* ---- shared by the op files ---- */

/* Parses a dim list into a bit mask of dims of `x`. Negative dims wrap; a dim out of range
 * is PITH_ERR_INDEX and a repeated one PITH_ERR_VALUE, both naming `op`. An empty list
 * means every dim. A 0-dim tensor accepts dims 0 and -1 and gets mask 0. */
pith_status reduce_dims_mask(const char *op, const pith_tensor *x, const int64_t *dims,
                             size_t n, uint32_t *mask);
/* Wraps one dim of `x` (as reduce_dims_mask). */
pith_status reduce_dim_wrap(const char *op, const pith_tensor *x, int64_t dim, int *out);
/* The result shape: reduced dims become 1 with keepdim, else vanish. */
void reduce_out_shape(const pith_tensor *x, uint32_t mask, bool keepdim, int *ndim,
                      int64_t *sizes);
/* Product of the sizes of the reduced dims. */
int64_t reduce_count(const pith_tensor *x, uint32_t mask);
/* PyTorch's name of a dtype ("Long", "Float"), for messages quoting PyTorch. */
const char *reduce_torch_dtype_name(pith_dtype dtype);
/* A CPU kernel's inputs must be CPU tensors. */
pith_status reduce_check_cpu(const char *op, const pith_tensor *t);
/* `x` converted to `dtype` (a new reference; `x` itself, retained, when it already is). */
pith_tensor *reduce_convert(const pith_tensor *x, pith_dtype dtype);

/* Whether reduce_run of `x` over `mask` folds each output with one `inner` call over its
 * whole reduced run, in order (no `outer` blocks, no chunks): what a fused group must
 * reproduce to give the same bits (See Note [Fused reductions] in reduce_ops.c). */
bool reduce_one_run_per_output(const pith_tensor *x, uint32_t mask, bool ordered);

/* A reduction that a fused group of a compiled graph may end with. */
typedef struct {
    reduce_kernel k;
    reduce_ctx ctx; /* `out` is set per row by the group */
    int64_t row;    /* elements reduced into each output: the product of the dims reduced */
    int dims;       /* how many dims are reduced: the innermost ones */
} reduce_fusable;

struct pith_op;
/* Whether built-in op `op` with `args` (schema order; `self` a Meta stand-in) is sum, mean,
 * amax or amin of a floating tensor over its innermost dims (one or more), with no dtype
 * conversion, that eager computes with one `inner` run per output; if so, its kernel and
 * context. */
bool reduce_fusable_of(const struct pith_op *op, const pith_value *args, size_t nargs,
                       reduce_fusable *f);

/* A softmax or log_softmax over the last dim that a fused group may run on each row
 * (normalisation.c; See Note [Fused reductions]). */
typedef struct {
    pith_dtype dtype; /* float32 or float64: the input's and the result's */
    int as_log;
    int64_t row;
    void (*row_f32)(float *y, const float *x, int64_t len, int as_log);
    void (*row_f64)(double *y, const double *x, int64_t len, int as_log);
} softmax_fusable;

bool softmax_fusable_of(const struct pith_op *op, const pith_value *args, size_t nargs,
                        softmax_fusable *f);

/* One row: what softmax_fill runs on each row of a contiguous float32/float64 input. */
static inline void softmax_fusable_row(const softmax_fusable *f, char *y, const char *x)
{
    if (f->dtype == PITH_FLOAT32)
        f->row_f32((float *)(void *)y, (const float *)(const void *)x, f->row, f->as_log);
    else
        f->row_f64((double *)(void *)y, (const double *)(const void *)x, f->row, f->as_log);
}

/* A layer_norm over the innermost dims that a fused group may run on each row
 * (normalisation.c; See Note [Fused reductions]): weight and bias, when given, are
 * contiguous rows. */
typedef struct {
    pith_dtype dtype; /* float32 or float64 */
    int64_t row;      /* the product of the normalized dims */
    int dims;         /* how many: the innermost ones */
    double eps;
    void (*row_f32)(float *y, const float *x, const float *w, const float *b, int64_t len,
                    double eps);
    void (*row_f64)(double *y, const double *x, const double *w, const double *b,
                    int64_t len, double eps);
} layer_norm_fusable;

bool layer_norm_fusable_of(const struct pith_op *op, const pith_value *args, size_t nargs,
                           layer_norm_fusable *f);

/* One row: what layer_norm_fill runs on each row; `w` and `b` may be NULL. */
static inline void layer_norm_fusable_row(const layer_norm_fusable *f, char *y, const char *x,
                                          const char *w, const char *b)
{
    if (f->dtype == PITH_FLOAT32)
        f->row_f32((float *)(void *)y, (const float *)(const void *)x,
                   (const float *)(const void *)w, (const float *)(const void *)b, f->row,
                   f->eps);
    else
        f->row_f64((double *)(void *)y, (const double *)(const void *)x,
                   (const double *)(const void *)w, (const double *)(const void *)b, f->row,
                   f->eps);
}

#endif /* PITH_KERNELS_REDUCE_H */
