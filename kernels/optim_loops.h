/* optim_loops.h — the fused per-element loops of the optimizer kernels (kernels/optim.c),
 * written once for an element type: optim.c includes this file twice, with OPTIM_T float
 * and OPTIM_SUFFIX f32, then with double and f64. Each loop updates n elements of one
 * parameter and its state, reading every input once and writing every output once; the
 * pointers are dense runs (ptr[0] the parameter, ptr[1] the gradient, then the state in
 * the schema's order; an unused state's pointer is NULL).
 *
 * Every line is one operation of torch 2.13's `_single_tensor_<opt>` formula as pith's ops
 * compute it, rounded to T after each: See Note [The optimizer kernels round as pith's
 * ops] in optim.c. No include guard: it is a template. */

#define OPTIM_CAT_(a, b) a##_##b
#define OPTIM_CAT(a, b) OPTIM_CAT_(a, b)
#define OPTIM_LOOP(name) OPTIM_CAT(name, OPTIM_SUFFIX)

#define T OPTIM_T

/* The gradient as the formulas first see it: divided by grad_scale, then negated under
 * maximize, then with the coupled weight decay added (grad.add(param, alpha=wd)). */
static inline T OPTIM_LOOP(grad_prepare)(const optim_common *c, T g, T p)
{
    if (c->scaled)
        g = g / (T)c->grad_scale;
    if (c->maximize)
        g = -g;
    if (c->weight_decay != 0 && !c->decoupled)
        g = g + (T)c->weight_decay * p;
    return g;
}

/* exp_avg.lerp_(grad, weight): see Note [lerp as pith's ops] in optim.c. */
static inline T OPTIM_LOOP(lerp)(T start, T end, bool small, T weight)
{
    return small ? start + weight * (end - start) : end - weight * (end - start);
}

/* torch.maximum(a, b): NaN wins, else the larger, else a (kernels/elementwise_arith.c). */
static inline T OPTIM_LOOP(maximum)(T a, T b)
{
    return a != a ? a : b != b ? b : a < b ? b : a;
}

static inline T OPTIM_LOOP(sqrt)(T x)
{
    return _Generic(x, float: sqrtf, default: sqrt)(x);
}

/* The loop bodies take their options as arguments: the loop function calls them with
 * constants for the common options (See Note [Specialised loops], optim.c), so that the
 * compiler makes a branch-free, vectorised copy for each. */
static inline __attribute__((always_inline)) void
OPTIM_LOOP(sgd_body)(const sgd_scalars *s, int64_t n, char *const *ptr, optim_common c,
                     bool has_momentum, bool first, bool nesterov)
{
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict buf = (T *)ptr[2];
    const T momentum = (T)s->momentum, keep = (T)(1.0 - s->dampening), neg_lr = (T)(-c.lr);
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        T g = OPTIM_LOOP(grad_prepare)(&c, grad[i], p);
        if (has_momentum) {
            T b = first ? g : buf[i] * momentum + keep * g;
            buf[i] = b;
            g = nesterov ? g + momentum * b : b;
        }
        param[i] = p + neg_lr * g;
    }
}

/* A plain call (no grad_scale, no maximize) with momentum in {0, some} and weight decay
 * in {0, some}: each combination a constant copy of the body. */
#define OPTIM_SGD_PLAIN(c, has_momentum, first)                                             \
    do {                                                                                    \
        if (!(has_momentum))                                                                \
            OPTIM_LOOP(sgd_body)(s, n, ptr, c, false, false, false);                        \
        else if (first)                                                                     \
            OPTIM_LOOP(sgd_body)(s, n, ptr, c, true, true, false);                          \
        else                                                                                \
            OPTIM_LOOP(sgd_body)(s, n, ptr, c, true, false, false);                         \
    } while (0)

static void OPTIM_LOOP(sgd_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const sgd_scalars *s = scalars;
    const optim_common c = s->common;
    const bool has_momentum = s->momentum != 0;
    if (!optim_common_plain(&c) || s->nesterov) {
        OPTIM_LOOP(sgd_body)(s, n, ptr, c, has_momentum, s->is_first_step, s->nesterov);
    } else if (c.weight_decay == 0) {
        const optim_common plain = {.lr = c.lr, .weight_decay = 0};
        OPTIM_SGD_PLAIN(plain, has_momentum, s->is_first_step);
    } else {
        const optim_common plain = {.lr = c.lr, .weight_decay = c.weight_decay};
        OPTIM_SGD_PLAIN(plain, has_momentum, s->is_first_step);
    }
}
#undef OPTIM_SGD_PLAIN

