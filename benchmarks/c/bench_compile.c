/* bench_compile.c — compiled graphs (pith_graph_compile, pith_compiled_run) against the same
 * calls made eagerly through pith_call_boxed, for an MLP 784-512-512-10 and a pre-norm
 * transformer block (d=256, seq=64, 4 heads):
 *   (a) the cost of pith_graph_compile beside one eager forward, batch 1 (target < 3x);
 *   (b) at batch 1, a compiled MLP run against the sum of its three linear calls timed alone
 *       on preallocated inputs (target <= 1.05x), and a compiled transformer block run against
 *       the same ops called eagerly one by one (target <= 0.8x);
 *   (c) the MLP comparison of (b) at batch 32 and at batch 256 (target <= 1.02x);
 *   (d) the transformer block comparison of (b) at batch 8 (target <= 0.7x).
 * Each figure is a median; paired figures are timed interleaved. The compiled results are
 * checked to equal eager's bitwise first.
 *
 * `bench_compile --count [mlp-batch]` times nothing: it makes each measured call once, after a warm-up,
 * inside a function of its own (count_*), for instruction counts that a loaded machine does
 * not disturb:
 *   PITH_NUM_THREADS=1 OMP_NUM_THREADS=1 valgrind --tool=callgrind \
 *       --callgrind-out-file=/tmp/cg.out build/benchmarks/c/bench_compile --count
 *   callgrind_annotate --inclusive=yes /tmp/cg.out | grep count_ */
#include "bench_common.h"

#include <math.h>

/* The runs of the MLP at batch 256 and of the block at batch 8 take milliseconds each: they
 * get fewer repetitions, to keep the whole benchmark within a couple of minutes. */
enum { COMPILE_REPETITIONS = 31, RUN_REPETITIONS = 201, LONG_RUN_REPETITIONS = 51 };

enum { MODEL = 256, SEQ = 64, HEADS = 4, HEAD_DIM = MODEL / HEADS, MAX_PARAMS = 32 };

/* ---- building a model eagerly or as a graph --------------------------------------------- */

/* Makes the calls of a model: eagerly through pith_call_boxed when `graph` is NULL, else
 * recorded with pith_graph_call; tensors are real or stand-ins accordingly. */
typedef struct {
    pith_graph *graph;
    pith_stack *stack;
    pith_tensor *real[MAX_PARAMS], *standin[MAX_PARAMS];
    int nparams;
} builder;

static void builder_init(builder *b, pith_graph *graph)
{
    memset(b, 0, sizeof *b);
    b->graph = graph;
    b->stack = pith_stack_new();
    bench_check(b->stack != NULL, "pith_stack_new");
}

static void builder_free(builder *b)
{
    for (int i = 0; i < b->nparams; i++)
        pith_release(b->standin[i]);
    pith_stack_free(b->stack);
}

/* `t` itself (eager) or its stand-in (graph), borrowed. */
static const pith_tensor *builder_param(builder *b, pith_tensor *t)
{
    if (!b->graph)
        return t;
    for (int i = 0; i < b->nparams; i++)
        if (b->real[i] == t)
            return b->standin[i];
    bench_check(b->nparams < MAX_PARAMS, "too many params");
    b->real[b->nparams] = t;
    b->standin[b->nparams] = pith_graph_param(b->graph, t);
    bench_check(b->standin[b->nparams] != NULL, "pith_graph_param");
    return b->standin[b->nparams++];
}

/* Calls `op` on the arguments pushed on b->stack and clears it; its first `n` tensor
 * results (a tensor list counts as its elements) go to `out` as new references. */
