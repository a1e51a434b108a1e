/* train_mlp.c — trains a small MLP from C, without Python: pith's autograd computes the
 * gradients, and plain SGD written here updates the weights.
 *
 *   teacher:  y = tanh(x @ A) @ B             (fixed, random; never trained)
 *   student:  p = tanh(x @ w1 + b1) @ w2 + b2
 *   loss:     mean((p - y)^2)
 *
 * Each step: forward, pith_backward on the loss (accumulates into each weight's .grad),
 * then with grad mode off w -= lr * w.grad in place, and the gradients cleared (PyTorch's
 * zero_grad(set_to_none=True)). Only the public API (<pith/pith.h>) is used. The data and
 * the initial weights come from pith_randn after pith_manual_seed, so every run prints the
 * same numbers. Exits 0 when the final loss is below half the initial one (ctest
 * Example.TrainMlp checks that), 1 otherwise, 2 on an error.
 * Usage: train_mlp [--steps N] [--lr X] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pith/pith.h>

enum { SAMPLES = 256, IN = 4, HIDDEN = 32, OUT = 1, TEACHER_HIDDEN = 8 };

/* Every pith call is checked: on failure, report what failed with pith's message and leave
 * through `fail`. */
#define CHECK(expr)                                                                         \
    do {                                                                                    \
        if (!(expr)) {                                                                      \
            fprintf(stderr, "train_mlp: %s failed: [%s] %s\n", #expr,                      \
                    pith_status_name(pith_last_status()), pith_last_error());               \
            goto fail;                                                                      \
        }                                                                                   \
    } while (0)
#define CHECK_OK(call) CHECK((call) == PITH_OK)

typedef struct {
    pith_tensor *w1, *b1, *w2, *b2;
} mlp;

/* randn(rows, cols) * scale, a leaf that requires grad when `trained`. */
static pith_tensor *weights_new(int64_t rows, int64_t cols, double scale, bool trained)
{
    int64_t sizes[] = {rows, cols};
    pith_tensor *w = NULL, *s = NULL;
    CHECK(w = pith_randn(2, sizes, PITH_FLOAT32));
    CHECK(s = pith_scalar_tensor(scale, PITH_FLOAT32));
    CHECK_OK(pith_mul_(w, s));
    pith_release(s);
    if (trained)
        CHECK_OK(pith_set_requires_grad(w, true));
    return w;
fail:
    pith_release(s);
    pith_release(w);
    return NULL;
}

static pith_tensor *bias_new(int64_t n)
{
    pith_tensor *b = pith_full(1, &n, 0.0, PITH_FLOAT32);
    if (b && pith_set_requires_grad(b, true) != PITH_OK) {
        pith_release(b);
        return NULL;
    }
    return b;
}

/* tanh(x @ w + b) @ w2 + b2 (b, b2 NULL: none), a new reference. */
static pith_tensor *two_layers(pith_tensor *x, pith_tensor *w, pith_tensor *b, pith_tensor *w2,
                               pith_tensor *b2)
{
    pith_tensor *h = NULL, *hb = NULL, *a = NULL, *o = NULL, *ob = NULL;
    CHECK(h = pith_matmul(x, w));
    if (b)
        CHECK(hb = pith_add(h, b));
    CHECK(a = pith_tanh(hb ? hb : h));
    CHECK(o = pith_matmul(a, w2));
    if (b2)
        CHECK(ob = pith_add(o, b2));
fail: /* the success path too: drop the intermediates (the graph keeps what it needs) */
    pith_release(h);
    pith_release(hb);
    pith_release(a);
    if (b2)
        pith_release(o);
    return b2 ? ob : o;
}

/* mean((p - y)^2): a 0-dim tensor with history. */
static pith_tensor *mse(pith_tensor *p, pith_tensor *y)
{
    pith_tensor *d = NULL, *d2 = NULL, *loss = NULL;
    CHECK(d = pith_sub(p, y));
    CHECK(d2 = pith_mul(d, d));
    CHECK(loss = pith_mean(d2, 0, NULL, false));
fail:
    pith_release(d);
    pith_release(d2);
    return loss;
}

