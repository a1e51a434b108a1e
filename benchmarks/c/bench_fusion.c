/* bench_fusion.c — the pointwise chain y = gelu(x * w + b) * 0.5 + x over 4M float32
 * elements (x, w, b of one shape), three ways, interleaved in one run, medians of 31:
 *   (a) pith eager: five calls through pith_call_boxed (mul, add, gelu, mul by a 0-dim
 *       wrapped number 0.5, add), each writing a fresh tensor;
 *   (b) the same five calls recorded with the graph API and run by pith_compiled_run
 *       (checked once to equal (a) bitwise);
 *   (c) a hand-written one-pass OpenMP loop, in chunks of 1024, with pith's own vectorised
 *       gelu (vecmath_active()->gelu_f32), into a reused buffer;
 * and pith_add_out of two 4M float32 arrays into a preallocated output, as the streaming
 * reference. GB/s counts the bytes the chain must move at least: 4 arrays x 4M x 4 bytes
 * (3 reads, 1 write; 3 arrays for add_out), 1 GB = 1e9 bytes. Targets, from the fusion
 * issue: compiled at least 2.8x faster than eager, and at least 0.8x the hand loop's speed;
 * torch.compile reaches 12 GB/s on this chain here, and add(out=) streams at 14-22 GB/s. */
#include "bench_common.h"

#include <math.h>

#include <pith/interpreter.h> /* pith_tensor_set_wrapped_number */

/* Internal: the hand loop calls the very gelu that eager's kernel calls. libpith.so and
 * libpith.a export only pith_* (See Note [One object in libpith.a]), so this benchmark alone
 * links pith_objects, as the tests do (benchmarks/c/CMakeLists.txt). */
#include "kernels/vecmath.h"

enum { N = 4 * 1024 * 1024, CHUNK = 1024, REPETITIONS = 31, WARMUPS = 2 };

static struct {
    const pith_op *mul, *add, *gelu;
} ops;

static const pith_op *op_find(const char *name)
{
    const pith_op *op = pith_op_find(name);
    bench_check(op != NULL, name);
    return op;
}

/* ---- the chain, eager or recorded ---------------------------------------------------- */

/* Calls go through pith_call_boxed when `graph` is NULL, else pith_graph_call. */
typedef struct {
    pith_graph *graph;
    pith_stack *stack;
} chain;

/* op(a) or op(a, b), borrowing both; a new reference to the result. */
static pith_tensor *chain_call(chain *c, const pith_op *op, const pith_tensor *a,
                               const pith_tensor *b)
{
    bench_check(pith_stack_push_tensor(c->stack, a) == PITH_OK, "pith_stack_push_tensor");
    if (b)
        bench_check(pith_stack_push_tensor(c->stack, b) == PITH_OK, "pith_stack_push_tensor");
    pith_status s = c->graph ? pith_graph_call(c->graph, op, c->stack)
                             : pith_call_boxed(op, c->stack);
    bench_check(s == PITH_OK, pith_op_name(op));
    pith_tensor *out = pith_stack_get_tensor(c->stack, 0);
    bench_check(out != NULL, "a tensor result");
    pith_stack_drop(c->stack, pith_stack_size(c->stack));
    return out;
}

/* gelu(x * w + b) * half + x, where `half` is the 0-dim wrapped number 0.5 (as Python's
 * `* 0.5` passes it; a graph takes it as a constant). */
static pith_tensor *chain_forward(chain *c, const pith_tensor *x, const pith_tensor *w,
                                  const pith_tensor *b, const pith_tensor *half)
{
    pith_tensor *t = chain_call(c, ops.mul, x, w);
    pith_tensor *u = chain_call(c, ops.add, t, b);
    pith_release(t);
    t = chain_call(c, ops.gelu, u, NULL);
    pith_release(u);
    u = chain_call(c, ops.mul, t, half);
    pith_release(t);
    t = chain_call(c, ops.add, u, x);
    pith_release(u);
    return t;
}

static pith_compiled *chain_compile(pith_tensor *w, pith_tensor *b, const pith_tensor *half)
{
    const int64_t n = N;
    chain c = {pith_graph_new(), pith_stack_new()};
    bench_check(c.graph != NULL && c.stack != NULL, "pith_graph_new");
    pith_tensor *x = pith_graph_input(c.graph, PITH_FLOAT32, 1, &n, NULL);
    pith_tensor *ws = pith_graph_param(c.graph, w), *bs = pith_graph_param(c.graph, b);
    bench_check(x != NULL && ws != NULL && bs != NULL, "pith_graph_input/param");
    pith_tensor *y = chain_forward(&c, x, ws, bs, half);
    bench_check(pith_graph_output(c.graph, y) == PITH_OK, "pith_graph_output");
    pith_compiled *compiled = pith_graph_compile(c.graph, NULL);
    bench_check(compiled != NULL, "pith_graph_compile");
    pith_release(y);
    pith_release(bs);
    pith_release(ws);
    pith_release(x);
    pith_stack_free(c.stack);
    pith_graph_free(c.graph);
    return compiled;
}