static void builder_call_n(builder *b, const pith_op *op, pith_tensor **out, size_t n)
{
    pith_status s = b->graph ? pith_graph_call(b->graph, op, b->stack)
                             : pith_call_boxed(op, b->stack);
    bench_check(s == PITH_OK, pith_op_name(op));
    if (pith_stack_kind(b->stack, 0) == PITH_VALUE_TENSOR_LIST) {
        size_t count = 0;
        pith_tensor *const *list = pith_stack_get_tensor_list(b->stack, 0, &count);
        bench_check(count >= n, "a list result");
        for (size_t i = 0; i < n; i++) {
            out[i] = list[i];
            pith_retain(out[i]);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            out[i] = pith_stack_get_tensor(b->stack, i);
            bench_check(out[i] != NULL, "a tensor result");
        }
    }
    pith_stack_drop(b->stack, pith_stack_size(b->stack));
}

static pith_tensor *builder_call(builder *b, const pith_op *op)
{
    pith_tensor *out;
    builder_call_n(b, op, &out, 1);
    return out;
}

/* Pushing arguments, with the benchmark's abort on failure. */
static void push_tensor(builder *b, const pith_tensor *t)
{
    bench_check(pith_stack_push_tensor(b->stack, t) == PITH_OK, "pith_stack_push_tensor");
}
static void push_int(builder *b, int64_t v)
{
    bench_check(pith_stack_push_int(b->stack, v) == PITH_OK, "pith_stack_push_int");
}
static void push_double(builder *b, double v)
{
    bench_check(pith_stack_push_double(b->stack, v) == PITH_OK, "pith_stack_push_double");
}
static void push_ints(builder *b, const int64_t *v, size_t n)
{
    bench_check(pith_stack_push_int_list(b->stack, v, n) == PITH_OK, "pith_stack_push_int_list");
}

/* The ops, looked up once so that the eager forward times the calls alone. */
static struct {
    const pith_op *linear, *relu, *layer_norm, *split, *view, *transpose, *matmul, *mul,
        *softmax, *reshape, *add, *gelu;
} ops;

static const pith_op *op_find(const char *name)
{
    const pith_op *op = pith_op_find(name);
    bench_check(op != NULL, name);
    return op;
}

static void ops_find(void)
{
    ops.linear = op_find("linear");
    ops.relu = op_find("relu");
    ops.layer_norm = op_find("layer_norm");
    ops.split = op_find("split.Tensor");
    ops.view = op_find("view");
    ops.transpose = op_find("transpose.int");
    ops.matmul = op_find("matmul");
    ops.mul = op_find("mul.Tensor");
    ops.softmax = op_find("softmax.int");
    ops.reshape = op_find("reshape");
    ops.add = op_find("add.Tensor");
    ops.gelu = op_find("gelu");
}

/* A float32 tensor of values uniform in [-scale, scale] from a fixed-seed generator. */
static pith_tensor *uniform(int ndim, const int64_t *sizes, double scale, uint64_t *state)
{
    pith_tensor *t = pith_empty(ndim, sizes, PITH_FLOAT32);
    bench_check(t != NULL, "pith_empty");
    float *data = pith_data_ptr(t);
    for (int64_t i = 0; i < pith_numel(t); i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        data[i] = (float)(scale * ((double)(*state >> 11) * 0x1.0p-52 - 1.0));
    }
    return t;
}

/* Each op helper borrows its arguments and returns a new reference. */
static pith_tensor *linear(builder *b, const pith_tensor *x, pith_tensor *weight,
                           pith_tensor *bias)
{
    push_tensor(b, x);
    push_tensor(b, builder_param(b, weight));
    push_tensor(b, builder_param(b, bias));
    return builder_call(b, ops.linear);
}

static pith_tensor *unary(builder *b, const pith_op *op, const pith_tensor *x)
{
    push_tensor(b, x);
    return builder_call(b, op);
}

static pith_tensor *binary(builder *b, const pith_op *op, const pith_tensor *x,
                           const pith_tensor *y)
{
    push_tensor(b, x);
    push_tensor(b, y);
    return builder_call(b, op);
}

/* ---- the MLP ---------------------------------------------------------------------------- */

typedef struct {
    pith_tensor *weight[3], *bias[3];
} mlp;

