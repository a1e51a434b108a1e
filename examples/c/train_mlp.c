/* train_mlp.c — trains a small MLP from C, without Python: pith's autograd computes the
 * gradients, and pith's multi-tensor SGD kernel (pith/optim.h) updates the weights.
 *
 *   teacher:  y = tanh(x @ A) @ B             (fixed, random; never trained)
 *   student:  p = tanh(x @ w1 + b1) @ w2 + b2
 *   loss:     mean((p - y)^2)
 *
 * Each step: forward, pith_backward on the loss (accumulates into each weight's .grad),
 * then one pith_optim_sgd call updates all four weights with momentum 0.9, as
 * torch.optim.SGD(params, lr, momentum=0.9).step() (its first call sets the momentum
 * buffers), and the gradients are cleared (PyTorch's zero_grad(set_to_none=True)). Only
 * the public API (<pith/pith.h>) is used. The data and the initial weights come from
 * pith_randn after pith_manual_seed, so every run prints the same numbers. Exits 0 when
 * the final loss is below half the initial one (ctest Example.TrainMlp checks that), 1
 * otherwise, 2 on an error.
 * Usage: train_mlp [--steps N] [--lr X] [--momentum M] */
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

enum { NPARAMS = 4 };

/* The update of every weight: one call of the SGD kernel on the weights, their gradients
 * and momentum buffers, then w.grad = None. The kernel writes the weights in place without
 * recording (as torch's optimizers step under no_grad). */
static pith_status sgd_update(mlp *m, pith_tensor *const *buffers, bool first,
                              const pith_sgd_options *options)
{
    pith_tensor *params[NPARAMS] = {m->w1, m->b1, m->w2, m->b2};
    pith_tensor *grads[NPARAMS] = {0};
    pith_status status = PITH_OK;
    for (int i = 0; i < NPARAMS && status == PITH_OK; i++) {
        status = pith_grad_get(params[i], &grads[i]);
        if (status == PITH_OK && !grads[i]) {
            fprintf(stderr, "train_mlp: weight %d got no gradient\n", i);
            status = PITH_ERR_RUNTIME;
        }
    }
    if (status == PITH_OK)
        status = pith_optim_sgd(params, (const pith_tensor *const *)grads, buffers, NPARAMS,
                                first, options);
    for (int i = 0; i < NPARAMS; i++) {
        if (status == PITH_OK)
            status = pith_grad_set(params[i], NULL);
        pith_release(grads[i]);
    }
    return status;
}

/* One step; *loss_value gets the loss before the update. */
static pith_status train_step(mlp *m, pith_tensor *x, pith_tensor *y, pith_tensor *const *buffers,
                              bool first, const pith_sgd_options *options, double *loss_value)
{
    pith_status status = PITH_ERR_RUNTIME;
    pith_tensor *p = NULL, *loss = NULL;
    CHECK(p = two_layers(x, m->w1, m->b1, m->w2, m->b2));
    CHECK(loss = mse(p, y));
    CHECK_OK(pith_item(loss, loss_value));
    CHECK_OK(pith_backward(&loss, NULL, 1, 0));
    status = sgd_update(m, buffers, first, options);
    if (status != PITH_OK)
        fprintf(stderr, "train_mlp: the SGD update failed: [%s] %s\n",
                pith_status_name(status), pith_last_error());
fail:
    pith_release(p);
    pith_release(loss);
    return status == PITH_OK ? PITH_OK : pith_last_status();
}

/* A momentum buffer of w's shape, uninitialised: the first step sets it. */
static pith_tensor *buffer_like(const pith_tensor *w)
{
    int64_t sizes[2];
    int ndim = pith_ndim(w);
    for (int d = 0; d < ndim && d < 2; d++)
        sizes[d] = pith_size(w, d);
    return pith_empty(ndim, sizes, PITH_FLOAT32);
}

int main(int argc, char **argv)
{
    int steps = 300;
    pith_sgd_options options = PITH_SGD_OPTIONS_DEFAULT;
    options.lr = 0.02;
    options.momentum = 0.9;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--lr"))
            options.lr = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--momentum"))
            options.momentum = atof(argv[i + 1]);
    }
    int rc = 2;
    mlp m = {0};
    pith_tensor *x = NULL, *y = NULL, *teacher_a = NULL, *teacher_b = NULL;
    pith_tensor *buffers[NPARAMS] = {0};
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
    CHECK(buffers[0] = buffer_like(m.w1));
    CHECK(buffers[1] = buffer_like(m.b1));
    CHECK(buffers[2] = buffer_like(m.w2));
    CHECK(buffers[3] = buffer_like(m.b2));
    double first = 0, loss = 0;
    for (int step = 0; step < steps; step++) {
        CHECK_OK(train_step(&m, x, y, buffers, step == 0, &options, &loss));
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
    for (int i = 0; i < NPARAMS; i++)
        pith_release(buffers[i]);
    return rc;
}
