/* loss_ctc.c — the Connectionist Temporal Classification loss (CPU and Meta kernels):
 * _ctc_loss (each sample's negative log likelihood and the log_alpha table) and
 * _ctc_loss_backward (the gradient of log_probs), for float32 and float64.
 *
 * Note [CTC loss]
 * PyTorch's CPU kernel (aten/src/ATen/native/LossCTC.cpp), step for step, so that the
 * results and gradients are PyTorch's: log_probs (T, N, C), targets either padded (N, S)
 * or concatenated (sum of target_lengths,), int64 or int32; input_lengths and
 * target_lengths are int lists of N values. The extended target l' of a sample puts a blank
 * before, between and after its labels (2 * target_length + 1 states). In log space,
 *   alpha[0][0] = lp[0][blank], alpha[0][1] = lp[0][l'1], the rest of row 0 -inf;
 *   alpha[t][s] = logsumexp(alpha[t-1][s], alpha[t-1][s-1], alpha[t-1][s-2] when
 *                 l'[s-2] != l'[s]) + lp[t][l'[s]];
 *   nll = -logsumexp(alpha[T-1][2L], alpha[T-1][2L-1])  (-alpha[T-1][0] when L == 0; with
 *         no input, 0 for an empty target and +inf otherwise).
 * The backward runs the beta recursion from the end of each sample's input, collects
 * logsumexp over s of alpha + beta into grad[t][l'[s]], and returns
 *   grad[t][c] = (exp(lp) - exp(collected + nll - lp)) * grad_out[n]   for t < input_length,
 *   0 for t >= input_length, and 0 for the whole sample when zero_infinity and nll == inf.
 * That is the gradient PyTorch returns, which is the gradient of the logits of a
 * log_softmax before it (the exp(lp) term), not of log_probs as free inputs: gradcheck
 * holds through log_softmax, as in PyTorch. With an infinite nll and no zero_infinity the
 * gradient is NaN (inf - inf), as PyTorch's. log_alpha is (N, T, 2 * max_target_length + 1);
 * the entries no sample reaches are -inf (PyTorch leaves them unset). A target that is not
 * a label in [0, C) is an IndexError (PyTorch's CPU kernel does not check and reads out of
 * bounds). Samples are independent: both kernels split the batch across threads
 * (core/parallel.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels/ops_internal.h"
#include "kernels/reduce.h"

typedef struct {
    int64_t T, N, C, S;        /* S: 2 * max_target_length + 1 */
    int64_t blank;
    const int64_t *il, *tl;    /* input_lengths, target_lengths */
    int64_t *offsets;          /* each sample's first target (in elements of targets) */
    int64_t tstride;           /* between one sample's targets */
    bool int32_targets;
    const char *targets;       /* the contiguous targets' data (CPU only) */
} ctc_shape;