static void mlp_init(mlp *m, uint64_t *state)
{
    const int64_t widths[4] = {784, 512, 512, 10};
    for (int i = 0; i < 3; i++) {
        const int64_t w[2] = {widths[i + 1], widths[i]};
        double scale = 1.0 / sqrt((double)widths[i]);
        m->weight[i] = uniform(2, w, scale, state);
        m->bias[i] = uniform(1, &w[0], scale, state);
    }
}

static void mlp_free(mlp *m)
{
    for (int i = 0; i < 3; i++) {
        pith_release(m->weight[i]);
        pith_release(m->bias[i]);
    }
}

static pith_tensor *mlp_forward(builder *b, const mlp *m, const pith_tensor *x)
{
    pith_tensor *t = linear(b, x, m->weight[0], m->bias[0]);
    pith_tensor *h = unary(b, ops.relu, t);
    pith_release(t);
    t = linear(b, h, m->weight[1], m->bias[1]);
    pith_release(h);
    h = unary(b, ops.relu, t);
    pith_release(t);
    t = linear(b, h, m->weight[2], m->bias[2]);
    pith_release(h);
    return t;
}

/* ---- the transformer block ---------------------------------------------------------------- */

typedef struct {
    pith_tensor *ln_weight[2], *ln_bias[2];
    pith_tensor *weight[4], *bias[4]; /* qkv, out, up, down */
    pith_tensor *scale;               /* 1/sqrt(head dim), a 0-dim float64 tensor */
} block;

static void block_init(block *k, uint64_t *state)
{
    const int64_t model = MODEL;
    for (int i = 0; i < 2; i++) {
        k->ln_weight[i] = uniform(1, &model, 1.0, state);
        k->ln_bias[i] = uniform(1, &model, 0.5, state);
    }
    const int64_t shapes[4][2] = {
        {3 * MODEL, MODEL}, {MODEL, MODEL}, {4 * MODEL, MODEL}, {MODEL, 4 * MODEL}};
    for (int i = 0; i < 4; i++) {
        double scale = 1.0 / sqrt((double)shapes[i][1]);
        k->weight[i] = uniform(2, shapes[i], scale, state);
        k->bias[i] = uniform(1, &shapes[i][0], scale, state);
    }
    k->scale = pith_scalar_tensor(1.0 / sqrt((double)HEAD_DIM), PITH_FLOAT64);
    bench_check(k->scale != NULL, "pith_scalar_tensor");
}

static void block_free(block *k)
{
    for (int i = 0; i < 2; i++) {
        pith_release(k->ln_weight[i]);
        pith_release(k->ln_bias[i]);
    }
    for (int i = 0; i < 4; i++) {
        pith_release(k->weight[i]);
        pith_release(k->bias[i]);
    }
    pith_release(k->scale);
}

static pith_tensor *layer_norm(builder *b, const pith_tensor *x, pith_tensor *weight,
                               pith_tensor *bias)
{
    const int64_t model = MODEL;
    push_tensor(b, x);
    push_ints(b, &model, 1);
    push_tensor(b, builder_param(b, weight));
    push_tensor(b, builder_param(b, bias));
    push_double(b, 1e-5);
    return builder_call(b, ops.layer_norm);
}

static pith_tensor *transpose(builder *b, const pith_tensor *x, int64_t dim0, int64_t dim1)
{
    push_tensor(b, x);
    push_int(b, dim0);
    push_int(b, dim1);
    return builder_call(b, ops.transpose);
}

/* (batch, seq, model) -> (batch, heads, seq, head dim) */
static pith_tensor *heads(builder *b, const pith_tensor *part, int64_t batch)
{
    const int64_t sizes[4] = {batch, SEQ, HEADS, HEAD_DIM};
    push_tensor(b, part);
    push_ints(b, sizes, 4);
    pith_tensor *v = builder_call(b, ops.view);
    pith_tensor *out = transpose(b, v, 1, 2);
    pith_release(v);
    return out;
}

/* x + attention(ln1(x)), then that + mlp(ln2(that)): the same calls as
 * tests/compile/models_test.cc. */