/* w -= lr * w.grad, in place and not recorded; then w.grad = None. */
static pith_status sgd_update(pith_tensor *w, pith_tensor *lr)
{
    pith_tensor *g = NULL, *step = NULL;
    pith_status status = pith_grad_get(w, &g);
    if (status != PITH_OK || !g)
        return status;
    if (!(step = pith_mul(g, lr)) || pith_sub_(w, step) != PITH_OK ||
        pith_grad_set(w, NULL) != PITH_OK)
        status = pith_last_status();
    pith_release(step);
    pith_release(g);
    return status;
}

/* One step; *loss_value gets the loss before the update. */
static pith_status train_step(mlp *m, pith_tensor *x, pith_tensor *y, pith_tensor *lr,
                              double *loss_value)
{
    pith_status status = PITH_ERR_RUNTIME;
    pith_tensor *p = NULL, *loss = NULL;
    CHECK(p = two_layers(x, m->w1, m->b1, m->w2, m->b2));
    CHECK(loss = mse(p, y));
    CHECK_OK(pith_item(loss, loss_value));
    CHECK_OK(pith_backward(&loss, NULL, 1, 0));
    /* the update itself must not record: PyTorch's torch.no_grad() */
    bool was_enabled = pith_grad_enabled();
    pith_set_grad_enabled(false);
    pith_tensor *params[] = {m->w1, m->b1, m->w2, m->b2};
    status = PITH_OK;
    for (int i = 0; i < 4 && status == PITH_OK; i++)
        status = sgd_update(params[i], lr);
    pith_set_grad_enabled(was_enabled);
    if (status != PITH_OK)
        fprintf(stderr, "train_mlp: the SGD update failed: [%s] %s\n",
                pith_status_name(status), pith_last_error());
fail:
    pith_release(p);
    pith_release(loss);
    return status == PITH_OK ? PITH_OK : pith_last_status();
}

int main(int argc, char **argv)
{
    int steps = 300;
    double learning_rate = 0.1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--lr"))
            learning_rate = atof(argv[i + 1]);
    }
    int rc = 2;
    mlp m = {0};
    pith_tensor *x = NULL, *y = NULL, *teacher_a = NULL, *teacher_b = NULL, *lr = NULL;
    pith_manual_seed(0);
    int64_t xs[] = {SAMPLES, IN};
    CHECK(x = pith_randn(2, xs, PITH_FLOAT32));
    CHECK(teacher_a = weights_new(IN, TEACHER_HIDDEN, 1.0, false));
    CHECK(teacher_b = weights_new(TEACHER_HIDDEN, OUT, 1.0, false));
    CHECK(y = two_layers(x, teacher_a, NULL, teacher_b, NULL));
    CHECK(m.w1 = weights_new(IN, HIDDEN, 0.5, true));
    CHECK(m.b1 = bias_new(HIDDEN));
    CHECK(m.w2 = weights_new(HIDDEN, OUT, 0.2, true));
    CHECK(m.b2 = bias_new(OUT));
    CHECK(lr = pith_scalar_tensor(learning_rate, PITH_FLOAT32));
    double first = 0, loss = 0;
    for (int step = 0; step < steps; step++) {
        CHECK_OK(train_step(&m, x, y, lr, &loss));
        if (step == 0)
            first = loss;
        if (step % 50 == 0 || step == steps - 1)
            printf("step %4d  loss %.6f\n", step, loss);
    }
    rc = loss < 0.5 * first ? 0 : 1;
    printf("loss %.6f -> %.6f: %s\n", first, loss,
           rc == 0 ? "fell below half" : "did NOT fall below half");
fail:
    pith_release(m.w1);
    pith_release(m.b1);
    pith_release(m.w2);
    pith_release(m.b2);
    pith_release(x);
    pith_release(y);
    pith_release(teacher_a);
    pith_release(teacher_b);
    pith_release(lr);
    return rc;
}