/* ---- the hand loop ------------------------------------------------------------------- */

/* One pass over the arrays; each chunk's t stays in L1 between its three steps. Built
 * without -march and in ISO C (GCC contracts no a*b+c there), x*w+b rounds twice as eager's
 * mul and add do; gelu is the same table function eager's kernel calls, whose lanes do not
 * depend on where a chunk ends (See Note [Vectorised math functions]); and g*0.5f is
 * exact. So the result equals eager's bitwise (it did with the AVX2 table on this
 * repository's machine); main prints whether it does, and fails only beyond a relative
 * difference of 1e-6. */
static void hand_chain(float *restrict out, const float *restrict x, const float *restrict w,
                       const float *restrict b, vecmath_f32 gelu, int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t chunk = 0; chunk < N / CHUNK; chunk++) {
        _Alignas(64) float t[CHUNK];
        const int64_t start = chunk * CHUNK;
        for (int64_t i = 0; i < CHUNK; i++)
            t[i] = x[start + i] * w[start + i] + b[start + i];
        gelu(t, t, CHUNK);
        for (int64_t i = 0; i < CHUNK; i++)
            out[start + i] = t[i] * 0.5f + x[start + i];
    }
}

/* ---- checks -------------------------------------------------------------------------- */

/* A float32 tensor of N values uniform in [-scale, scale] from a fixed-seed generator, so
 * that gelu sees both of its ranges and negative arguments. */
static pith_tensor *uniform(float scale, uint64_t *state)
{
    const int64_t n = N;
    pith_tensor *t = pith_empty(1, &n, PITH_FLOAT32);
    bench_check(t != NULL, "pith_empty");
    float *data = pith_data_ptr(t);
    for (int64_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        data[i] = (float)(scale * ((double)(*state >> 11) * 0x1.0p-52 - 1.0));
    }
    return t;
}

static bool same_bits(const float *a, const float *b)
{
    return memcmp(a, b, (size_t)N * sizeof(float)) == 0;
}

/* The largest |a - b| / (1 + |b|) over the arrays. */
static double max_relative_difference(const float *a, const float *b)
{
    double worst = 0;
    for (int64_t i = 0; i < N; i++) {
        double d = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)b[i]));
        if (!(d <= worst)) /* NaN counts as the worst */
            worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

/* Checks the three results once, before anything is timed. */
static void check_results(const pith_tensor *eager, const pith_tensor *compiled,
                          const float *hand)
{
    bench_check(pith_tensor_dtype(compiled) == PITH_FLOAT32 && pith_numel(compiled) == N &&
                    pith_is_contiguous(compiled) && pith_is_contiguous(eager),
                "the compiled chain's result layout");
    if (!same_bits(pith_data_ptr(compiled), pith_data_ptr(eager))) {
        fprintf(stderr, "bench_fusion: the compiled chain differs from eager's bitwise "
                        "(max relative difference %.3g)\n",
                max_relative_difference(pith_data_ptr(compiled), pith_data_ptr(eager)));
        exit(1);
    }
    double difference = max_relative_difference(hand, pith_data_ptr(eager));
    bool bitwise = same_bits(hand, pith_data_ptr(eager));
    printf("compiled == eager bitwise; hand loop %s eager bitwise (max |h-e|/(1+|e|) = %.3g)\n",
           bitwise ? "==" : "!=", difference);
    if (difference > 1e-6) {
        fprintf(stderr, "bench_fusion: the hand loop is off eager by %.3g\n", difference);
        exit(1);
    }
}

/* ---- the measurements ---------------------------------------------------------------- */

static double gigabytes_per_second(int arrays, double seconds)
{
    return (double)arrays * N * sizeof(float) / seconds / 1e9;
}