static pith_tensor *block_forward(builder *b, const block *k, const pith_tensor *x,
                                  int64_t batch)
{
    pith_tensor *h = layer_norm(b, x, k->ln_weight[0], k->ln_bias[0]);
    pith_tensor *packed = linear(b, h, k->weight[0], k->bias[0]);
    pith_release(h);
    pith_tensor *parts[3];
    push_tensor(b, packed);
    push_int(b, MODEL);
    push_int(b, -1);
    builder_call_n(b, ops.split, parts, 3);
    pith_release(packed);
    pith_tensor *q = heads(b, parts[0], batch), *key = heads(b, parts[1], batch),
                *v = heads(b, parts[2], batch);
    for (int i = 0; i < 3; i++)
        pith_release(parts[i]);
    pith_tensor *kt = transpose(b, key, -2, -1);
    pith_release(key);
    pith_tensor *t = binary(b, ops.matmul, q, kt);
    pith_release(q);
    pith_release(kt);
    pith_tensor *scores = binary(b, ops.mul, t, builder_param(b, k->scale));
    pith_release(t);
    push_tensor(b, scores);
    push_int(b, -1);
    pith_tensor *attn = builder_call(b, ops.softmax);
    pith_release(scores);
    t = binary(b, ops.matmul, attn, v);
    pith_release(attn);
    pith_release(v);
    pith_tensor *ctx = transpose(b, t, 1, 2);
    pith_release(t);
    const int64_t sizes[3] = {batch, SEQ, MODEL};
    push_tensor(b, ctx);
    push_ints(b, sizes, 3);
    t = builder_call(b, ops.reshape);
    pith_release(ctx);
    pith_tensor *o = linear(b, t, k->weight[1], k->bias[1]);
    pith_release(t);
    pith_tensor *x1 = binary(b, ops.add, x, o);
    pith_release(o);
    h = layer_norm(b, x1, k->ln_weight[1], k->ln_bias[1]);
    t = linear(b, h, k->weight[2], k->bias[2]);
    pith_release(h);
    h = unary(b, ops.gelu, t);
    pith_release(t);
    t = linear(b, h, k->weight[3], k->bias[3]);
    pith_release(h);
    pith_tensor *y = binary(b, ops.add, x1, t);
    pith_release(x1);
    pith_release(t);
    return y;
}

/* ---- the measurements --------------------------------------------------------------------- */

/* A model's forward over an input whose dim 0 is `batch` (the MLP needs no batch: linear and
 * relu take any leading dims). */
typedef pith_tensor *(*forward_fn)(builder *b, const void *model, const pith_tensor *x,
                                   int64_t batch);

static pith_tensor *mlp_forward_fn(builder *b, const void *model, const pith_tensor *x,
                                   int64_t batch)
{
    return mlp_forward(b, model, x);
}

static pith_tensor *block_forward_fn(builder *b, const void *model, const pith_tensor *x,
                                     int64_t batch)
{
    return block_forward(b, model, x, batch);
}

/* The model as a graph of one float32 input of `sizes`; sizes[0] is the batch. */
static pith_graph *model_graph(forward_fn forward, const void *model, int ndim,
                               const int64_t *sizes)
{
    pith_graph *g = pith_graph_new();
    bench_check(g != NULL, "pith_graph_new");
    pith_tensor *x = pith_graph_input(g, PITH_FLOAT32, ndim, sizes, NULL);
    bench_check(x != NULL, "pith_graph_input");
    builder b;
    builder_init(&b, g);
    pith_tensor *y = forward(&b, model, x, sizes[0]);
    bench_check(pith_graph_output(g, y) == PITH_OK, "pith_graph_output");
    pith_release(y);
    pith_release(x);
    builder_free(&b);
    return g;
}

/* The model called eagerly on `x`, whose dim 0 is the batch. */
static pith_tensor *eager_forward(forward_fn forward, const void *model, const pith_tensor *x)
{
    builder b;
    builder_init(&b, NULL);
    pith_tensor *y = forward(&b, model, x, pith_size(x, 0));
    builder_free(&b);
    return y;
}