static pith_status ctc_check(const char *name, const pith_tensor *log_probs,
                             const pith_tensor *targets, pith_int_list input_lengths,
                             pith_int_list target_lengths, int64_t blank, pith_device device,
                             ctc_shape *sh)
{
    static const char c[] = "ctc_loss_allocate_outputs"; /* PyTorch 2.13's */
    if (device == PITH_CPU && (reduce_check_cpu(name, log_probs) != PITH_OK ||
                               reduce_check_cpu(name, targets) != PITH_OK))
        return pith_last_status();
    if (log_probs->dtype != PITH_FLOAT32 && log_probs->dtype != PITH_FLOAT64)
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "\"ctc_loss_cpu\" not implemented for "
                              "'%s'", reduce_torch_dtype_name(log_probs->dtype));
    if (targets->dtype != PITH_INT64 && targets->dtype != PITH_INT32)
        return pith_set_error(PITH_ERR_RUNTIME, "Expected tensor for argument #2 'targets' to "
                              "have one of the following scalar types: Long, Int; but got %s "
                              "instead (while checking arguments for %s)",
                              reduce_torch_dtype_name(targets->dtype), c);
    if (log_probs->numel == 0)
        return pith_set_error(PITH_ERR_RUNTIME, "log_probs tensor must not be empty");
    if (log_probs->ndim != 3)
        return pith_set_error(PITH_ERR_RUNTIME, "Expected %d-dimensional tensor, but got "
                              "%d-dimensional tensor for argument #1 'log_probs' (while checking "
                              "arguments for %s)", 3, log_probs->ndim, c);
    if (targets->ndim < 1 || targets->ndim > 2)
        return pith_set_error(PITH_ERR_RUNTIME, "Expected %d to %d dimensions, but got "
                              "%d-dimensional tensor for argument #2 'targets' (while checking "
                              "arguments for %s)", 1, 3, targets->ndim, c);
    sh->T = log_probs->sizes[0];
    sh->N = log_probs->sizes[1];
    sh->C = log_probs->sizes[2];
    sh->blank = blank;
    sh->int32_targets = targets->dtype == PITH_INT32;
    if (blank < 0 || blank >= sh->C)
        return pith_set_error(PITH_ERR_RUNTIME, "blank must be in label range");
    if ((int64_t)input_lengths.n != sh->N)
        return pith_set_error(PITH_ERR_RUNTIME, "input_lengths must be of size batch_size");
    if ((int64_t)target_lengths.n != sh->N)
        return pith_set_error(PITH_ERR_RUNTIME, "target_lengths must be of size batch_size");
    sh->il = input_lengths.data;
    sh->tl = target_lengths.data;
    int64_t max_target = 0, pos = 0;
    for (int64_t i = 0; i < sh->N; i++) {
        if (sh->tl[i] < 0)
            return pith_set_error(PITH_ERR_RUNTIME, "Expected target_lengths to have value at "
                                  "least 0, but got value %lld (while checking arguments for "
                                  "%s)", (long long)sh->tl[i], c);
        if (sh->tl[i] > max_target)
            max_target = sh->tl[i];
        pos += sh->tl[i];
    }
    /* targets are read contiguous: concatenated stride 1, padded (N, S) row stride S */
    if (targets->ndim == 1) {
        sh->tstride = 1;
        if (targets->sizes[0] != pos)
            return pith_set_error(PITH_ERR_RUNTIME, "Expected tensor to have size %lld at "
                                  "dimension 0, but got size %lld for argument #2 'targets' "
                                  "(while checking arguments for %s)", (long long)pos,
                                  (long long)targets->sizes[0], c);
    } else {
        sh->tstride = 1;
        if (targets->sizes[0] != sh->N)
            return pith_set_error(PITH_ERR_RUNTIME, "Expected tensor to have size %lld at "
                                  "dimension 0, but got size %lld for argument #2 'targets' "
                                  "(while checking arguments for %s)", (long long)sh->N,
                                  (long long)targets->sizes[0], c);
        if (targets->sizes[1] < max_target)
            return pith_set_error(PITH_ERR_RUNTIME, "Expected tensor to have size at least "
                                  "%lld at dimension 1, but got size %lld for argument #2 "
                                  "'targets' (while checking arguments for %s)",
                                  (long long)max_target, (long long)targets->sizes[1], c);
    }
    for (int64_t i = 0; i < sh->N; i++) {
        if (sh->il[i] < 0)
            return pith_set_error(PITH_ERR_RUNTIME, "Expected input_lengths to have value at "
                                  "least 0, but got value %lld (while checking arguments for "
                                  "%s)", (long long)sh->il[i], c);
        if (sh->il[i] > sh->T)
            return pith_set_error(PITH_ERR_RUNTIME, "Expected input_lengths to have value at "
                                  "most %lld, but got value %lld (while checking arguments for "
                                  "%s)", (long long)sh->T, (long long)sh->il[i], c);
    }
    sh->S = 2 * max_target + 1;
    sh->offsets = NULL;
    sh->targets = NULL;
    return PITH_OK;
}

/* The offsets of each sample's targets into sh->offsets (CPU; a new array), and the check
 * that every target a sample uses is a label: PyTorch reads out of bounds there, pith
 * refuses (See Note [CTC loss]). */