int main(void)
{
    int threads = bench_threads();
    const vecmath_table *table = vecmath_active();
    printf("bench_fusion: pith %s, %d threads, vecmath %s, %d float32, median of %d\n",
           pith_version(), threads, table->name, N, REPETITIONS);
    printf("y = gelu(x * w + b) * 0.5 + x; GB/s = 4 arrays x %d x 4 bytes (3 reads + 1 "
           "write) / time, 1 GB = 1e9 bytes; add_out: 3 arrays\n", N);
    ops.mul = op_find("mul.Tensor");
    ops.add = op_find("add.Tensor");
    ops.gelu = op_find("gelu");

    uint64_t state = 1;
    pith_tensor *x = uniform(3.0f, &state), *w = uniform(1.5f, &state),
                *b = uniform(1.0f, &state);
    pith_tensor *half = pith_scalar_tensor(0.5, PITH_FLOAT64);
    bench_check(half != NULL, "pith_scalar_tensor");
    pith_tensor_set_wrapped_number(half, true);
    const int64_t n = N;
    pith_tensor *sum = pith_empty(1, &n, PITH_FLOAT32);
    bench_check(sum != NULL, "pith_empty");
    float *hand = aligned_alloc(64, (size_t)N * sizeof(float));
    bench_check(hand != NULL, "aligned_alloc");
    const float *xd = pith_data_ptr(x), *wd = pith_data_ptr(w), *bd = pith_data_ptr(b);

    pith_compiled *compiled = chain_compile(w, b, half);
    chain eager = {NULL, pith_stack_new()};
    bench_check(eager.stack != NULL, "pith_stack_new");

    double eager_times[REPETITIONS], compiled_times[REPETITIONS], hand_times[REPETITIONS],
        add_times[REPETITIONS];
    for (int rep = -WARMUPS; rep < REPETITIONS; rep++) {
        double start = bench_seconds();
        pith_tensor *e = chain_forward(&eager, x, w, b, half);
        double eager_time = bench_seconds() - start;

        pith_tensor *c = NULL;
        start = bench_seconds();
        bench_check(pith_compiled_run(compiled, &x, 1, &c, 1) == PITH_OK, "pith_compiled_run");
        double compiled_time = bench_seconds() - start;

        start = bench_seconds();
        hand_chain(hand, xd, wd, bd, table->gelu_f32, threads);
        double hand_time = bench_seconds() - start;

        start = bench_seconds();
        bench_check(pith_add_out(sum, x, w) == PITH_OK, "pith_add_out");
        double add_time = bench_seconds() - start;

        if (rep == -WARMUPS)
            check_results(e, c, hand);
        pith_release(e);
        pith_release(c);
        if (rep >= 0) {
            eager_times[rep] = eager_time;
            compiled_times[rep] = compiled_time;
            hand_times[rep] = hand_time;
            add_times[rep] = add_time;
        }
    }
    double eager_s = bench_median(eager_times, REPETITIONS);
    double compiled_s = bench_median(compiled_times, REPETITIONS);
    double hand_s = bench_median(hand_times, REPETITIONS);
    double add_s = bench_median(add_times, REPETITIONS);

    bench_result("fusion_eager_ms", "(a) eager chain, 5 pith_call_boxed calls, 4M float32",
                 1e3 * eager_s, "ms", "-");
    bench_result("fusion_eager_gbs", "(a) eager chain, 4 x 16 MiB moved",
                 gigabytes_per_second(4, eager_s), "GB/s", "-");
    bench_result("fusion_compiled_ms", "(b) compiled chain, pith_compiled_run, 4M float32",
                 1e3 * compiled_s, "ms", "-");
    bench_result("fusion_compiled_gbs", "(b) compiled chain, 4 x 16 MiB moved",
                 gigabytes_per_second(4, compiled_s), "GB/s", "-");
    bench_result("fusion_hand_ms", "(c) hand OpenMP loop, chunks of 1024, vecmath gelu",
                 1e3 * hand_s, "ms", "-");
    bench_result("fusion_hand_gbs", "(c) hand OpenMP loop, 4 x 16 MiB moved",
                 gigabytes_per_second(4, hand_s), "GB/s", "-");
    bench_result("fusion_eager_over_compiled", "eager_time / compiled_time, fusion chain",
                 eager_s / compiled_s, "ratio", ">= 2.8");
    bench_result("fusion_hand_over_compiled", "hand_time / compiled_time, fusion chain",
                 hand_s / compiled_s, "ratio", ">= 0.8");
    bench_result("fusion_add_out_ms", "pith_add_out, 4M float32, preallocated out",
                 1e3 * add_s, "ms", "-");
    bench_result("fusion_add_out_gbs", "pith_add_out, 3 x 16 MiB moved (streaming reference)",
                 gigabytes_per_second(3, add_s), "GB/s", "-");

    pith_stack_free(eager.stack);
    pith_compiled_free(compiled);
    free(hand);
    pith_release(sum);
    pith_release(half);
    pith_release(b);
    pith_release(w);
    pith_release(x);
    return 0;
}