/* Adam and AdamW (decoupled weight decay). */
static inline __attribute__((always_inline)) void
OPTIM_LOOP(adam_body)(const adam_scalars *s, int64_t n, char *const *ptr, optim_common c,
                      bool small, bool amsgrad)
{
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict exp_avg = (T *)ptr[2];
    T *restrict exp_avg_sq = (T *)ptr[3];
    T *restrict max_exp_avg_sq = (T *)ptr[4];
    const bool decay = c.decoupled && c.weight_decay != 0;
    const T decay_factor = (T)s->decay_factor, weight = (T)s->lerp.weight;
    const T beta2 = (T)s->beta2, one_minus_beta2 = (T)(1.0 - s->beta2);
    const T bias_correction2_sqrt = (T)s->bias_correction2_sqrt, eps = (T)s->eps;
    const T neg_step_size = (T)(-s->step_size);
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        if (decay)
            p = p * decay_factor;
        T g = OPTIM_LOOP(grad_prepare)(&c, grad[i], p);
        T m = OPTIM_LOOP(lerp)(exp_avg[i], g, small, weight);
        exp_avg[i] = m;
        T v = exp_avg_sq[i] * beta2;
        v = v + one_minus_beta2 * g * g;
        exp_avg_sq[i] = v;
        if (amsgrad) {
            v = OPTIM_LOOP(maximum)(max_exp_avg_sq[i], v);
            max_exp_avg_sq[i] = v;
        }
        T denom = OPTIM_LOOP(sqrt)(v) / bias_correction2_sqrt + eps;
        param[i] = p + neg_step_size * m / denom;
    }
}

#define OPTIM_ADAM_PLAIN(c)                                                                 \
    do {                                                                                    \
        if (s->amsgrad)                                                                     \
            OPTIM_LOOP(adam_body)(s, n, ptr, c, true, true);                                \
        else                                                                                \
            OPTIM_LOOP(adam_body)(s, n, ptr, c, true, false);                               \
    } while (0)

/* A plain call (no grad_scale, no maximize, a small lerp weight) with weight decay none,
 * coupled or decoupled: each a constant copy of the body. */
static void OPTIM_LOOP(adam_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const adam_scalars *s = scalars;
    const optim_common c = s->common;
    if (!optim_common_plain(&c) || !s->lerp.small) {
        OPTIM_LOOP(adam_body)(s, n, ptr, c, s->lerp.small, s->amsgrad);
    } else if (c.weight_decay == 0) {
        const optim_common plain = {.lr = c.lr, .weight_decay = 0};
        OPTIM_ADAM_PLAIN(plain);
    } else if (c.decoupled) {
        const optim_common plain = {.lr = c.lr, .weight_decay = c.weight_decay, .decoupled = true};
        OPTIM_ADAM_PLAIN(plain);
    } else {
        const optim_common plain = {.lr = c.lr, .weight_decay = c.weight_decay};
        OPTIM_ADAM_PLAIN(plain);
    }
}
#undef OPTIM_ADAM_PLAIN

static void OPTIM_LOOP(adagrad_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const adagrad_scalars *s = scalars;
    const optim_common common = s->common, *c = &common;
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict state_sum = (T *)ptr[2];
    const T eps = (T)s->eps, neg_clr = (T)(-s->clr);
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        T g = OPTIM_LOOP(grad_prepare)(c, grad[i], p);
        T sum = state_sum[i] + (T)1 * g * g;
        state_sum[i] = sum;
        T std = OPTIM_LOOP(sqrt)(sum) + eps;
        param[i] = p + neg_clr * g / std;
    }
}

