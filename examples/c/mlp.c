/* mlp.c — a 2-layer perceptron built from pith's C API, run on a batch.
 *
 *   probabilities = softmax(relu(x @ w1^T + b1) @ w2 + b2)
 *
 * The first layer uses pith_linear, the second pith_matmul + pith_add (broadcasting the
 * bias over the batch), to show both. Weights come from pith_randn after pith_manual_seed,
 * so every run prints the same numbers. Every call is checked; a failure prints
 * pith_last_error(). Usage: mlp [--batch N] [--iterations N] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pith/pith.h>

enum { IN_FEATURES = 784, HIDDEN = 256, OUT_FEATURES = 10 };

typedef struct {
    pith_tensor *w1; /* (HIDDEN, IN_FEATURES), for pith_linear */
    pith_tensor *b1; /* (HIDDEN) */
    pith_tensor *w2; /* (HIDDEN, OUT_FEATURES), for pith_matmul */
    pith_tensor *b2; /* (OUT_FEATURES) */
} mlp;

/* Prints what failed and pith's message; returns NULL so callers can `return check(...)`. */
static void *report(const char *what)
{
    fprintf(stderr, "mlp: %s failed: [%s] %s\n", what, pith_status_name(pith_last_status()),
            pith_last_error());
    return NULL;
}

/* randn(sizes) * scale: weights with variance scale^2. */
static pith_tensor *weights_new(int ndim, const int64_t *sizes, double scale)
{
    pith_tensor *w = pith_randn(ndim, sizes, PITH_FLOAT32);
    if (!w)
        return report("pith_randn");
    pith_tensor *s = pith_scalar_tensor(scale, PITH_FLOAT32);
    if (!s) {
        pith_release(w);
        return report("pith_scalar_tensor");
    }
    pith_status status = pith_mul_(w, s);
    pith_release(s);
    if (status != PITH_OK) {
        pith_release(w);
        return report("pith_mul_");
    }
    return w;
}

static void mlp_free(mlp *m)
{
    pith_release(m->w1);
    pith_release(m->b1);
    pith_release(m->w2);
    pith_release(m->b2);
}

static int mlp_init(mlp *m)
{
    const int64_t w1_sizes[2] = {HIDDEN, IN_FEATURES}, b1_sizes[1] = {HIDDEN};
    const int64_t w2_sizes[2] = {HIDDEN, OUT_FEATURES}, b2_sizes[1] = {OUT_FEATURES};
    memset(m, 0, sizeof *m);
    /* Kaiming-style scaling keeps the activations of order one. */
    m->w1 = weights_new(2, w1_sizes, sqrt(2.0 / IN_FEATURES));
    m->b1 = weights_new(1, b1_sizes, 0.01);
    m->w2 = weights_new(2, w2_sizes, sqrt(2.0 / HIDDEN));
    m->b2 = weights_new(1, b2_sizes, 0.01);
    if (!m->w1 || !m->b1 || !m->w2 || !m->b2) {
        mlp_free(m);
        return -1;
    }
    return 0;
}

/* One forward pass: returns the (batch, OUT_FEATURES) probabilities, a new reference. */
static pith_tensor *mlp_forward(const mlp *m, const pith_tensor *x)
{
    pith_tensor *h = NULL, *a = NULL, *z = NULL, *logits = NULL, *probabilities = NULL;
    if (!(h = pith_linear(x, m->w1, m->b1)))
        report("pith_linear");
    else if (!(a = pith_relu(h)))
        report("pith_relu");
    else if (!(z = pith_matmul(a, m->w2)))
        report("pith_matmul");
    else if (!(logits = pith_add(z, m->b2)))
        report("pith_add");
    else if (!(probabilities = pith_softmax(logits, -1)))
        report("pith_softmax");
    pith_release(h);
    pith_release(a);
    pith_release(z);
    pith_release(logits);
    return probabilities;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Prints the shape, the first rows and their sums (each should be 1). */
static int output_print(const pith_tensor *p, int64_t batch)
{
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = pith_sizes(p, sizes);
    if (ndim != 2 || sizes[0] != batch || sizes[1] != OUT_FEATURES) {
        fprintf(stderr, "mlp: unexpected output shape\n");
        return -1;
    }
    printf("output: shape (%lld, %lld), dtype %s\n", (long long)sizes[0], (long long)sizes[1],
           pith_dtype_name(pith_tensor_dtype(p)));
    for (int64_t row = 0; row < batch && row < 3; row++) {
        double sum = 0;
        printf("  row %lld:", (long long)row);
        for (int64_t col = 0; col < OUT_FEATURES; col++) {
            double v;
            if (pith_item_at(p, row * OUT_FEATURES + col, &v) != PITH_OK) {
                report("pith_item_at");
                return -1;
            }
            sum += v;
            printf(" %.4f", v);
        }
        printf("  (sum %.6f)\n", sum);
        if (fabs(sum - 1.0) > 1e-4) {
            fprintf(stderr, "mlp: softmax row %lld sums to %g\n", (long long)row, sum);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int64_t batch = 64;
    int iterations = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--batch") == 0)
            batch = atoll(argv[i + 1]);
        else if (strcmp(argv[i], "--iterations") == 0)
            iterations = atoi(argv[i + 1]);
    }
    if (batch < 1 || iterations < 1) {
        fprintf(stderr, "usage: %s [--batch N>0] [--iterations N>0]\n", argv[0]);
        return 2;
    }

    printf("pith %s: 2-layer MLP %d -> %d -> %d, batch %lld, %d threads\n", pith_version(),
           IN_FEATURES, HIDDEN, OUT_FEATURES, (long long)batch, pith_get_num_threads());
    pith_manual_seed(0);
    mlp m;
    if (mlp_init(&m) != 0)
        return 1;
    const int64_t x_sizes[2] = {batch, IN_FEATURES};
    pith_tensor *x = pith_randn(2, x_sizes, PITH_FLOAT32);
    if (!x) {
        report("pith_randn");
        mlp_free(&m);
        return 1;
    }

    int status = 1;
    double *times = calloc((size_t)iterations, sizeof *times);
    pith_tensor *p = mlp_forward(&m, x); /* warm-up: also the output we print */
    if (!times || !p || output_print(p, batch) != 0)
        goto done;
    for (int i = 0; i < iterations; i++) {
        double start = seconds_now();
        pith_tensor *q = mlp_forward(&m, x);
        times[i] = seconds_now() - start;
        if (!q)
            goto done;
        pith_release(q);
    }
    qsort(times, (size_t)iterations, sizeof *times, compare_doubles);
    printf("forward pass: median %.1f us, min %.1f us over %d runs (%.1f us per sample)\n",
           1e6 * times[iterations / 2], 1e6 * times[0], iterations,
           1e6 * times[iterations / 2] / (double)batch);
    status = 0;
done:
    free(times);
    pith_release(p);
    pith_release(x);
    mlp_free(&m);
    if (pith_live_tensors() != 0) {
        fprintf(stderr, "mlp: %zu tensors still alive\n", pith_live_tensors());
        status = 1;
    }
    return status;
}