static pith_tensor *compiled_forward(pith_compiled *c, pith_tensor *x)
{
    pith_tensor *y = NULL;
    bench_check(pith_compiled_run(c, &x, 1, &y, 1) == PITH_OK, "pith_compiled_run");
    return y;
}

static void check_same_bits(const pith_tensor *a, const pith_tensor *b, const char *what)
{
    bool same = pith_tensor_dtype(a) == pith_tensor_dtype(b) && pith_numel(a) == pith_numel(b) &&
                pith_is_contiguous(a) && pith_is_contiguous(b) &&
                memcmp(pith_data_ptr(a), pith_data_ptr(b),
                       (size_t)pith_numel(a) * pith_dtype_size(pith_tensor_dtype(a))) == 0;
    bench_check(same, what);
}

/* (a): median seconds of pith_graph_compile, and of one eager forward, interleaved. */
static void compile_cost(const char *name, forward_fn forward, const void *model, int ndim,
                         const int64_t *sizes, double *compile_s, double *eager_s)
{
    uint64_t state = 99;
    pith_tensor *x = uniform(ndim, sizes, 2.0, &state);
    pith_graph *g = model_graph(forward, model, ndim, sizes);
    double compile_times[COMPILE_REPETITIONS], eager_times[COMPILE_REPETITIONS];
    for (int rep = -2; rep < COMPILE_REPETITIONS; rep++) { /* two warm-ups */
        double start = bench_seconds();
        pith_compiled *c = pith_graph_compile(g, NULL);
        double compile_time = bench_seconds() - start;
        bench_check(c != NULL, "pith_graph_compile");
        start = bench_seconds();
        pith_tensor *y = eager_forward(forward, model, x);
        double eager_time = bench_seconds() - start;
        if (rep == -2) {
            pith_tensor *z = compiled_forward(c, x);
            check_same_bits(y, z, name);
            pith_release(z);
        }
        pith_release(y);
        pith_compiled_free(c);
        if (rep >= 0) {
            compile_times[rep] = compile_time;
            eager_times[rep] = eager_time;
        }
    }
    *compile_s = bench_median(compile_times, COMPILE_REPETITIONS);
    *eager_s = bench_median(eager_times, COMPILE_REPETITIONS);
    pith_graph_free(g);
    pith_release(x);
}

/* (b), (c) for the MLP at `batch`: median seconds of a compiled run, the sum of the
 * medians of each of its linear calls alone (pith_linear on preallocated inputs of that
 * batch), and of an eager forward, interleaved, over `repetitions` (at most
 * RUN_REPETITIONS). */
static void mlp_overhead(const mlp *m, int64_t batch, int repetitions, double *compiled_s,
                         double *gemms_s, double *eager_s)
{
    uint64_t state = 5;
    const int64_t sizes[2] = {batch, 784};
    pith_tensor *x = uniform(2, sizes, 2.0, &state);
    pith_tensor *inputs[3];
    inputs[0] = x;
    for (int i = 1; i < 3; i++) {
        const int64_t s[2] = {batch, 512};
        inputs[i] = uniform(2, s, 1.0, &state);
    }
    pith_graph *g = model_graph(mlp_forward_fn, m, 2, sizes);
    pith_compiled *c = pith_graph_compile(g, NULL);
    bench_check(c != NULL, "pith_graph_compile");
    double run_times[RUN_REPETITIONS], gemm_times[3][RUN_REPETITIONS],
        eager_times[RUN_REPETITIONS];
    bench_check(repetitions <= RUN_REPETITIONS, "repetitions <= RUN_REPETITIONS");
    for (int rep = -10; rep < repetitions; rep++) {
        double start = bench_seconds();
        pith_tensor *y = compiled_forward(c, x);
        double run_time = bench_seconds() - start;
        if (rep == -10) {
            pith_tensor *e = eager_forward(mlp_forward_fn, m, x);
            check_same_bits(e, y, "the compiled MLP");
            pith_release(e);
        }
        pith_release(y);
        for (int i = 0; i < 3; i++) {
            start = bench_seconds();
            pith_tensor *z = pith_linear(inputs[i], m->weight[i], m->bias[i]);
            double t = bench_seconds() - start;
            bench_check(z != NULL, "pith_linear");
            pith_release(z);
            if (rep >= 0)
                gemm_times[i][rep] = t;
        }
        start = bench_seconds();
        pith_tensor *e = eager_forward(mlp_forward_fn, m, x);
        double eager_time = bench_seconds() - start;
        pith_release(e);
        if (rep >= 0) {
            run_times[rep] = run_time;
            eager_times[rep] = eager_time;
        }
    }
    *compiled_s = bench_median(run_times, repetitions);
    *eager_s = bench_median(eager_times, repetitions);
    *gemms_s = 0;
    for (int i = 0; i < 3; i++)
        *gemms_s += bench_median(gemm_times[i], repetitions);
    pith_compiled_free(c);
    pith_graph_free(g);
    for (int i = 0; i < 3; i++)
        pith_release(inputs[i]);
}