static inline __attribute__((always_inline)) void
OPTIM_LOOP(rmsprop_body)(const rmsprop_scalars *s, int64_t n, char *const *ptr, optim_common common, bool centered,
                         bool has_momentum)
{
    const optim_common *c = &common;
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict square_avg = (T *)ptr[2];
    T *restrict grad_avg = (T *)ptr[3];
    T *restrict buf = (T *)ptr[4];
    const bool small = s->lerp.small;
    const T alpha = (T)s->alpha, one_minus_alpha = (T)(1.0 - s->alpha);
    const T weight = (T)s->lerp.weight, eps = (T)s->eps, momentum = (T)s->momentum;
    const T neg_lr = (T)(-c->lr);
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        T g = OPTIM_LOOP(grad_prepare)(c, grad[i], p);
        T sq = square_avg[i] * alpha;
        sq = sq + one_minus_alpha * g * g;
        square_avg[i] = sq;
        T avg;
        if (centered) {
            T ga = OPTIM_LOOP(lerp)(grad_avg[i], g, small, weight);
            grad_avg[i] = ga;
            avg = OPTIM_LOOP(sqrt)(sq + (T)(-1) * ga * ga);
        } else {
            avg = OPTIM_LOOP(sqrt)(sq);
        }
        avg = avg + eps;
        if (has_momentum) {
            T b = buf[i] * momentum + (T)1 * g / avg;
            buf[i] = b;
            param[i] = p + neg_lr * b;
        } else {
            param[i] = p + neg_lr * g / avg;
        }
    }
}

static void OPTIM_LOOP(rmsprop_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const rmsprop_scalars *s = scalars;
    const bool centered = s->centered, has_momentum = s->momentum > 0;
    if (!optim_common_plain(&s->common)) {
        OPTIM_LOOP(rmsprop_body)(s, n, ptr, s->common, centered, has_momentum);
        return;
    }
    const optim_common plain = {.lr = s->common.lr, .weight_decay = s->common.weight_decay};
    if (centered && has_momentum)
        OPTIM_LOOP(rmsprop_body)(s, n, ptr, plain, true, true);
    else if (centered)
        OPTIM_LOOP(rmsprop_body)(s, n, ptr, plain, true, false);
    else if (has_momentum)
        OPTIM_LOOP(rmsprop_body)(s, n, ptr, plain, false, true);
    else
        OPTIM_LOOP(rmsprop_body)(s, n, ptr, plain, false, false);
}

static inline __attribute__((always_inline)) void
OPTIM_LOOP(adamax_body)(const adamax_scalars *s, int64_t n, char *const *ptr, optim_common common)
{
    const optim_common *c = &common;
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict exp_avg = (T *)ptr[2];
    T *restrict exp_inf = (T *)ptr[3];
    const bool small = s->lerp.small;
    const T weight = (T)s->lerp.weight, beta2 = (T)s->beta2, eps = (T)s->eps;
    const T neg_clr = (T)(-s->clr);
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        T g = OPTIM_LOOP(grad_prepare)(c, grad[i], p);
        T m = OPTIM_LOOP(lerp)(exp_avg[i], g, small, weight);
        exp_avg[i] = m;
        T magnitude = _Generic(g, float: fabsf, default: fabs)(g);
        T u = OPTIM_LOOP(maximum)(exp_inf[i] * beta2, magnitude + eps);
        exp_inf[i] = u;
        param[i] = p + neg_clr * m / u;
    }
}

static void OPTIM_LOOP(adamax_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const adamax_scalars *s = scalars;
    if (!optim_common_plain(&s->common)) {
        OPTIM_LOOP(adamax_body)(s, n, ptr, s->common);
        return;
    }
    const optim_common plain = {.lr = s->common.lr, .weight_decay = s->common.weight_decay};
    OPTIM_LOOP(adamax_body)(s, n, ptr, plain);
}

static inline __attribute__((always_inline)) void
OPTIM_LOOP(nadam_body)(const nadam_scalars *s, int64_t n, char *const *ptr, optim_common common)
{
    const optim_common *c = &common;
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict exp_avg = (T *)ptr[2];
    T *restrict exp_avg_sq = (T *)ptr[3];
    const bool decay = c->decoupled && c->weight_decay != 0, small = s->lerp.small;
    const T decay_factor = (T)s->decay_factor, weight = (T)s->lerp.weight;
    const T beta2 = (T)s->beta2, one_minus_beta2 = (T)(1.0 - s->beta2);
    const T bias_correction2 = (T)s->bias_correction2, eps = (T)s->eps;
    const T grad_coefficient = (T)s->grad_coefficient;
    const T exp_avg_coefficient = (T)s->exp_avg_coefficient;
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        if (decay)
            p = p * decay_factor;
        T g = OPTIM_LOOP(grad_prepare)(c, grad[i], p);
        T m = OPTIM_LOOP(lerp)(exp_avg[i], g, small, weight);
        exp_avg[i] = m;
        T v = exp_avg_sq[i] * beta2;
        v = v + one_minus_beta2 * g * g;
        exp_avg_sq[i] = v;
        T denom = OPTIM_LOOP(sqrt)(v / bias_correction2) + eps;
        p = p + grad_coefficient * g / denom;
        param[i] = p + exp_avg_coefficient * m / denom;
    }
}

