/* bench_add_small.c — the dispatch overhead of one op: pith_add of two 1-element float32
 * tensors, output allocation and release included,
 *   (a) through the unboxed (typed) entry point pith_add, and
 *   (b) through the boxed path: push both tensors, pith_call_boxed, get the result, drop.
 * Reports the median ns/call over many batches.
 *
 * `bench_add_small --count` times nothing: after a warm-up it makes each call once inside a
 * function of its own (count_*), for instruction counts that a loaded machine does not
 * change:
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out build/benchmarks/c/bench_add_small --count
 *   callgrind_annotate --inclusive=yes /tmp/cg.out | grep count_ */
#include "bench_common.h"

#include <string.h>

enum { BATCHES = 41, CALLS_PER_BATCH = 100000 };

static double add_unboxed_ns(const pith_tensor *a, const pith_tensor *b)
{
    double per_batch[BATCHES];
    for (int batch = -1; batch < BATCHES; batch++) { /* batch -1 warms up */
        double start = bench_seconds();
        for (int i = 0; i < CALLS_PER_BATCH; i++) {
            pith_tensor *c = pith_add(a, b);
            if (!c)
                bench_check(0, "pith_add");
            pith_release(c);
        }
        if (batch >= 0)
            per_batch[batch] = (bench_seconds() - start) * 1e9 / CALLS_PER_BATCH;
    }
    return bench_median(per_batch, BATCHES);
}

static double add_boxed_ns(const pith_tensor *a, const pith_tensor *b)
{
    const pith_op *op = pith_op_find("add.Tensor");
    bench_check(op != NULL, "pith_op_find(\"add.Tensor\")");
    pith_stack *stack = pith_stack_new();
    bench_check(stack != NULL, "pith_stack_new");
    double per_batch[BATCHES];
    for (int batch = -1; batch < BATCHES; batch++) {
        double start = bench_seconds();
        for (int i = 0; i < CALLS_PER_BATCH; i++) {
            if (pith_stack_push_tensor(stack, a) != PITH_OK ||
                pith_stack_push_tensor(stack, b) != PITH_OK)
                bench_check(0, "pith_stack_push_tensor");
            if (pith_call_boxed(op, stack) != PITH_OK)
                bench_check(0, "pith_call_boxed");
            pith_tensor *c = pith_stack_get_tensor(stack, 0);
            if (!c)
                bench_check(0, "pith_stack_get_tensor");
            pith_release(c);
            pith_stack_drop(stack, pith_stack_size(stack));
        }
        if (batch >= 0)
            per_batch[batch] = (bench_seconds() - start) * 1e9 / CALLS_PER_BATCH;
    }
    pith_stack_free(stack);
    return bench_median(per_batch, BATCHES);
}

#define COUNTED __attribute__((noinline, used))

COUNTED static pith_tensor *count_add_unboxed(const pith_tensor *a, const pith_tensor *b)
{
    return pith_add(a, b);
}

COUNTED static void count_release(pith_tensor *t)
{
    pith_release(t);
}

static void count_calls(const pith_tensor *a, const pith_tensor *b)
{
    for (int warm = 0; warm < 100; warm++)
        pith_release(pith_add(a, b));
    pith_tensor *c = count_add_unboxed(a, b);
    bench_check(c != NULL, "pith_add");
    count_release(c);
    printf("bench_add_small --count: one pith_add and one release, in count_add_unboxed and "
           "count_release\n");
}

int main(int argc, char **argv)
{
    int threads = bench_threads();
    printf("bench_add_small: pith %s, %d threads, median of %d batches of %d calls\n",
           pith_version(), threads, BATCHES, CALLS_PER_BATCH);
    const int64_t one = 1;
    const float x = 1.5f, y = 2.25f;
    pith_tensor *a = pith_from_data(&x, 1, &one, PITH_FLOAT32);
    pith_tensor *b = pith_from_data(&y, 1, &one, PITH_FLOAT32);
    bench_check(a && b, "pith_from_data");

    /* The benchmark is meaningless if the op computes the wrong thing. */
    pith_tensor *c = pith_add(a, b);
    bench_check(c != NULL, "pith_add");
    bench_check(*(const float *)pith_data_ptr(c) == x + y, "pith_add's value");
    pith_release(c);
    if (argc > 1 && strcmp(argv[1], "--count") == 0) {
        count_calls(a, b);
        pith_release(a);
        pith_release(b);
        return 0;
    }

    bench_result("add_1_unboxed", "(a) pith_add, 1-element float32, unboxed", add_unboxed_ns(a, b),
                 "ns/call", "<= 60");
    bench_result("add_1_boxed", "(b) pith_add, 1-element float32, via pith_call_boxed",
                 add_boxed_ns(a, b), "ns/call", "-");
    pith_release(a);
    pith_release(b);
    return 0;
}