/* (b), (d) for the block at `batch`: median seconds of a compiled run and of the eager
 * calls, interleaved, over `repetitions` (at most RUN_REPETITIONS). */
static void block_overhead(const block *k, int64_t batch, int repetitions, double *compiled_s,
                           double *eager_s)
{
    uint64_t state = 6;
    const int64_t sizes[3] = {batch, SEQ, MODEL};
    pith_tensor *x = uniform(3, sizes, 2.0, &state);
    pith_graph *g = model_graph(block_forward_fn, k, 3, sizes);
    pith_compiled *c = pith_graph_compile(g, NULL);
    bench_check(c != NULL, "pith_graph_compile");
    double run_times[RUN_REPETITIONS], eager_times[RUN_REPETITIONS];
    bench_check(repetitions <= RUN_REPETITIONS, "repetitions <= RUN_REPETITIONS");
    for (int rep = -5; rep < repetitions; rep++) {
        double start = bench_seconds();
        pith_tensor *y = compiled_forward(c, x);
        double run_time = bench_seconds() - start;
        start = bench_seconds();
        pith_tensor *e = eager_forward(block_forward_fn, k, x);
        double eager_time = bench_seconds() - start;
        if (rep == -5)
            check_same_bits(e, y, "the compiled transformer block");
        pith_release(y);
        pith_release(e);
        if (rep >= 0) {
            run_times[rep] = run_time;
            eager_times[rep] = eager_time;
        }
    }
    *compiled_s = bench_median(run_times, repetitions);
    *eager_s = bench_median(eager_times, repetitions);
    pith_compiled_free(c);
    pith_graph_free(g);
    pith_release(x);
}

/* ---- --count: one call each, in functions of their own, for callgrind ------------------ */

/* noipa: gcc would otherwise fold the functions of identical bodies into one. */
#if defined(__clang__)
#define COUNTED __attribute__((noinline))
#else
#define COUNTED __attribute__((noinline, noipa))
#endif

COUNTED static pith_compiled *count_compile_mlp(pith_graph *g)
{
    return pith_graph_compile(g, NULL);
}

COUNTED static pith_compiled *count_compile_block(pith_graph *g)
{
    return pith_graph_compile(g, NULL);
}

COUNTED static pith_tensor *count_eager_mlp(const mlp *m, const pith_tensor *x)
{
    return eager_forward(mlp_forward_fn, m, x);
}

COUNTED static pith_tensor *count_eager_block(const block *k, const pith_tensor *x)
{
    return eager_forward(block_forward_fn, k, x);
}

COUNTED static pith_tensor *count_run_mlp(pith_compiled *c, pith_tensor *x)
{
    return compiled_forward(c, x);
}

COUNTED static pith_tensor *count_run_block(pith_compiled *c, pith_tensor *x)
{
    return compiled_forward(c, x);
}