static void OPTIM_LOOP(nadam_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const nadam_scalars *s = scalars;
    if (!optim_common_plain(&s->common)) {
        OPTIM_LOOP(nadam_body)(s, n, ptr, s->common);
        return;
    }
    const optim_common plain = {.lr = s->common.lr, .weight_decay = s->common.weight_decay,
                                     .decoupled = s->common.decoupled};
    OPTIM_LOOP(nadam_body)(s, n, ptr, plain);
}

static void OPTIM_LOOP(adadelta_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const adadelta_scalars *s = scalars;
    const optim_common common = s->common, *c = &common;
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict square_avg = (T *)ptr[2];
    T *restrict acc_delta = (T *)ptr[3];
    const T rho = (T)s->rho, one_minus_rho = (T)(1.0 - s->rho), eps = (T)s->eps;
    const T neg_lr = (T)(-c->lr);
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        T g = OPTIM_LOOP(grad_prepare)(c, grad[i], p);
        T sq = square_avg[i] * rho;
        sq = sq + one_minus_rho * g * g;
        square_avg[i] = sq;
        T std = OPTIM_LOOP(sqrt)(sq + eps);
        T acc = acc_delta[i];
        T delta = OPTIM_LOOP(sqrt)(acc + eps);
        delta = delta / std;
        delta = delta * g;
        acc = acc * rho;
        acc_delta[i] = acc + one_minus_rho * delta * delta;
        param[i] = p + neg_lr * delta;
    }
}

static inline __attribute__((always_inline)) void
OPTIM_LOOP(radam_body)(const radam_scalars *s, int64_t n, char *const *ptr, optim_common common)
{
    const optim_common *c = &common;
    T *restrict param = (T *)ptr[0];
    const T *restrict grad = (const T *)ptr[1];
    T *restrict exp_avg = (T *)ptr[2];
    T *restrict exp_avg_sq = (T *)ptr[3];
    const bool decay = c->decoupled && c->weight_decay != 0, small = s->lerp.small;
    const bool rectified = s->rectified;
    const T decay_factor = (T)s->decay_factor, weight = (T)s->lerp.weight;
    const T beta2 = (T)s->beta2, one_minus_beta2 = (T)(1.0 - s->beta2);
    const T bias_correction1 = (T)s->bias_correction1, lr = (T)c->lr, eps = (T)s->eps;
    const T bias_correction2_sqrt = (T)s->bias_correction2_sqrt, rect = (T)s->rect;
    for (int64_t i = 0; i < n; i++) {
        T p = param[i];
        if (decay)
            p = p * decay_factor;
        T g = OPTIM_LOOP(grad_prepare)(c, grad[i], p);
        T m = OPTIM_LOOP(lerp)(exp_avg[i], g, small, weight);
        exp_avg[i] = m;
        T v = exp_avg_sq[i] * beta2;
        v = v + one_minus_beta2 * g * g;
        exp_avg_sq[i] = v;
        T update = m / bias_correction1 * lr;
        if (rectified) {
            T adaptive = bias_correction2_sqrt / (OPTIM_LOOP(sqrt)(v) + eps);
            update = update * adaptive * rect;
        }
        param[i] = p + (T)(-1) * update;
    }
}

static void OPTIM_LOOP(radam_loop)(const void *scalars, int64_t n, char *const *ptr)
{
    const radam_scalars *s = scalars;
    if (!optim_common_plain(&s->common)) {
        OPTIM_LOOP(radam_body)(s, n, ptr, s->common);
        return;
    }
    const optim_common plain = {.lr = s->common.lr, .weight_decay = s->common.weight_decay,
                                     .decoupled = s->common.decoupled};
    OPTIM_LOOP(radam_body)(s, n, ptr, plain);
}

#undef T
#undef OPTIM_LOOP
#undef OPTIM_CAT
#undef OPTIM_CAT_