static pith_status ctc_offsets(ctc_shape *sh, const pith_tensor *targets)
{
    sh->offsets = malloc(sizeof(int64_t) * (size_t)(sh->N > 0 ? sh->N : 1));
    if (!sh->offsets)
        return pith_set_error(PITH_ERR_NOMEM, "ctc_loss: out of memory");
    sh->targets = tensor_data(targets);
    int64_t pos = 0;
    for (int64_t i = 0; i < sh->N; i++) {
        sh->offsets[i] = targets->ndim == 1 ? pos : i * targets->sizes[1];
        pos += sh->tl[i];
        for (int64_t k = 0; k < sh->tl[i]; k++) {
            int64_t at = sh->offsets[i] + k * sh->tstride;
            int64_t label = sh->int32_targets ? ((const int32_t *)sh->targets)[at]
                                              : ((const int64_t *)sh->targets)[at];
            if (label < 0 || label >= sh->C)
                return pith_set_error(PITH_ERR_INDEX, "ctc_loss: target %lld of sample %lld "
                                      "is %lld, out of the label range [0, %lld)",
                                      (long long)k, (long long)i, (long long)label,
                                      (long long)sh->C);
        }
    }
    return PITH_OK;
}

/* l'[s] of sample n: the blank at even s, else the target (s - 1) / 2. */
static inline int64_t ctc_prime(const ctc_shape *sh, int64_t n, int64_t s)
{
    if (s % 2 == 0)
        return sh->blank;
    int64_t at = sh->offsets[n] + (s / 2) * sh->tstride;
    return sh->int32_targets ? ((const int32_t *)sh->targets)[at]
                             : ((const int64_t *)sh->targets)[at];
}