COUNTED static void count_mlp_linears(const mlp *m, pith_tensor *const *inputs)
{
    for (int i = 0; i < 3; i++) {
        pith_tensor *z = pith_linear(inputs[i], m->weight[i], m->bias[i]);
        bench_check(z != NULL, "pith_linear");
        pith_release(z);
    }
}

static void count_calls(const mlp *m, const block *k, int64_t batch)
{
    uint64_t state = 7;
    const int64_t mlp_sizes[2] = {batch, 784}, block_sizes[3] = {1, SEQ, MODEL},
                  hidden[2] = {batch, 512};
    pith_tensor *xm = uniform(2, mlp_sizes, 2.0, &state);
    pith_tensor *xb = uniform(3, block_sizes, 2.0, &state);
    pith_tensor *inputs[3] = {xm, uniform(2, hidden, 1.0, &state), uniform(2, hidden, 1.0, &state)};
    pith_graph *gm = model_graph(mlp_forward_fn, m, 2, mlp_sizes);
    pith_graph *gb = model_graph(block_forward_fn, k, 3, block_sizes);
    /* pith loads OpenBLAS on the first product (Note [OpenBLAS is loaded on first use]): load
     * it here, so that no count_* function holds the one-time dlopen. */
    bench_check(pith_blas_get_config() != NULL, "pith_blas_get_config");
    for (int pass = 0; pass < 2; pass++) { /* the first pass warms up; callgrind sees both */
        pith_compiled *cm = count_compile_mlp(gm), *cb = count_compile_block(gb);
        bench_check(cm != NULL && cb != NULL, "pith_graph_compile");
        pith_tensor *e = count_eager_mlp(m, xm), *y = count_run_mlp(cm, xm);
        check_same_bits(e, y, "the compiled MLP");
        pith_release(e);
        pith_release(y);
        count_mlp_linears(m, inputs);
        e = count_eager_block(k, xb);
        y = count_run_block(cb, xb);
        check_same_bits(e, y, "the compiled transformer block");
        pith_release(e);
        pith_release(y);
        pith_compiled_free(cm);
        pith_compiled_free(cb);
    }
    pith_graph_free(gm);
    pith_graph_free(gb);
    for (int i = 0; i < 3; i++)
        pith_release(inputs[i]);
    pith_release(xb);
    printf("bench_compile --count: each count_* function ran twice; divide callgrind's "
           "inclusive counts by 2\n");
}

int main(int argc, char **argv)
{
    bool count = argc > 1 && strcmp(argv[1], "--count") == 0;
    long batch = count && argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if ((argc > 1 && !count) || argc > 3 || batch < 1 || batch > 4096) {
        fprintf(stderr, "usage: bench_compile [--count [mlp-batch]]\n");
        return 2;
    }
    ops_find();
    uint64_t state = 1;
    mlp m;
    mlp_init(&m, &state);
    block k;
    block_init(&k, &state);
    if (count) {
        count_calls(&m, &k, batch);
        mlp_free(&m);
        block_free(&k);
        return 0;
    }
    int threads = bench_threads();
    printf("bench_compile: pith %s, %d threads; compile: median of %d, runs: median of %d "
           "(%d for the MLP at batch 256 and the block at batch 8)\n",
           pith_version(), threads, COMPILE_REPETITIONS, RUN_REPETITIONS, LONG_RUN_REPETITIONS);

    double compile_s, eager_s;
    const int64_t mlp_sizes[2] = {1, 784}, block_sizes[3] = {1, SEQ, MODEL};
    compile_cost("the compiled MLP", mlp_forward_fn, &m, 2, mlp_sizes, &compile_s, &eager_s);
    bench_result("compile_mlp_us", "(a) pith_graph_compile, MLP 784-512-512-10", 1e6 * compile_s,
                 "us", "-");
    bench_result("compile_mlp_eager_us", "(a) eager MLP forward, batch 1, pith_call_boxed",
                 1e6 * eager_s, "us", "-");
    bench_result("compile_mlp_ratio", "(a) compile / eager forward, MLP", compile_s / eager_s,
                 "ratio", "< 3");
    compile_cost("the compiled transformer block", block_forward_fn, &k, 3, block_sizes,
                 &compile_s, &eager_s);
    bench_result("compile_block_us", "(a) pith_graph_compile, transformer block d=256 s=64 h=4",
                 1e6 * compile_s, "us", "-");
    bench_result("compile_block_eager_us",
                 "(a) eager transformer block forward, batch 1, pith_call_boxed", 1e6 * eager_s,
                 "us", "-");
    bench_result("compile_block_ratio", "(a) compile / eager forward, transformer block",
                 compile_s / eager_s, "ratio", "< 3");

    double run_s, reference_s, mlp_eager_s;
    mlp_overhead(&m, 1, RUN_REPETITIONS, &run_s, &reference_s, &mlp_eager_s);
    bench_result("run_mlp_us", "(b) compiled MLP run, batch 1", 1e6 * run_s, "us", "-");
    bench_result("run_mlp_gemms_us", "(b) its 3 pith_linear calls alone, sum of medians",
                 1e6 * reference_s, "us", "-");
    bench_result("run_mlp_ratio", "(b) compiled MLP / its 3 linear calls", run_s / reference_s,
                 "ratio", "<= 1.05");
    block_overhead(&k, 1, RUN_REPETITIONS, &run_s, &reference_s);
    bench_result("run_block_us", "(b) compiled transformer block run, batch 1", 1e6 * run_s,
                 "us", "-");
    bench_result("run_block_eager_us", "(b) the same calls eagerly, pith_call_boxed",
                 1e6 * reference_s, "us", "-");
    bench_result("run_block_ratio", "(b) compiled / eager transformer block", run_s / reference_s,
                 "ratio", "<= 0.8");

    const struct {
        int batch, repetitions;
    } mlp_batches[2] = {{32, RUN_REPETITIONS}, {256, LONG_RUN_REPETITIONS}};
    for (int i = 0; i < 2; i++) {
        int batch = mlp_batches[i].batch;
        char key[64], figure[96];
        mlp_overhead(&m, batch, mlp_batches[i].repetitions, &run_s, &reference_s, &mlp_eager_s);
        snprintf(key, sizeof key, "run_mlp%d_us", batch);
        snprintf(figure, sizeof figure, "(c) compiled MLP run, batch %d", batch);
        bench_result(key, figure, 1e6 * run_s, "us", "-");
        snprintf(key, sizeof key, "run_mlp%d_gemms_us", batch);
        snprintf(figure, sizeof figure, "(c) its 3 pith_linear calls alone, batch %d", batch);
        bench_result(key, figure, 1e6 * reference_s, "us", "-");
        snprintf(key, sizeof key, "run_mlp%d_ratio", batch);
        snprintf(figure, sizeof figure, "(c) compiled MLP / its 3 linear calls, batch %d", batch);
        bench_result(key, figure, run_s / reference_s, "ratio", "<= 1.02");
        snprintf(key, sizeof key, "run_mlp%d_eager_ratio", batch);
        snprintf(figure, sizeof figure, "(c) compiled / eager MLP forward, batch %d", batch);
        bench_result(key, figure, run_s / mlp_eager_s, "ratio", "-");
    }
    block_overhead(&k, 8, LONG_RUN_REPETITIONS, &run_s, &reference_s);
    bench_result("run_block8_us", "(d) compiled transformer block run, batch 8", 1e6 * run_s,
                 "us", "-");
    bench_result("run_block8_eager_us", "(d) the same calls eagerly, batch 8", 1e6 * reference_s,
                 "us", "-");
    bench_result("run_block8_ratio", "(d) compiled / eager transformer block, batch 8",
                 run_s / reference_s, "ratio", "<= 0.7");

    mlp_free(&m);
    block_free(&k);
    return 0;
}