/* The forward and backward of one sample, for one floating type. */
#define CTC_DEFINE(scalar, sfx, EXP, LOG)                                                    \
    static void ctc_alpha_##sfx(const ctc_shape *sh, const scalar *lp, scalar *la,          \
                                scalar *nll, int64_t n)                                      \
    {                                                                                        \
        const scalar neginf = -INFINITY;                                                     \
        int64_t N = sh->N, C = sh->C, S = sh->S;                                             \
        int64_t input_length = sh->il[n], target_length = sh->tl[n];                         \
        scalar *a = la + n * sh->T * S; /* a[t * S + s] */                                   \
        for (int64_t i = 0; i < sh->T * S; i++)                                              \
            a[i] = neginf;                                                                   \
        if (input_length == 0) {                                                             \
            nll[n] = target_length == 0 ? (scalar)0 : (scalar)INFINITY;                      \
            return;                                                                          \
        }                                                                                    \
        const scalar *lp0 = lp + n * C; /* lp[t][n][c] = lp0[t * N * C + c] */               \
        a[0] = lp0[sh->blank];                                                               \
        if (target_length > 0)                                                               \
            a[1] = lp0[ctc_prime(sh, n, 1)];                                                 \
        for (int64_t t = 1; t < input_length; t++) {                                         \
            const scalar *lpt = lp0 + t * N * C;                                             \
            const scalar *prev = a + (t - 1) * S;                                            \
            for (int64_t s = 0; s < 2 * target_length + 1; s++) {                            \
                int64_t prime = ctc_prime(sh, n, s);                                         \
                scalar la1 = prev[s], lamax = la1, la2, la3;                                 \
                if (s > 0) {                                                                 \
                    la2 = prev[s - 1];                                                       \
                    if (la2 > lamax)                                                         \
                        lamax = la2;                                                         \
                } else {                                                                     \
                    la2 = neginf;                                                            \
                }                                                                            \
                if (s > 1 && ctc_prime(sh, n, s - 2) != prime) {                             \
                    la3 = prev[s - 2];                                                       \
                    if (la3 > lamax)                                                         \
                        lamax = la3;                                                         \
                } else {                                                                     \
                    la3 = neginf;                                                            \
                }                                                                            \
                if (lamax == neginf)                                                         \
                    lamax = 0;                                                               \
                a[t * S + s] = LOG(EXP(la1 - lamax) + EXP(la2 - lamax) + EXP(la3 - lamax)) + \
                               lamax + lpt[prime];                                           \
            }                                                                                \
        }                                                                                    \
        const scalar *last = a + (input_length - 1) * S;                                     \
        if (target_length == 0) {                                                            \
            nll[n] = -last[0];                                                               \
        } else {                                                                             \
            scalar l1 = last[2 * target_length], l2 = last[2 * target_length - 1];           \
            scalar m = l1 > l2 ? l1 : l2;                                                    \
            m = m == neginf ? 0 : m;                                                         \
            nll[n] = -(LOG(EXP(l1 - m) + EXP(l2 - m)) + m);                                  \
        }                                                                                    \
    }                                                                                        \
                                                                                             \
    static void ctc_grad_##sfx(const ctc_shape *sh, const scalar *lp, const scalar *la,     \
                               const scalar *nll_all, const scalar *grad_out,                \
                               bool zero_infinity, scalar *lb, scalar *grad, int64_t n)      \
    {                                                                                        \
        const scalar neginf = -INFINITY;                                                     \
        int64_t T = sh->T, N = sh->N, C = sh->C, S = sh->S;                                  \
        scalar nll = nll_all[n];                                                             \
        /* grad[t][n][c] = g0[t * N * C + c]; it starts as the log of an empty sum */        \
        scalar *g0 = grad + n * C;                                                           \
        const scalar *lp0 = lp + n * C;                                                      \
        if (zero_infinity && nll == (scalar)INFINITY) {                                      \
            for (int64_t t = 0; t < T; t++)                                                  \
                for (int64_t c = 0; c < C; c++)                                              \
                    g0[t * N * C + c] = 0;                                                   \
            return;                                                                          \
        }                                                                                    \
        for (int64_t t = 0; t < T; t++)                                                      \
            for (int64_t c = 0; c < C; c++)                                                  \
                g0[t * N * C + c] = neginf;                                                  \
        const scalar *a = la + n * T * S;                                                    \
        scalar *b = lb + n * T * S;                                                          \
        int64_t input_length = sh->il[n], target_length = sh->tl[n];                         \
        if (input_length > 0) {                                                              \
            int64_t t = input_length - 1;                                                    \
            for (int64_t s = 0; s < S; s++)                                                  \
                b[t * S + s] = neginf;                                                       \
            b[t * S + 2 * target_length] = lp0[t * N * C + sh->blank];                       \
            g0[t * N * C + sh->blank] = a[t * S + 2 * target_length] +                       \
                                        b[t * S + 2 * target_length];                        \
            if (target_length > 0) {                                                         \
                int64_t prime = ctc_prime(sh, n, 2 * target_length - 1);                     \
                b[t * S + 2 * target_length - 1] = lp0[t * N * C + prime];                   \
                g0[t * N * C + prime] = a[t * S + 2 * target_length - 1] +                   \
                                        b[t * S + 2 * target_length - 1];                    \
            }                                                                                \
        }                                                                                    \
        for (int64_t t = input_length - 2; t >= 0; t--) {                                    \
            const scalar *next = b + (t + 1) * S;                                            \
            for (int64_t s = 2 * target_length; s >= 0; s--) {                               \
                int64_t prime = ctc_prime(sh, n, s);                                         \
                scalar lb1 = next[s], lbmax = lb1, lb2, lb3;                                 \
                if (s < 2 * target_length) {                                                 \
                    lb2 = next[s + 1];                                                       \
                    if (lb2 > lbmax)                                                         \
                        lbmax = lb2;                                                         \
                } else {                                                                     \
                    lb2 = neginf;                                                            \
                }                                                                            \
                if (s < 2 * target_length - 1 && ctc_prime(sh, n, s + 2) != prime) {         \
                    lb3 = next[s + 2];                                                       \
                    if (lb3 > lbmax)                                                         \
                        lbmax = lb3;                                                         \
                } else {                                                                     \
                    lb3 = neginf;                                                            \
                }                                                                            \
                if (lbmax == neginf)                                                         \
                    lbmax = 0;                                                               \
                b[t * S + s] = LOG(EXP(lb1 - lbmax) + EXP(lb2 - lbmax) + EXP(lb3 - lbmax)) + \
                               lbmax + lp0[t * N * C + prime];                               \
                scalar log_alpha_beta = a[t * S + s] + b[t * S + s];                         \
                scalar *lcab = &g0[t * N * C + prime];                                       \
                if (*lcab == neginf) {                                                       \
                    *lcab = log_alpha_beta;                                                  \
                } else {                                                                     \
                    scalar m = *lcab > log_alpha_beta ? *lcab : log_alpha_beta;              \
                    *lcab = LOG(EXP(*lcab - m) + EXP(log_alpha_beta - m)) + m;               \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        scalar gr = grad_out[n];                                                             \
        for (int64_t t = 0; t < input_length; t++)                                           \
            for (int64_t c = 0; c < C; c++) {                                                \
                scalar *res = &g0[t * N * C + c];                                            \
                scalar l = lp0[t * N * C + c];                                               \
                *res = (EXP(l) - EXP(*res + nll - l)) * gr;                                  \
            }                                                                                \
        for (int64_t t = input_length; t < T; t++)                                           \
            for (int64_t c = 0; c < C; c++)                                                  \
                g0[t * N * C + c] = 0;                                                       \
    }

CTC_DEFINE(float, f32, expf, logf)
CTC_DEFINE(double, f64, exp, log)

/* The work of one sample, for the thread count: its alpha (or beta) table. */
static int ctc_threads(const ctc_shape *sh)
{
    return parallel_threads_for(sh->N * sh->T * sh->S);
}

/* `t` contiguous (a new reference), NULL with the error set. */
static pith_tensor *ctc_contiguous(const pith_tensor *t)
{
    pith_value r[1];
    if (pith_call_contiguous(r, t) != PITH_OK)
        return NULL;
    return r[0].u.t;
}

pith_status _ctc_loss_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *log_probs,
                             const pith_tensor *targets, pith_int_list input_lengths,
                             pith_int_list target_lengths, int64_t blank, bool zero_infinity,
                             pith_device device)
{
    (void)ks;
    (void)zero_infinity; /* the forward is the same; See Note [CTC loss] */
    ctc_shape sh;
    if (ctc_check("_ctc_loss", log_probs, targets, input_lengths, target_lengths, blank,
                  device, &sh) != PITH_OK)
        return pith_last_status();
    int64_t nll_sizes[1] = {sh.N}, alpha_sizes[3] = {sh.N, sh.T, sh.S};
    pith_tensor *nll = tensor_new(1, nll_sizes, log_probs->dtype, device);
    pith_tensor *alpha = nll ? tensor_new(3, alpha_sizes, log_probs->dtype, device) : NULL;
    pith_tensor *lp = NULL, *tg = NULL;
    if (!alpha)
        goto fail;
    if (device == PITH_CPU && sh.N > 0) {
        lp = ctc_contiguous(log_probs);
        tg = lp ? ctc_contiguous(targets) : NULL;
        if (!tg || ctc_offsets(&sh, tg) != PITH_OK)
            goto fail;
        if (log_probs->dtype == PITH_FLOAT32) {
            const float *p = (const float *)tensor_data(lp);
            float *a = (float *)tensor_data(alpha), *l = (float *)tensor_data(nll);
            PITH_PARALLEL_FOR(n, sh.N, ctc_threads(&sh), ctc_alpha_f32(&sh, p, a, l, n););
        } else {
            const double *p = (const double *)tensor_data(lp);
            double *a = (double *)tensor_data(alpha), *l = (double *)tensor_data(nll);
            PITH_PARALLEL_FOR(n, sh.N, ctc_threads(&sh), ctc_alpha_f64(&sh, p, a, l, n););
        }
        free(sh.offsets);
        pith_release(lp);
        pith_release(tg);
    }
    ret[0].kind = ret[1].kind = PITH_VALUE_TENSOR;
    ret[0].u.t = nll;
    ret[1].u.t = alpha;
    return PITH_OK;
fail:
    free(sh.offsets);
    pith_release(lp);
    pith_release(tg);
    pith_release(nll);
    pith_release(alpha);
    return pith_last_status();
}

pith_status _ctc_loss_backward_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *grad,
                                      const pith_tensor *log_probs, const pith_tensor *targets,
                                      pith_int_list input_lengths, pith_int_list target_lengths,
                                      const pith_tensor *neg_log_likelihood,
                                      const pith_tensor *log_alpha, int64_t blank,
                                      bool zero_infinity, pith_device device)
{
    (void)ks;
    static const char name[] = "_ctc_loss_backward";
    ctc_shape sh;
    if (ctc_check(name, log_probs, targets, input_lengths, target_lengths, blank, device,
                  &sh) != PITH_OK)
        return pith_last_status();
    const pith_tensor *others[] = {grad, neg_log_likelihood, log_alpha};
    for (int i = 0; i < 3; i++) {
        if (device == PITH_CPU && reduce_check_cpu(name, others[i]) != PITH_OK)
            return pith_last_status();
        if (others[i]->dtype != log_probs->dtype)
            return pith_set_error(PITH_ERR_TYPE, "%s: grad, neg_log_likelihood and log_alpha "
                                  "must have log_probs' dtype (%s)", name,
                                  pith_dtype_name(log_probs->dtype));
    }
    if (grad->numel != sh.N || neg_log_likelihood->numel != sh.N || log_alpha->ndim != 3 ||
        log_alpha->sizes[0] != sh.N || log_alpha->sizes[1] != sh.T ||
        log_alpha->sizes[2] != sh.S)
        return pith_set_error(PITH_ERR_VALUE, "%s: grad and neg_log_likelihood must have %lld "
                              "values and log_alpha the shape [%lld, %lld, %lld] of _ctc_loss's",
                              name, (long long)sh.N, (long long)sh.N, (long long)sh.T,
                              (long long)sh.S);
    pith_tensor *out = tensor_new(3, log_probs->sizes, log_probs->dtype, device);
    if (!out)
        return pith_last_status();
    if (device != PITH_CPU || out->numel == 0)
        return ret_tensor(ret, out);
    pith_tensor *parts[5] = {NULL, NULL, NULL, NULL, NULL}; /* lp, tg, g, nll, alpha */
    const pith_tensor *sources[5] = {log_probs, targets, grad, neg_log_likelihood, log_alpha};
    int64_t beta_sizes[3] = {sh.N, sh.T, sh.S};
    pith_tensor *beta = NULL;
    for (int i = 0; i < 5; i++)
        if (!(parts[i] = ctc_contiguous(sources[i])))
            goto fail;
    if (!(beta = tensor_new(3, beta_sizes, log_probs->dtype, PITH_CPU)) ||
        ctc_offsets(&sh, parts[1]) != PITH_OK)
        goto fail;
    if (log_probs->dtype == PITH_FLOAT32) {
        const float *p = (const float *)tensor_data(parts[0]);
        const float *g = (const float *)tensor_data(parts[2]);
        const float *l = (const float *)tensor_data(parts[3]);
        const float *a = (const float *)tensor_data(parts[4]);
        float *b = (float *)tensor_data(beta), *o = (float *)tensor_data(out);
        PITH_PARALLEL_FOR(n, sh.N, ctc_threads(&sh),
                          ctc_grad_f32(&sh, p, a, l, g, zero_infinity, b, o, n););
    } else {
        const double *p = (const double *)tensor_data(parts[0]);
        const double *g = (const double *)tensor_data(parts[2]);
        const double *l = (const double *)tensor_data(parts[3]);
        const double *a = (const double *)tensor_data(parts[4]);
        double *b = (double *)tensor_data(beta), *o = (double *)tensor_data(out);
        PITH_PARALLEL_FOR(n, sh.N, ctc_threads(&sh),
                          ctc_grad_f64(&sh, p, a, l, g, zero_infinity, b, o, n););
    }
    free(sh.offsets);
    for (int i = 0; i < 5; i++)
        pith_release(parts[i]);
    pith_release(beta);
    return ret_tensor(ret, out);
fail:
    free(sh.offsets);
    for (int i = 0; i < 5; i++)
        pith_release(parts[i]);
    pith_release(beta);
    pith_release(out);
    return pith_last_status();
}
